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
