"""The SSH seam against real OpenSSH servers in the simulated farm."""

import threading
import time

import paramiko
import pytest

from devices import ssh
from devices.credentials import Credential
from tests.devices.simfarm import target_for

pytestmark = pytest.mark.pisim

QUICK = ssh.Timeouts(connect=2, banner=2, auth=2)


def test_it_fetches_the_host_key_the_node_really_has(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    offered = ssh.fetch_host_key(node.host, node.port, QUICK)
    assert offered.split()[:2] == node.host_key_public.split()[:2]
    assert ssh.fingerprint(offered) == node.host_key_fingerprint


def test_it_logs_in_with_a_key_and_with_a_password(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    for credential in (
        Credential("key", node.private_key_pem),
        Credential("password", node.password),
    ):
        with ssh.Session(target_for(node, credential), QUICK) as session:
            assert session.run(["id", "-un"], 5).text.strip() == node.user


def test_a_wrong_password_is_a_clear_auth_error(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    with pytest.raises(ssh.AuthFailed, match="refused the password"):
        ssh.Session(target_for(node, Credential("password", "wrong")), QUICK).connect()


@pytest.mark.parametrize(
    "value",
    [
        "a; touch /tmp/pifarm-pwned",
        "$(touch /tmp/pifarm-pwned)",
        "`touch /tmp/pifarm-pwned`",
        "'; touch /tmp/pifarm-pwned; '",
        '"; touch /tmp/pifarm-pwned; "',
        "line\ntouch /tmp/pifarm-pwned",
        "-n",
        "--help",
    ],
)
def test_every_argument_arrives_as_one_literal_word(pisim_farm, value):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        result = session.run(["printf", "%s", value], 5)
        assert result.stdout.decode() == value
        result = session.run(["printf", "%s", value], 5, sudo=True)
        assert result.stdout.decode() == value
        assert not session.run(["test", "-e", "/tmp/pifarm-pwned"], 5).ok


def test_large_output_on_both_streams_does_not_hang_and_is_capped(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    script = "head -c 8000000 /dev/zero; head -c 8000000 /dev/zero >&2; exit 7"
    with ssh.Session(target_for(node), QUICK) as session:
        started = time.monotonic()
        result = session.run(["sh", "-c", script], 30, output_cap=100_000)
    assert time.monotonic() - started < 30
    assert result.exit_status == 7
    assert len(result.stdout) == len(result.stderr) == 100_000
    assert result.stdout_truncated and result.stderr_truncated


def test_large_output_arrives_whole_every_time(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    expected = "".join(f"{n}\n" for n in range(1, 200_001)).encode()
    with ssh.Session(target_for(node), QUICK) as session:
        for _ in range(5):
            result = session.run(["seq", "1", "200000"], 30, output_cap=4_000_000)
            assert result.stdout == expected
            assert not result.stdout_truncated


def test_a_command_killed_by_a_signal_says_so(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        with pytest.raises(ssh.CommandKilled, match="killed by a signal"):
            session.run(["sh", "-c", "kill -SEGV $$"], 10)
        # and a command that exits 124 by itself is not mistaken for a timeout
        assert session.run(["sh", "-c", "exit 124"], 10).exit_status == 124


def test_a_command_ignoring_term_is_still_stopped_and_reported_as_a_timeout(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        with pytest.raises(ssh.CommandTimeout):
            session.run(["sh", "-c", "trap '' TERM; sleep 30"], 1)


def test_a_background_child_holding_stdout_does_not_hang_the_call(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        started = time.monotonic()
        result = session.run(["sh", "-c", "sleep 20 & echo started"], 30)
        assert result.text == "started\n"
        assert time.monotonic() - started < 10
        session.run(["pkill", "-x", "sleep"], 5)


def test_a_command_past_its_deadline_is_stopped_on_the_board(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        started = time.monotonic()
        with pytest.raises(ssh.CommandTimeout, match="within 1 s"):
            session.run(["sleep", "30"], 1)
        assert time.monotonic() - started < 10
        # the remote `timeout` stopped it: no sleep 30 left behind
        assert not session.run(["pgrep", "-x", "-f", "sleep 30"], 5).ok


def test_sudo_runs_as_root_without_a_password(pisim_farm):
    node = pisim_farm.nodes["pi3"]
    with ssh.Session(target_for(node), QUICK) as session:
        assert session.run(["id", "-u"], 5, sudo=True).text.strip() == "0"


def test_atomic_write_keeps_a_backup_and_the_right_bytes(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    path = "/home/pi/atomic-test.txt"
    with ssh.Session(target_for(node), QUICK) as session:
        assert session.write_file_atomic(path, b"first\n", sudo=False) == ""
        backup = session.write_file_atomic(path, b"second \x00\xff\n", sudo=True)
        assert session.run(["cat", path], 5).stdout == b"second \x00\xff\n"
        assert session.run(["cat", backup], 5).stdout == b"first\n"
        # sudo kept the file's owner: still pi's, not root's
        assert session.run(["stat", "-c", "%U", path], 5).text.strip() == node.user


def test_two_writes_in_one_second_keep_two_backups(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    path = "/home/pi/two-writes.txt"
    with ssh.Session(target_for(node), QUICK) as session:
        session.write_file_atomic(path, b"v1\n", sudo=False)
        first = session.write_file_atomic(path, b"v2\n", sudo=False)
        second = session.write_file_atomic(path, b"v3\n", sudo=False)
        assert first != second
        assert session.run(["cat", first], 5).stdout == b"v1\n"
        assert session.run(["cat", second], 5).stdout == b"v2\n"


def test_atomic_write_handles_odd_directory_names(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    odd = "/home/pi/odd \\ dir $(x) 'q'"
    with ssh.Session(target_for(node), QUICK) as session:
        assert session.run(["mkdir", "-p", odd], 5).ok
        session.write_file_atomic(f"{odd}/f", b"content\n", sudo=True)
        assert session.run(["cat", f"{odd}/f"], 5).stdout == b"content\n"
        leftovers = session.run(["sh", "-c", 'ls -A -- "$1"', "sh", odd], 5).text.split()
        assert leftovers == ["f"]


def test_a_failed_write_reports_the_boards_own_error(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with ssh.Session(target_for(node), QUICK) as session:
        with pytest.raises(ssh.SSHError, match="No such file or directory"):
            session.write_file_atomic("/home/pi/no/such/dir/f", b"x" * 8_000_000, sudo=False)


def test_an_unpinned_board_is_never_logged_into(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    with pytest.raises(ssh.HostKeyMismatch, match="no host key is pinned"):
        ssh.Session(ssh.Target(node.host, node.port, node.user, Credential("key", "x"), ""))


@pytest.fixture
def auth_spy(monkeypatch):
    """Records every credential paramiko is asked to send."""
    sent = []
    for name in ("auth_publickey", "auth_password"):
        original = getattr(paramiko.Transport, name)

        def spy(self, *args, _original=original, _name=name, **kwargs):
            sent.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(paramiko.Transport, name, spy)
    return sent


def test_a_changed_host_key_is_refused_before_any_credential_is_sent(pisim_node_factory, auth_spy):
    node = pisim_node_factory()
    pinned = node.host_key_public
    with ssh.Session(target_for(node, host_key=pinned), QUICK) as session:
        assert session.run(["true"], 5).ok
    assert auth_spy == ["auth_publickey"]
    node.change_host_key()
    auth_spy.clear()
    with pytest.raises(ssh.HostKeyMismatch, match="has changed") as refused:
        ssh.Session(target_for(node, host_key=pinned), QUICK).connect()
    assert auth_spy == []
    assert ssh.fingerprint(pinned) in str(refused.value)
    assert node.host_key_fingerprint in str(refused.value)


def test_an_unreachable_board_fails_clearly_within_its_timeout(pisim_node_factory):
    node = pisim_node_factory()
    node.set_unreachable(True)
    with pytest.raises(ssh.ConnectFailed, match="did not answer within 2 s"):  # our deadline's
        ssh.Session(target_for(node), QUICK).connect()


def test_sshd_killed_mid_command_gives_a_clear_error_and_no_hang(pisim_node_factory):
    node = pisim_node_factory()
    with ssh.Session(target_for(node), QUICK) as session:
        killer = threading.Timer(1.0, node.kill_sshd)
        killer.start()
        started = time.monotonic()
        with pytest.raises(ssh.ConnectionLost):
            session.run(["sleep", "60"], 90)
        killer.join()
    assert time.monotonic() - started < 10


def test_a_board_cut_off_mid_command_is_said_to_give_no_answer(pisim_node_factory):
    """No FIN, no reset: the board's packets stop (a cable pulled, a hung kernel). Past the
    command's own limit and the board's grace, the session gives up, saying so, not that the
    command was stopped (nothing could stop it) nor only that it was slow."""
    node = pisim_node_factory()
    with ssh.Session(target_for(node), QUICK) as session:
        cutter = threading.Timer(0.5, node.set_unreachable)
        cutter.start()
        started = time.monotonic()
        with pytest.raises(ssh.NoAnswer) as lost:
            session.run(["sleep", "30"], 1)
        cutter.join()
    waited = time.monotonic() - started
    assert str(lost.value) == (
        f"the board said nothing of the command for {1 + ssh.KILL_GRACE_S + 2:g} s, past its own "
        "time limit: it hangs, or the network to it is cut"
    )
    assert isinstance(lost.value, ssh.ConnectionLost)  # the board is marked offline
    assert waited < 1 + ssh.KILL_GRACE_S + 2 + 3, waited
