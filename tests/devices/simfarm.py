"""Register simulated Pis as boards, the way the pages do it."""

from devices.models import Board


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
