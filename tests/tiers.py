"""The test tiers: `make test-fast` runs what is left when the heavy tests are left out.

A test is heavy when it starts a simulated farm (`pisim`), drives a browser (`browser`), runs
a real RQ worker process (`worker`), or starts any other process: a real benchmark tool, a
server, `manage.py` in a subprocess (`slow`). The markers are checked, not trusted:
- at collection, a test that uses a fixture of a heavy kind without its marker is an error;
- while a test runs, starting a process from a test marked with none of them fails it, naming
  the program, in its fixtures' set-up too. The suite's own embedded Redis, which the first
  test that needs a queue starts, is not that test's doing and is left alone.
A test that asserts a speed a simulated board reaches (a line rate, a clock's effect) is also
marked `measures`: the board's CPU is the host's, so `make test` runs those alone, after the
parallel rest, where nothing else takes the host's CPU from them. The browser tests run after
the rest too, since Chromium drops a page's loads when a farm elsewhere adds or removes its
network bridge: two at a time those that start no farm, alone those that do.
"""

import os
import subprocess
from pathlib import Path

import pytest

HEAVY = ("pisim", "browser", "worker", "slow")  # declared in pyproject.toml
# The embedded Redis the suite runs on, started by the first test that needs a queue.
SUITE_REDIS = "redis-server"
# The fixtures that make a test heavy, and the marker each one needs.
FIXTURE_MARKERS = {
    "pisim_farm": "pisim",
    "pisim_node_factory": "pisim",
    "browser": "browser",
    "page": "browser",
    "start_worker": "worker",
    "worker_process": "worker",
    "team_database": "slow",
}


def pytest_collection_modifyitems(config, items):
    unmarked = []
    for item in items:
        marked = {mark.name for mark in item.iter_markers()}
        # A parametrized argument is no fixture, whatever its name ("page" is often a URL's).
        arguments = getattr(getattr(item, "callspec", None), "params", {})
        for fixture in set(getattr(item, "fixturenames", ())) - set(arguments):
            needed = FIXTURE_MARKERS.get(fixture)
            if needed and needed not in marked:
                unmarked.append(f"{item.nodeid} uses {fixture}: mark it {needed}")
        if "measures" in marked and "pisim" not in marked:
            unmarked.append(f"{item.nodeid} is marked measures: it needs pisim too")
    if unmarked:
        listed = "\n  ".join(unmarked)
        raise pytest.UsageError(f"heavy tests without their tier's marker:\n  {listed}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guarded(item))


def _guarded(item):
    """The test's set-up (its fixtures) and body, refusing to start a process unless marked."""
    if any(item.get_closest_marker(name) for name in HEAVY):
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "_execute_child", _refuse_popen(item))
        # The other ways Python starts a process (os.spawn*, pty.fork and multiprocessing's
        # fork go through os.fork or os.forkpty).
        for name in ("system", "fork", "forkpty", "posix_spawn", "posix_spawnp"):
            patch.setattr(os, name, _refuse(item, f"os.{name}"))
        return (yield)


def _refuse_popen(item):
    start = subprocess.Popen._execute_child

    def execute_child(self, args, *rest, **kwargs):
        program = os.fspath(args) if isinstance(args, str | bytes | os.PathLike) else args[0]
        if Path(os.fsdecode(program)).name == SUITE_REDIS:
            return start(self, args, *rest, **kwargs)
        _fail(item, os.fsdecode(program))

    return execute_child


def _refuse(item, how: str):
    def refused(*args, **kwargs):
        _fail(item, how)

    return refused


def _fail(item, program: str):
    pytest.fail(
        f"{item.nodeid} started a process ({program}): mark it slow (or pisim, worker, "
        "browser) so that make test-fast leaves it out",
        pytrace=False,
    )
