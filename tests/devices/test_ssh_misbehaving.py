"""The SSH seam against servers that misbehave: only SSHErrors come out, clearly worded, and
the words say which deadline ended the wait (their time is not asserted: a loaded machine's
threads start late). The servers are loopback ones of our own (misbehaving_ssh)."""

import pytest

from devices import ssh
from devices.credentials import Credential

from . import misbehaving_ssh as bad
from .factories import TEST_PRIVATE_KEY

QUICK = ssh.Timeouts(connect=1, banner=1, auth=1)


def target(port: int, host_key: str = "", credential=None) -> ssh.Target:
    return ssh.Target(
        host="127.0.0.1",
        port=port,
        username="pi",
        credential=credential or Credential("key", TEST_PRIVATE_KEY),
        host_key=host_key or bad.server_host_key(),
    )


def connect(port: int, **kwargs) -> None:
    session = ssh.Session(target(port, **kwargs), QUICK)
    try:
        session.connect()
    finally:
        session.close()


HANDSHAKE_FAULTS = [
    (bad.silent, "accepted the connection but sent no SSH banner within 1 s"),
    (bad.banner_then_close, "closed the connection during the SSH key exchange"),
    (bad.banner_then_silent, "sent its SSH banner but did not finish the key exchange within 1 s"),
    (bad.garbage_then_close, "closed the connection before sending an SSH banner"),
    (bad.garbage_flood, "answered, but not with an SSH banner"),
    (bad.close_mid_key_exchange, "closed the connection during the SSH key exchange"),
]


@pytest.mark.parametrize(("behaviour", "words"), HANDSHAKE_FAULTS)
@pytest.mark.parametrize("entry", ["fetch_host_key", "connect"])
def test_a_handshake_that_goes_wrong_is_a_clear_connect_failure(behaviour, words, entry):
    with bad.loopback_server(behaviour) as port:
        with pytest.raises(ssh.ConnectFailed) as failed:
            if entry == "fetch_host_key":
                ssh.fetch_host_key("127.0.0.1", port, QUICK)
            else:
                connect(port)
    assert words in str(failed.value)
    assert str(failed.value).startswith(f"127.0.0.1:{port} ")


def test_a_board_that_hangs_up_at_login_lost_the_connection():
    with bad.loopback_server(bad.paramiko_server(hang_up_at="login")) as port:
        with pytest.raises(ssh.ConnectionLost, match="closed the connection during login"):
            connect(port, credential=Credential("password", "secret-password-123"))


def test_the_message_of_a_failed_login_holds_no_secret():
    with bad.loopback_server(bad.paramiko_server(hang_up_at="login")) as port:
        with pytest.raises(ssh.SSHError) as failed:
            connect(port, credential=Credential("password", "secret-password-123"))
    assert "secret-password-123" not in str(failed.value)


def test_a_connection_cut_while_stdin_flows_is_connection_lost():
    with bad.loopback_server(bad.paramiko_server(hang_up_at="command")) as port:
        with ssh.Session(target(port), QUICK) as session:
            with pytest.raises(ssh.ConnectionLost):
                session.write_file_atomic("/boot/config.txt", b"x" * 8_000_000, sudo=True)


def test_a_pinned_key_of_an_unknown_type_is_refused_before_anything_is_sent():
    with bad.loopback_server(bad.silent) as port:
        with pytest.raises(ssh.HostKeyMismatch, match="pinned host key is of a type"):
            connect(port, host_key="ssh-dss AAAAB3NzaC1kc3MAAACBAP")


def test_a_blank_pinned_key_counts_as_no_pin():
    with pytest.raises(ssh.HostKeyMismatch, match="no host key is pinned"):
        ssh.Session(target(22, host_key="  \n"), QUICK)


def test_a_board_without_a_key_of_the_pinned_type_is_a_changed_host_key():
    pinned = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBE"
    with bad.loopback_server(bad.paramiko_server(hang_up_at="command")) as port:
        with pytest.raises(ssh.HostKeyMismatch, match="has no ecdsa-sha2-nistp256 host key"):
            connect(port, host_key=pinned)
