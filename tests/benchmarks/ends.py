"""The ends of a benchmark for tests: a simulated Pi over the project's SSH seam."""

from contextlib import contextmanager

from benchmarks.endpoints import BoardEndpoint
from devices import ssh
from tests.devices.simfarm import target_for


@contextmanager
def board_end(node):
    """A BoardEndpoint on an open session to the node; closed afterwards."""
    with ssh.Session(target_for(node), ssh.Timeouts(5, 5, 5)) as session:
        yield BoardEndpoint(f"sim-{node.name}", session)


def bridge_address(node) -> str:
    """The controller's address on the node's farm bridge (10.213.k.1): the host end."""
    return node.host.rsplit(".", 1)[0] + ".1"
