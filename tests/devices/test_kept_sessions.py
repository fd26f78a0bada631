"""devices.remote.Kept: a job's open sessions reused while they live and reach the board as its
row says; devices.ssh: a command's round trip not held by Nagle's algorithm."""

import socket

import pytest

from devices import remote, ssh
from devices.models import Board

from .factories import make_board

pytestmark = pytest.mark.django_db


class FakeSession:
    """What Kept asks of a session: whether it is open, and to close it."""

    def __init__(self):
        self.open, self.closed = True, False

    def close(self):
        self.open, self.closed = False, True


def test_a_kept_session_is_reused_while_it_is_open():
    board, session = make_board(), FakeSession()
    kept = remote.Kept()
    kept.keep(board, session)
    assert kept.reuse(board) is session and kept.reuse(board) is session
    session.open = False  # the connection dropped
    assert kept.reuse(board) is None and session.closed


@pytest.mark.parametrize(
    "change",
    [
        {"host": "10.213.9.99"},
        {"port": 2222},
        {"username": "other"},
        {"host_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAnotherKeyOfTheBoardAfterAReinstall x"},
    ],
)
def test_a_board_reached_otherwise_now_gets_a_new_session(change):
    board, session = make_board(), FakeSession()
    kept = remote.Kept()
    kept.keep(board, session)
    Board.objects.filter(pk=board.pk).update(**change)
    assert kept.reuse(Board.objects.get(pk=board.pk)) is None and session.closed


def test_a_new_credential_gets_a_new_session():
    board, session = make_board(), FakeSession()
    kept = remote.Kept()
    kept.keep(board, session)
    board.set_credential(Board.AuthMethod.PASSWORD, "a new password")
    assert kept.reuse(board) is None and session.closed


def test_closing_the_kept_closes_every_session():
    sessions = [FakeSession(), FakeSession()]
    kept = remote.Kept()
    kept.keep(make_board("a", host="10.213.9.11"), sessions[0])
    kept.keep(make_board("b", host="10.213.9.12"), sessions[1])
    kept.close()
    assert all(session.closed for session in sessions)


def test_a_connection_to_a_board_sends_small_packets_at_once():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        sock = ssh._connect_tcp("127.0.0.1", port, 5)
        try:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            sock.close()


def test_a_forgotten_board_gets_a_new_session():
    """After a preset's application rebooted the board, its old connection may still look
    open (no FIN from a board that went down): the engine forgets it."""
    board, session = make_board(), FakeSession()
    kept = remote.Kept()
    kept.keep(board, session)
    kept.forget(board)
    assert session.closed and kept.reuse(board) is None
    kept.forget(board)  # nothing kept: nothing to do
