"""The API answers every refusal in JSON, a body over the upload limit too."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def json_refusals(exc, context):
    """DRF's handler, and Django's refusals of a body over PIFARM_UPLOAD_MAX_BYTES or of more
    fields than PIFARM_UPLOAD_MAX_FIELDS, which would otherwise reach the site's HTML 400 page."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        words = f"The request body is over {limit:,} bytes (PIFARM_UPLOAD_MAX_BYTES)."
        return Response({"detail": words}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        words = f"The request has more than {limit:,} fields (PIFARM_UPLOAD_MAX_FIELDS)."
        return Response({"detail": words}, status=status.HTTP_400_BAD_REQUEST)
    return exception_handler(exc, context)


@csrf_exempt  # it changes nothing: a token's POST to a mistyped path gets this, not a CSRF page
def no_such_endpoint(request):
    """A mistyped path under /api/v1/ gets JSON too: a script would not read the 404 page."""
    words = f"There is no {request.path} in the API: {reverse('api:docs')} lists what there is."
    return JsonResponse({"detail": words}, status=404)
