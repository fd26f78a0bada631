"""Open SSH sessions to registered boards, with the deadlines from settings."""

from django.conf import settings

from devices import ssh
from devices.models import Board


def timeouts() -> ssh.Timeouts:
    seconds = settings.SSH_CONNECT_TIMEOUT
    return ssh.Timeouts(connect=seconds, banner=seconds, auth=seconds)


def session(board: Board) -> ssh.Session:
    target = ssh.Target(
        host=board.host,
        port=board.port,
        username=board.username,
        credential=board.credential(),
        host_key=board.host_key,
    )
    return ssh.Session(target, timeouts())


class Kept:
    """Sessions kept open between the steps of one job that drives boards (a lane's runs in a
    row), one per board: the next step reuses it while the connection lives and the board is
    still reached as it was (the same address, user, pinned key and credential). Closed with
    the job."""

    def __init__(self):
        self._open: dict[int, tuple[tuple, ssh.Session]] = {}

    @staticmethod
    def _how(board: Board) -> tuple:
        return (board.host, board.port, board.username, board.host_key, board.credential_ciphertext)

    def reuse(self, board: Board) -> ssh.Session | None:
        """The board's kept session, if it is still open and still reaches the board as the
        board's row says now; otherwise it is closed and None is returned."""
        how, session = self._open.pop(board.pk, (None, None))
        if session is None:
            return None
        if how == self._how(board) and session.open:
            self._open[board.pk] = (how, session)
            return session
        session.close()
        return None

    def forget(self, board: Board) -> None:
        """Close the board's kept session: after a reboot, say, which may have left it looking
        open (no FIN from a board that went down) though nothing answers it any more."""
        if (kept := self._open.pop(board.pk, None)) is not None:
            kept[1].close()

    def keep(self, board: Board, session: ssh.Session) -> None:
        self.forget(board)
        self._open[board.pk] = (self._how(board), session)

    def close(self) -> None:
        for _, session in self._open.values():
            session.close()
        self._open.clear()
