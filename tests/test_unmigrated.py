"""A data directory nobody has migrated yet: every command says what to do, none prints a
traceback (manage.py and pifarm/dbready.py)."""

import pytest

from pifarm import embedded_redis
from tests.processes import manage

MIGRATE_FIRST = "run `manage.py migrate` first"
PASSWORD_FILE = "{password file}"  # a file of the test's, written before the command runs

pytestmark = pytest.mark.slow  # each runs manage.py in a process of its own


@pytest.fixture(autouse=True)
def no_redis_left(tmp_path):
    """A command's settings start the embedded Redis in its data directory: stopped after."""
    yield
    embedded_redis.stop(tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["benchmarks"],
        ["benchmarks", "--json"],
        ["campaign", "status", "7c1e3c56-4a5c-4c55-9f4b-3c0e6f1d2a10"],
        ["campaign", "start", "-"],
        ["createuser", "ada", "--role", "viewer", "--no-input"],
        ["healthcheck"],
        ["healthcheck", "--every", "60"],
        [
            "register_board",
            "bench-1",
            "127.0.0.1",
            "--no-probe",
            "--fingerprint",
            "SHA256:x",
            "--password-file",
            PASSWORD_FILE,
        ],
        ["createsuperuser", "--no-input", "--username", "root-admin", "--email", "a@b.example"],
        ["changepassword", "nobody"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_command_on_an_unmigrated_data_directory_says_to_migrate(tmp_path, argv):
    spec = '{"name": "n", "boards": ["b"], "benchmarks": [{"name": "sha1sum"}]}'
    password = tmp_path / "password"
    password.write_text("raspberry\n")
    argv = [str(password) if arg == PASSWORD_FILE else arg for arg in argv]
    done = manage(tmp_path, *argv, stdin=spec)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert MIGRATE_FIRST in done.stderr
    assert "the database lacks" in done.stderr


def test_commands_that_need_no_database_work_on_an_unmigrated_data_directory(tmp_path):
    config = tmp_path / "config.txt"
    config.write_text("arm_freq=1500\n")
    checked = manage(tmp_path, "configtxt", "validate", str(config), "--board", "pi4")
    assert checked.returncode == 0, checked.stderr
    assert "0 error(s), 0 warning(s)" in checked.stderr
    catalog = manage(tmp_path, "benchmarks", "--markdown")
    assert catalog.returncode == 0, catalog.stderr
    assert catalog.stdout.startswith("# The benchmark catalog")


def test_migrate_then_the_same_command_works(tmp_path):
    assert manage(tmp_path, "migrate", "--no-input", "-v0").returncode == 0
    listed = manage(tmp_path, "benchmarks")
    assert listed.returncode == 0, listed.stderr
    assert "sha1sum (v2)" in listed.stdout
