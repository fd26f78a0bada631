"""Every page checks a permission of devices.roles; a refusal says which role would do."""

from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, JsonResponse
from django.shortcuts import render

from devices import roles


def permission_required(permission: str, *, json: bool = False):
    """Log in first, then hold permission, or get the 403 page naming the role that grants it.

    JSON endpoints answer every refusal, not logged in included, with a JSON 403 (and an
    unknown record with a JSON 404): the pages that poll them cannot follow a redirect to a
    login form, nor read an HTML page.
    """

    def decorator(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not request.user.has_perm(permission):
                if json:
                    return JsonResponse({"error": _json_refusal(request, permission)}, status=403)
                raise roles.RoleRequired(permission)
            if not json:
                return view(request, *args, **kwargs)
            try:
                return view(request, *args, **kwargs)
            except Http404:  # the polling script reads JSON, also when the record is gone
                return JsonResponse({"error": "There is no such record."}, status=404)

        return checked if json else login_required(checked)

    return decorator


def _json_refusal(request, permission: str) -> str:
    if not request.user.is_authenticated:
        return "Log in again to follow this."
    role = roles.role_for(permission)
    return f"This needs the {role.name if role else 'superuser'} role."


def permission_denied(request, exception):
    """The site's 403 page (handler403): what is needed, what the user has, whom to ask."""
    needed = getattr(exception, "role", None)
    user = request.user
    context = {
        "needed_role": needed,
        "needs_superuser": getattr(exception, "permission", None) is not None and needed is None,
        "current_role": roles.role_of(user) if user.is_authenticated else None,
        # Whether there is an admin to ask, not who: the page is shown to anyone refused.
        "has_admins": _admins().exists(),
    }
    return render(request, "403.html", context, status=403)


def _admins():
    return get_user_model().objects.filter(
        Q(groups__name=roles.ADMIN.group) | Q(is_superuser=True), is_active=True
    )
