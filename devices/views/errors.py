"""Error pages that tell the user what to do, not only the status code."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.shortcuts import render


def bad_request(request, exception):
    """Django's 400, naming the limit when a form was too large or had too many fields."""
    context = {
        "too_big": isinstance(exception, RequestDataTooBig),
        "too_many_fields": isinstance(exception, TooManyFieldsSent),
        "max_kib": settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024,
        "max_fields": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS,
    }
    return render(request, "400.html", context, status=400)
