import django_rq
import pytest
from django.conf import settings
from rq import SimpleWorker

from devices import roles
from pifarm import embedded_redis
from tests.workers import WorkerProcess

pytest_plugins = ["pisim.pytest_plugin", "tests.postgres", "tests.tiers", "pytester"]

PASSWORD = "correct horse battery staple"  # the test user's, not a board's


def pytest_unconfigure(config):
    """Under pytest-xdist the controller process loads the settings too, which start an
    embedded Redis in its data directory that no test uses: stopped when the run ends."""
    if settings.configured and settings.EMBEDDED_REDIS:
        embedded_redis.stop(settings.DATA_DIR)


@pytest.fixture(scope="session", autouse=True)
def suite_data_dir():
    """Whitenoise expects STATIC_ROOT; at the end, no Redis of ours is left running."""
    settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)
    yield
    if settings.EMBEDDED_REDIS:
        embedded_redis.stop(settings.DATA_DIR)


@pytest.fixture(autouse=True)
def fast_test_settings(settings):
    """Tests render templates without collectstatic, and hash test passwords fast.

    Login throttling is off: Django's test client logs in (client.login) without a request,
    which django-axes refuses. tests/test_login_lockout.py turns it on (`login_throttling`).
    """
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.AXES_ENABLED = False


def member(django_user_model, username: str, role: roles.Role):
    user = django_user_model.objects.create_user(username, password=PASSWORD)
    roles.assign(user, role)
    return user


@pytest.fixture
def user(django_user_model):
    """An admin (the role, not a superuser): allowed every page, as most view tests need."""
    return member(django_user_model, "alice", roles.ADMIN)


@pytest.fixture
def operator(django_user_model):
    return member(django_user_model, "oscar", roles.OPERATOR)


@pytest.fixture
def viewer(django_user_model):
    return member(django_user_model, "vera", roles.VIEWER)


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser("root-admin", password=PASSWORD)


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def redis_queue():
    """The real (embedded or REDIS_URL) Redis, emptied for this test."""
    if settings.EMBEDDED_REDIS:  # another test run on this data dir may have stopped it
        embedded_redis.ensure_running(settings.DATA_DIR)
    connection = django_rq.get_connection("default")
    connection.flushdb()
    yield django_rq.get_queue("default")
    connection.flushdb()


@pytest.fixture
def run_jobs(redis_queue):
    """Run every queued job with a real RQ worker, in this process, until the queue is empty.

    SimpleWorker runs jobs in-process, so they see the test's database. with_scheduler=True
    first moves scheduled jobs that are due (a busy board's next try) onto the queue.
    """

    def run(with_scheduler=False):
        worker = SimpleWorker([redis_queue], connection=redis_queue.connection)
        worker.work(burst=True, with_scheduler=with_scheduler)

    return run


@pytest.fixture
def start_worker(redis_queue):
    started = []

    def start(*, scheduler: bool = False, **environment) -> WorkerProcess:
        started.append(WorkerProcess(scheduler=scheduler, **environment))
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def fast(settings):
    """Short deadlines: a simulated Pi reboots in about a second."""
    settings.PIFARM_REBOOT_DEADLINE = 15
    settings.PIFARM_REBOOT_POLL = 0.3
    settings.PIFARM_RECONNECT_DEADLINE = 10
    settings.SSH_CONNECT_TIMEOUT = 2
    return settings
