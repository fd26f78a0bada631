"""Middleware of the project as a whole (the apps keep their own)."""

from django.utils.cache import patch_cache_control


def no_store_for_logged_in_users(get_response):
    """Pages a logged-in user sees name boards, hosts and jobs: no browser or proxy cache keeps
    them (the back button after logging out on a shared lab PC shows nothing).

    Static files never get here: whitenoise answers them earlier in the chain, cacheable.
    """

    def middleware(request):
        response = get_response(request)
        if request.user.is_authenticated:
            patch_cache_control(response, no_store=True)
        return response

    return middleware
