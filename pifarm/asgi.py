"""ASGI entry point for pifarm."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pifarm.settings")
application = get_asgi_application()
