"""Users in the admin: an admin by role manages users and their roles, not superusers.

The admin role may change users (devices/roles.py); without this, changing a user would let
it make anyone a superuser, hand out single permissions beyond the roles, or set a superuser's
password and log in as them.
"""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

User = get_user_model()


class RoleUserAdmin(UserAdmin):
    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if request.user.is_superuser:
            return fields
        return [*fields, "is_superuser", "user_permissions"]  # a role is a group, no more

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and _below(request.user, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and _below(request.user, obj)


def _below(user, obj) -> bool:
    return obj is None or user.is_superuser or not obj.is_superuser


admin.site.unregister(User)
admin.site.register(User, RoleUserAdmin)
