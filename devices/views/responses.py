"""JSON for the pages' polling scripts."""

from django.core.serializers.json import DjangoJSONEncoder
from django.http import JsonResponse

# What json_script escapes: board output (an error, a status reason) may hold markup, and this
# way none of it reaches the browser as "<script>", whatever reads the JSON.
_HTML_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


class _HTMLSafeEncoder(DjangoJSONEncoder):
    def encode(self, o) -> str:
        return super().encode(o).translate(_HTML_ESCAPES)


def json_response(data: dict) -> JsonResponse:
    return JsonResponse(data, encoder=_HTMLSafeEncoder)
