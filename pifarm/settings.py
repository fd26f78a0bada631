"""pifarm settings, read from the environment (see .env.example for every variable).

Defaults make a clean checkout run on one machine: SQLite and an embedded Redis in
PIFARM_DATA_DIR. DATABASE_URL and REDIS_URL switch to shared servers for a team.
"""

import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url
from cryptography.fernet import Fernet
from csp.constants import NONE, SELF, UNSAFE_HASHES
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

from pifarm import embedded_redis
from pifarm.env import env_bool, env_int, env_list, env_networks, env_str, persistent_secret

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("PIFARM_DATA_DIR", str(BASE_DIR / "var"))).resolve()
if re.fullmatch(r"gw\d+", xdist_worker := os.environ.get("PYTEST_XDIST_WORKER", "")):
    # `make test` runs the suite in parallel (pytest-xdist): each worker process gets a data
    # directory of its own, so its embedded Redis, which tests empty, and its SQLite are its own.
    DATA_DIR = DATA_DIR / xdist_worker

DEBUG = env_bool("PIFARM_DEBUG", False)
SECRET_KEY = persistent_secret("PIFARM_SECRET_KEY", DATA_DIR / "secret_key", get_random_secret_key)
ALLOWED_HOSTS = env_list("PIFARM_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("PIFARM_CSRF_TRUSTED_ORIGINS", "")

# Board credentials (SSH keys, passwords) are encrypted with this Fernet key. Several keys,
# comma-separated, allow rotation: the first encrypts, all decrypt.
CREDENTIAL_KEYS = persistent_secret(
    "PIFARM_CREDENTIAL_KEY",
    DATA_DIR / "credential_key",
    lambda: Fernet.generate_key().decode(),
).split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_rq",
    "axes",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here: labs are often offline
    "devices",
    "benchmarks",
    "pifarm",  # the project level: the demo command and its supervisor
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "benchmarks.middleware.shared_pages_not_indexed",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "pifarm.lockout.refuse_locked_addresses",  # before any password is checked
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "pifarm.middleware.no_store_for_logged_in_users",
    # Last, as django-axes asks: it turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "pifarm.urls"
WSGI_APPLICATION = "pifarm.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database(url: str | None) -> dict:
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "pifarm.sqlite3"}
    try:
        config = dj_database_url.parse(url, conn_max_age=60)
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
    if config.get("ENGINE") not in {
        "django.db.backends.postgresql",
        "django.db.backends.sqlite3",
    }:
        raise ImproperlyConfigured("DATABASE_URL must be a postgres:// or sqlite:// URL")
    return config


DATABASES = {"default": _database(env_str("DATABASE_URL") or None)}
if "sqlite3" in DATABASES["default"]["ENGINE"]:
    # Web server and workers write concurrently: wait for the lock instead of failing, and use
    # the write-ahead log so that readers never wait for a writer.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not memory, so that worker processes started by the tests see the test data.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _redis_url(url: str | None) -> str:
    if not url:
        return embedded_redis.url(DATA_DIR)
    if urlparse(url).scheme not in {"redis", "rediss", "unix"}:
        raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://")
    return url


REDIS_URL = _redis_url(env_str("REDIS_URL") or None)
EMBEDDED_REDIS = not env_str("REDIS_URL")

# Queues: "default" for work any worker can do; boards name the queue of the worker that can
# reach them (PIFARM_QUEUES lists the extra ones, e.g. "bench-a,bench-b").
RQ_QUEUE_NAMES = ["default", *env_list("PIFARM_QUEUES", "")]
RQ_QUEUES = {name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 900} for name in RQ_QUEUE_NAMES}
RQ = {"WORKER_CLASS": "pifarm.rq_worker.Worker"}  # its scheduler restarted within seconds

# SSH to boards: every step has a deadline (seconds).
SSH_CONNECT_TIMEOUT = env_int("PIFARM_SSH_CONNECT_TIMEOUT", 10, minimum=1)
SSH_COMMAND_TIMEOUT = env_int("PIFARM_SSH_COMMAND_TIMEOUT", 60, minimum=1)
HEALTH_CHECK_INTERVAL = env_int("PIFARM_HEALTH_CHECK_INTERVAL", 60, minimum=5)
# Runs' raw telemetry (the samples over time) is removed this many days after they finished,
# in the healthcheck rounds; measurements, raw output and what ran stay. 0 keeps it all.
PIFARM_TELEMETRY_DAYS = env_int("PIFARM_TELEMETRY_DAYS", 365, minimum=0, maximum=36_500)
# Applying a preset: how long a board may take to come back from a reboot, how often to look,
# and how long to keep trying to reconnect after a dropped connection (seconds).
PIFARM_REBOOT_DEADLINE = env_int("PIFARM_REBOOT_DEADLINE", 180, minimum=10)
PIFARM_REBOOT_POLL = env_int("PIFARM_REBOOT_POLL", 3, minimum=1)
PIFARM_RECONNECT_DEADLINE = env_int("PIFARM_RECONNECT_DEADLINE", 60, minimum=5)
# A job that finds its board driven by another gives its worker back and tries again this
# often, for at most PIFARM_BUSY_WAIT (about the longest application) before it gives up.
PIFARM_BUSY_RETRY = env_int("PIFARM_BUSY_RETRY", 5, minimum=1)
PIFARM_BUSY_WAIT = env_int("PIFARM_BUSY_WAIT", 900, minimum=1)
# How many of pifarm's config.txt backups a board keeps next to config.txt (the database keeps
# every one); older ones are removed after each successful write.
PIFARM_BOARD_BACKUPS_KEPT = env_int("PIFARM_BOARD_BACKUPS_KEPT", 5, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes refuses a login after PIFARM_LOGIN_FAILURE_LIMIT failures for one user name
# from one address, for PIFARM_LOGIN_COOLOFF_MINUTES after the last one; an admin unlocks
# sooner by deleting the attempt in the admin (Axes > Access attempts).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("PIFARM_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("PIFARM_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# Per user name and address together: a stranger guessing one account from one address
# cannot lock its owner out everywhere, and other users at that address are not affected.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "pifarm.lockout.login_refused"
# Behind a reverse proxy every login comes from its address: name the proxy (addresses or
# networks, comma-separated) and its X-Forwarded-For is read for the client's (pifarm.lockout).
PIFARM_TRUSTED_PROXIES = env_networks("PIFARM_TRUSTED_PROXIES")
# Where pifarm's pages are, for the addresses commands print (`campaign start` ends with its
# campaign's page): the demo's by default.
PIFARM_SITE_URL = env_str("PIFARM_SITE_URL", "http://127.0.0.1:8000")
AXES_CLIENT_IP_CALLABLE = "pifarm.lockout.client_address"
# An address whose logins failed this often under any user names is refused as a whole, before
# a password is checked, for the cool-off: a lab's people mistype far fewer in 15 minutes.
PIFARM_LOGIN_ADDRESS_LIMIT = env_int("PIFARM_LOGIN_ADDRESS_LIMIT", 30, minimum=5)
# A lab works in days: a login lasts PIFARM_SESSION_HOURS, not Django's two weeks.
SESSION_COOKIE_AGE = env_int("PIFARM_SESSION_HOURS", 12, minimum=1) * 3600

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "devices:dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("PIFARM_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # plotly.js from the pinned plotly package, as static/vendor/plotly.min.js
    "benchmarks.plotly_static.PlotlyFinder",
]
STATIC_ROOT = DATA_DIR / "staticfiles"
# Files browsers ask for at the site's root (favicon.ico), served by whitenoise as they are.
WHITENOISE_ROOT = BASE_DIR / "webroot"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Behind HTTPS (a team server) turn these on; the demo on localhost runs plain HTTP.
HTTPS = env_bool("PIFARM_HTTPS", False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = 31536000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Everything pifarm serves comes from its own origin (plotly.js too): no inline scripts or
# style attributes, so markup that slips into a page from a board cannot run or restyle it.
# The RQ dashboard (django-rq 4.2) styles a few pages inline: these hashes allow exactly those
# rules and nothing else. Should an upgrade change them, those pages lose a margin or a width
# (and the browser test, which walks the queue overview and the confirmations, fails).
RQ_DASHBOARD_INLINE_STYLES = [
    "'sha256-KKjBAGERxCMkpnyRzzx30Ft5uJyWEE4TggCMJ9MJhMw='",  # job and queue confirmations
    "'sha256-3HT4TFoCN6UZR/IBz5IGZ/l8VEv+BIOqCR558/XA3Jg='",  # job result, worker details
    "'sha256-v5MY146GJAjl1QbCe2MklIw9r0xCNOWCEWSPd53tlgQ='",  # queue overview
    "'sha256-k21rurKGtu5SGB1OFBbco10qy802mANKUYnLClIu1eQ='",  # style="margin-top: 20px;"
    "'sha256-BSTKIYoPCaklkJ9YS/ZVYuKW8e+DG8jZJCXznBzHjgg='",  # style="display: inline-block;"
    "'sha256-blvLUW3UscWqsXGByNOqdBboM+ShWAuugp2mC/wbafU='",  # one result of a job
]
# The API's docs page adds data: images, for Swagger UI's icons (benchmarks.api.urls).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_HASHES, *RQ_DASHBOARD_INLINE_STYLES],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# The JSON API for scripts (benchmarks.api): a token per person, or the browser's session (with
# its CSRF check) for the docs page. JSON only; lists in pages of 100, up to 1,000 on request.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "benchmarks.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["benchmarks.api.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "benchmarks.api.pagination.Pages",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "benchmarks.api.errors.json_refusals",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "pifarm API",
    "DESCRIPTION": "Boards, presets, campaigns, runs and measurements, for scripts. "
    "Send a token made on the API tokens page as `Authorization: Bearer <token>`.",
    "VERSION": "1",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Three models call their choices "state": each gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "CampaignState": "benchmarks.models.Campaign.State",
        "LaneState": "benchmarks.models.Lane.State",
        "RunState": "benchmarks.models.Run.State",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "benchmarks.api.schema.add_refusals_and_address_fields",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

# Django's request limits: a body over this many bytes, or with more fields, gets a 400 page
# that names the limit (devices.views.errors). A preset's lines stop at 64 KiB in the form
# itself, which keeps the text.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("PIFARM_UPLOAD_MAX_BYTES", 2_621_440, minimum=65_536)
DATA_UPLOAD_MAX_NUMBER_FIELDS = env_int("PIFARM_UPLOAD_MAX_FIELDS", 1000, minimum=100)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"refusals": {"()": "pifarm.logfilters.RefusalsWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("PIFARM_LOG_LEVEL", "INFO")},
    # paramiko logs every transport event at INFO, axes every command's start and every
    # good login; keep their warnings (failed logins, lockouts) only. paramiko's transport also
    # logs each broken handshake with a traceback (a board still rebooting makes dozens); the
    # SSH seam turns each into an SSHError that its job records, so those are not kept.
    "loggers": {
        "paramiko": {"level": "WARNING"},
        "paramiko.transport": {"level": "CRITICAL"},
        "axes": {"level": "WARNING"},
        # apprise names the URL it failed to reach, and a target's URL often holds its token:
        # benchmarks.notify logs each failure by the target's name instead. The HTTP clients
        # under it log each request's path and query at DEBUG.
        "apprise": {"level": "CRITICAL"},
        "urllib3": {"level": "WARNING"},
        "requests": {"level": "WARNING"},
        "django.request": {"filters": ["refusals"]},
    },
}
