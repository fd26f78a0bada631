"""Detached commands on an end: several start in one round trip, each word stays a word."""

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from benchmarks.endpoints import ControllerEndpoint, Detached, StartFailed
from tests.workers import wait_until

AWKWARD = ["$(touch pwned)", "a b", "*", "'", '"', ";", "${1}", ""]  # each must stay one word


@pytest.mark.slow
def test_commands_started_together_keep_their_words_intact(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    printer = ["python3", "-c", "import sys, time; print(time.time(), sys.argv[1:])"]
    first = Detached("first", [*printer, *AWKWARD], 10)
    second = Detached("second", ["sh", "-c", 'printf "%s|" "$@"', "sh", *AWKWARD[::-1]], 10)
    end.start(directory, "last", [*printer, "last", "${2}"], 10, after=[first, second])
    for name in ("first", "second", "last"):
        assert end.wait(directory, name, up_to_s=30).exit_status == 0, name
    first_line = (tmp_path / "trial" / "first.out").read_text()
    last_line = (tmp_path / "trial" / "last.out").read_text()
    assert first_line.split(" ", 1)[1].strip() == repr(AWKWARD)
    assert (tmp_path / "trial" / "second.out").read_text() == "|".join(AWKWARD[::-1]) + "|"
    assert last_line.split(" ", 1)[1].strip() == repr(["last", "${2}"])
    assert not (tmp_path / "pwned").exists() and not list(tmp_path.glob("trial/pwned"))


@pytest.mark.slow
def test_a_command_that_cannot_start_says_where_and_why(tmp_path):
    """The caller names the command (trial: by its program, not its wrapper)."""
    directory = tmp_path / "trial"
    (directory / "blocked.pid").mkdir(parents=True)  # its pid file cannot be written
    with pytest.raises(StartFailed, match=r"^did not start on controller: .*blocked\.pid"):
        ControllerEndpoint().start(str(directory), "blocked", ["sleep", "5"], 10)


# Gets ready in 0.4 s: prints when, then its ready line, then runs on.
STAMPS_READY = """
import time
time.sleep(0.4)
print(time.time(), flush=True)
print("ready", flush=True)
time.sleep(5)
"""
STAMP = ["python3", "-c", "import time; print(time.time())"]


@pytest.mark.slow
def test_what_starts_after_a_command_with_a_ready_line_waits_for_that_line(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    sampler_like = Detached("first", ["python3", "-c", STAMPS_READY], 10, ready="ready")
    end.start(directory, "second", STAMP, 10, after=[sampler_like])
    assert end.wait(directory, "second", up_to_s=30).exit_status == 0
    ready_at = float((tmp_path / "trial" / "first.out").read_text().split()[0])
    assert float((tmp_path / "trial" / "second.out").read_text()) >= ready_at
    end.stop(directory, ["first"])


@pytest.mark.slow
def test_a_ready_line_that_never_comes_holds_the_next_command_two_seconds_or_so(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    silent = Detached("first", ["sleep", "60"], 90, ready="ready")
    began = time.time()
    end.start(directory, "second", STAMP, 10, after=[silent])
    assert end.wait(directory, "second", up_to_s=30).exit_status == 0
    # endpoints.POLLS polls: about 2 s, more on a loaded host, far less than the 60 s it lives.
    assert 1.5 <= float((tmp_path / "trial" / "second.out").read_text()) - began <= 15
    end.stop(directory, ["first"])


def wrapper_pids(directory: str, name: str) -> list[int]:
    """The detached wrapper (`sh -c ... pifarm-detached DIR NAME ...`) watching name.

    The wrapper's fork for the command carries the same command line until it becomes
    `timeout`, which may not have happened yet when start() returns: a fork's parent is then
    found too, and only a process whose parent was not found is the wrapper."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
            parent = int((cmdline.parent / "stat").read_text().rpartition(")")[2].split()[1])
        except OSError:  # it ended meanwhile
            continue
        if words[3:6] == [b"pifarm-detached", directory.encode(), name.encode()]:
            found[int(cmdline.parent.name)] = parent
    return [pid for pid, parent in found.items() if parent not in found]


@pytest.mark.slow
def test_a_command_whose_wrapper_was_killed_is_reported_vanished_once_it_ends(tmp_path):
    """The wrapper writes the exit status; killed (out of memory, say), it never does."""
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    end.start(directory, "measure", ["sleep", "1"], 10)
    [wrapper] = wrapper_pids(directory, "measure")
    os.kill(wrapper, signal.SIGKILL)
    began = time.monotonic()
    waited = end.wait(directory, "measure")
    while not waited.finished and time.monotonic() - began < 10:
        waited = end.wait(directory, "measure")
    assert waited.vanished and waited.exit_status is None


@pytest.mark.slow
def test_a_running_command_whose_wrapper_was_killed_is_still_running(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    end.start(directory, "measure", ["sleep", "30"], 60)
    os.kill(wrapper_pids(directory, "measure")[0], signal.SIGKILL)
    waited = end.wait(directory, "measure", up_to_s=1)
    assert not waited.finished and not waited.vanished
    end.stop(directory, ["measure"])
    assert end.wait(directory, "measure", up_to_s=1).vanished


# A companion like the sampler: a line at its start, one more when TERM ends it.
TICKER = 'echo start; trap "echo last; exit 0" TERM; while :; do sleep 0.05; done'


@pytest.mark.slow
def test_the_wait_that_sees_a_command_end_stops_its_companion_and_brings_its_output(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    ticker = Detached("ticker", ["sh", "-c", TICKER], 30, ready="start")
    end.start(directory, "work", ["sh", "-c", "sleep 0.3; echo done"], 10, after=[ticker])
    waited = end.wait(directory, "work", up_to_s=10, then_stop="ticker")
    assert waited.exit_status == 0 and waited.tail == "done\n" and waited.whole
    assert waited.companion == "start\nlast\n"
    # Stopped, not left to its limit (30 s): its wrapper writes its status just after.
    wait_until((tmp_path / "trial" / "ticker.exit").exists, "the ticker's status", timeout=10)


@pytest.mark.slow
def test_a_wait_that_ends_before_the_command_leaves_its_companion_running(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    ticker = Detached("ticker", ["sh", "-c", TICKER], 30, ready="start")
    end.start(directory, "work", ["sleep", "5"], 10, after=[ticker])
    started = time.monotonic()
    waited = end.wait(directory, "work", up_to_s=1, then_stop="ticker")
    assert waited.exit_status is None and waited.companion is None
    assert 0.9 < time.monotonic() - started < 4
    assert not (tmp_path / "trial" / "ticker.exit").exists()
    end.stop(directory, ["work", "ticker"])


@pytest.mark.slow
def test_the_wait_returns_as_the_command_ends_not_at_the_end_of_its_slice(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    end.start(directory, "work", ["sleep", "0.5"], 10)
    started = time.monotonic()
    assert end.wait(directory, "work", up_to_s=10).exit_status == 0
    assert time.monotonic() - started < 5  # the slice was 10 s


@pytest.mark.slow
def test_a_command_that_ends_as_the_slice_runs_out_is_not_taken_for_vanished(tmp_path):
    """The wrapper is held (stopped) while the command ends, so its status comes only after
    the wait's slice ran out: the wait still gives it its moment, as when it sees the end."""
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    end.start(directory, "work", ["sleep", "0.2"], 10)
    [wrapper] = wrapper_pids(directory, "work")
    os.kill(wrapper, signal.SIGSTOP)  # `timeout` ends but stays a zombie, unreaped
    try:
        time.sleep(0.5)
        threading.Timer(1.5, os.kill, (wrapper, signal.SIGCONT)).start()
        waited = end.wait(directory, "work", up_to_s=1)
    finally:
        os.kill(wrapper, signal.SIGCONT)
    assert waited.exit_status == 0 and not waited.vanished


@pytest.mark.slow
def test_what_a_command_left_behind_writes_late_does_not_shift_into_the_companions_output(
    tmp_path, monkeypatch
):
    """A child the command left in the background writes to its output while the wait reads
    it: here, every time the wait measures a size (a `wc` that appends a line after it)."""
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "wc").write_text(
        f'#!/bin/sh\n{shutil.which("wc")} "$@"; status=$?\n'
        f"echo late >> {directory}/work.out\nexit $status\n"
    )
    (shims / "wc").chmod(0o755)
    ticker = Detached("ticker", ["sh", "-c", TICKER], 30, ready="start")
    end.start(directory, "work", ["echo", "done"], 10, after=[ticker])
    time.sleep(0.3)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    waited = end.wait(directory, "work", up_to_s=10, then_stop="ticker")
    assert waited.exit_status == 0 and waited.tail == "done\n"
    assert waited.companion == "start\nlast\n"


@pytest.mark.slow
def test_a_wrapper_slower_than_the_grace_is_waited_for_not_taken_for_vanished(tmp_path):
    """A loaded board: the command ended, but its wrapper writes the status only seconds
    later (held stopped here past the wait's grace). It is there, so the command is still
    "running", and the next wait gets its status."""
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    end.start(directory, "work", ["sleep", "0.2"], 10)
    [wrapper] = wrapper_pids(directory, "work")
    os.kill(wrapper, signal.SIGSTOP)
    try:
        time.sleep(0.5)
        held = end.wait(directory, "work", up_to_s=1)
    finally:
        os.kill(wrapper, signal.SIGCONT)
    assert not held.finished and not held.vanished
    assert end.wait(directory, "work", up_to_s=5).exit_status == 0
