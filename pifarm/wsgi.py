"""WSGI entry point for pifarm (gunicorn pifarm.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pifarm.settings")
application = get_wsgi_application()
