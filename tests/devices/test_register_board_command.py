import pytest
from django.core.management import CommandError, call_command

from devices import ssh
from devices.models import Board, BoardTask

from .factories import KEYS

pytestmark = pytest.mark.django_db


def register(node, tmp_path, **options):
    key = tmp_path / "key"
    key.write_text(node.private_key_pem)
    defaults = {"user": node.user, "key_file": key, "fingerprint": node.host_key_fingerprint}
    return call_command("register_board", "cli-pi", node.host, **{**defaults, **options})


def refused(name, host="10.213.9.9", **options):
    """register_board with a fingerprint no board has: for what is refused before it counts."""
    options = {"key_file": KEYS / "test_ed25519", "fingerprint": "SHA256:x", **options}
    return call_command("register_board", name, host, **options)


@pytest.mark.pisim
def test_it_pins_the_key_only_when_the_fingerprint_matches(pisim_farm, tmp_path, redis_queue):
    node = pisim_farm.nodes["pi4"]
    with pytest.raises(CommandError, match="nothing was registered"):
        register(node, tmp_path, fingerprint="SHA256:someone-elses-key")
    assert not Board.objects.exists()
    register(node, tmp_path)
    board = Board.objects.get(name="cli-pi")
    assert board.host_key.split()[:2] == node.host_key_public.split()[:2]
    assert board.tasks.get().kind == BoardTask.Kind.PROBE


@pytest.mark.parametrize(
    ("host", "user"),
    [("-oProxyCommand=touch /tmp/pifarm-pwned", "pi"), ("pi;id", "pi"), ("10.0.0.1", "$(id)")],
)
def test_bad_hosts_and_users_are_refused_before_any_connection(host, user, monkeypatch):
    def no_connections(*args, **kwargs):
        raise AssertionError("connected although the input was invalid")

    monkeypatch.setattr(ssh, "fetch_host_key", no_connections)
    with pytest.raises(CommandError):
        refused("bad", host, user=user)
    assert not Board.objects.exists()


def test_an_unreadable_key_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        refused("x", key_file=tmp_path / "missing")


def test_a_board_named_controller_is_refused_before_any_connection(monkeypatch):
    def no_connections(*args, **kwargs):
        raise AssertionError("connected although the name was refused")

    monkeypatch.setattr(ssh, "fetch_host_key", no_connections)
    with pytest.raises(CommandError, match="name: “controller” is what a campaign calls"):
        refused("Controller")
    assert not Board.objects.exists()
