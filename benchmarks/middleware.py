"""Middleware of the benchmarks app."""

from django.utils.cache import patch_cache_control

from benchmarks.sharing import PATH

NOT_INDEXED = "noindex, nofollow"


def shared_pages_not_indexed(get_response):
    """Every answer under a share link's path (its page, its exports, a 404 of a mistyped
    path, a 403 of a refused POST, a 405, a 410) asks not to be indexed, cached or sent on as
    a Referer: the token is in the URL, and a revoked link must not live on in a cache.

    Before the CSRF middleware, so that its 403 gets them too."""

    def middleware(request):
        response = get_response(request)
        if request.path.startswith(PATH):
            response["X-Robots-Tag"] = NOT_INDEXED
            response["Referrer-Policy"] = "no-referrer"
            patch_cache_control(response, no_store=True)
        return response

    return middleware
