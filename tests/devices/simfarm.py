"""Simulated Pis as the project sees them: a board registered the way the pages do it, or the
SSH target its session opens."""

from devices import ssh
from devices.credentials import Credential
from devices.models import Board


def target_for(node, credential=None, host_key=None) -> ssh.Target:
    """The node's address, user, key and pinned host key (or these instead)."""
    return ssh.Target(
        host=node.host,
        port=node.port,
        username=node.user,
        credential=credential or Credential("key", node.private_key_pem),
        host_key=host_key or node.host_key_public,
    )


def register_node(node, name=None, auth="key", pin=True) -> Board:
    board = Board(
        name=name or f"sim-{node.name}", host=node.host, port=node.port, username=node.user
    )
    secret = node.private_key_pem if auth == "key" else node.password
    board.set_credential(auth, secret)
    if pin:
        board.host_key = node.host_key_public
    board.save()
    return board


def exists(node, path: str) -> bool:
    try:
        node.read_file(path)
        return True
    except FileNotFoundError:
        return False
