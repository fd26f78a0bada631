"""The ends of a benchmark for tests: a simulated Pi over the project's SSH seam."""

from contextlib import contextmanager

from benchmarks.endpoints import BoardEndpoint
from devices import ssh
from devices.credentials import Credential


def target_for(node) -> ssh.Target:
    return ssh.Target(
        host=node.host,
        port=node.port,
        username=node.user,
        credential=Credential("key", node.private_key_pem),
        host_key=node.host_key_public,
    )


@contextmanager
def board_end(node):
    """A BoardEndpoint on an open session to the node; closed afterwards."""
    with ssh.Session(target_for(node), ssh.Timeouts(5, 5, 5)) as session:
        yield BoardEndpoint(f"sim-{node.name}", session)


def bridge_address(node) -> str:
    """The controller's address on the node's farm bridge (10.213.k.1): the host end."""
    return node.host.rsplit(".", 1)[0] + ".1"
