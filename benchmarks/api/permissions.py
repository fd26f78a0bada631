"""Each endpoint needs the permission of devices.roles that its page needs."""

from rest_framework import permissions

from devices import roles


class HasRolePermission(permissions.BasePermission):
    """The view's read_permission for GET, its write_permission for anything else.

    A refusal names the role needed and the user's own, as the pages' 403 does."""

    def has_permission(self, request, view):
        if not request.user or not request.user.is_authenticated:
            return False  # DRF answers 401, with how to authenticate
        # A read-only endpoint checks its read permission for every method, and then answers
        # a POST with 405, not with a 403 asking for a role that would not help.
        writes = request.method not in permissions.SAFE_METHODS and view.write_permission
        needed = view.write_permission if writes else view.read_permission
        if request.user.has_perm(needed):
            return True
        role = roles.role_for(needed)
        current = roles.role_of(request.user)
        self.message = (
            f"This needs the {role.name if role else 'superuser'} role; "
            f"{f'yours is {current.name}' if current else 'you have no role'}. "
            "An admin can change it."
        )
        return False
