"""Logging filters that settings.LOGGING names."""

import logging

from django.core.exceptions import PermissionDenied


class RefusalsWithoutTraceback(logging.Filter):
    """A refused page (403) is one line, not a traceback: any logged-in user can cause them,
    and twenty lines each would let them flood the log. The line keeps the path."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], PermissionDenied):
            record.exc_info = None
            record.exc_text = None
        return True
