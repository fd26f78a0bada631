"""pytest fixtures for the simulated Pi farm.

    pytest_plugins = ["pisim.pytest_plugin"]

pisim_farm (session): nodes "pi3" (pi3b-legacy) and "pi4" (pi4b-bookworm), downtime 1 s.
    Shared by the whole session: tests must leave its nodes up, reachable and unfaulted.
pisim_node_factory (function): pisim_node_factory(name=None, profile="pi4b-bookworm",
    faults=None, downtime=1.0) -> Node on a farm of its own (its own subnet), torn down after
    the test whatever the outcome. Use it for anything that breaks a node.
Tests are skipped, with the reason, when not run as root or without /usr/sbin/sshd.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .farm import Farm, cleanup_stale
from .util import SSHD, PisimError


def _share(subnets: range) -> range:
    """This pytest process's share of subnets. Under pytest-xdist each worker (gwN of
    PYTEST_XDIST_WORKER_COUNT) takes a slice of its own, so two workers never reach for the same
    free subnet at once (one of them would find it taken between its look and its start)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not re.fullmatch(r"gw\d+", worker) or count <= 1:
        return subnets
    size = len(subnets) // count
    first = subnets.start + int(worker[2:]) * size
    return range(first, first + size)


SESSION_SUBNETS = _share(range(200, 228))
FACTORY_SUBNETS = _share(range(228, 255))


def _skip_unless_possible() -> None:
    if os.geteuid() != 0:
        pytest.skip("pisim needs root (network namespaces, mounts, sshd): run the tests as root")
    if not os.access(SSHD, os.X_OK):
        pytest.skip(f"pisim needs OpenSSH's sshd at {SSHD}")


def start_free_farm(
    prefix: str, subnets: range, nodes: list[tuple[str, str, object]], downtime: float
) -> Farm:
    """Start a farm on the first free subnet of `subnets` (other sessions may hold some)."""
    last: Exception | None = None
    for k in subnets:
        if Path(f"/sys/class/net/psbr{k}").exists():
            continue
        farm = Farm(f"{prefix}{k}", k, downtime)
        try:
            for name, profile, faults in nodes:
                farm.add_node(name, profile=profile, faults=faults)
            return farm.start()
        except PisimError as exc:  # taken by a concurrent session meanwhile: next one
            last = exc
            farm.stop()
    raise PisimError(f"no free pisim subnet in {subnets.start}..{subnets.stop - 1}: {last}")


_cleaned = False


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "pisim: needs root to start simulated Pis (network namespaces, sshd)"
    )


def _cleanup_once() -> None:
    global _cleaned
    if not _cleaned:
        cleanup_stale()  # leftovers of crashed sessions; live farms of others stay
        _cleaned = True


@pytest.fixture(scope="session")
def pisim_farm():
    _skip_unless_possible()
    _cleanup_once()
    farm = start_free_farm(
        "s", SESSION_SUBNETS, [("pi3", "pi3b-legacy", None), ("pi4", "pi4b-bookworm", None)], 1.0
    )
    try:
        yield farm
    finally:
        farm.stop()


class NodeFactory:
    """Creates fault-injection nodes on a farm of their own; see the module docstring."""

    def __init__(self):
        self.farm: Farm | None = None

    def __call__(
        self,
        name: str | None = None,
        profile: str = "pi4b-bookworm",
        faults=None,
        downtime: float = 1.0,
    ):
        name = name or f"fx{len(self.farm.nodes) + 1 if self.farm else 1}"
        if self.farm is None:
            self.farm = start_free_farm("f", FACTORY_SUBNETS, [(name, profile, faults)], downtime)
            return self.farm.nodes[name]
        return self.farm.add_node(name, profile=profile, faults=faults)

    def close(self) -> None:
        if self.farm is not None:
            self.farm.stop()
            self.farm = None


@pytest.fixture
def pisim_node_factory():
    _skip_unless_possible()
    _cleanup_once()
    factory = NodeFactory()
    try:
        yield factory
    finally:
        factory.close()
