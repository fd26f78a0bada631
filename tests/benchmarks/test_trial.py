"""A trial's measurement always ends: also when the wrapper that records its exit status is
killed, or when it outlives every limit. The controller stands in for the board here (the
same detached scripts, run by the local shell)."""

import subprocess

import pytest

from benchmarks import trial
from benchmarks.catalog.spec import Command, Context, Plan
from benchmarks.endpoints import ControllerEndpoint

# Kills the wrapper watching it (the parent of its `timeout`), as the kernel's OOM killer
# or a careless `pkill -f` would, then prints its result and ends normally.
KILLS_ITS_WRAPPER = 'kill -KILL "$(ps -o ppid= -p "$(cat "$1/measure.pid")")"; echo value=1'
# Stops its own `timeout` (SIGSTOP), which then never times it out, then sleeps on.
STOPS_ITS_TIMEOUT = 'kill -STOP "$(cat "$1/measure.pid")"; exec sleep 3007'


def measuring(tmp_path, script: str, timeout_s: float) -> trial.Outcome:
    workdir = str(tmp_path / "trial")
    plan = Plan(measure=Command("board", ("sh", "-c", script, "sh", workdir), timeout_s))
    return trial.run(plan, {"board": ControllerEndpoint()}, Context(workdir=workdir))


@pytest.mark.slow
def test_a_measurement_whose_wrapper_was_killed_fails_soon_and_keeps_its_output(tmp_path):
    # Soon: the words are the vanished wrapper's, not those of the 60 s limit.
    with pytest.raises(trial.TrialFailed, match="its exit status is unknown") as failed:
        measuring(tmp_path, KILLS_ITS_WRAPPER, 60)
    assert failed.value.outputs[trial.MEASURE] == "value=1\n"


@pytest.mark.slow
def test_a_measurement_that_outlives_its_limit_and_the_grace_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(trial, "MEASURE_MARGIN_S", 1)  # the margin's size is not the point
    with pytest.raises(trial.TrialFailed, match=r"did not end within 7 s \(its limit of 1 s"):
        measuring(tmp_path, STOPS_ITS_TIMEOUT, 1)
    left = subprocess.run(["pgrep", "-f", "sleep 3007"], capture_output=True, check=False)
    assert left.stdout == b""


@pytest.mark.slow
def test_a_setup_step_that_overruns_fails_the_trial_naming_what_it_runs(tmp_path):
    """Not "sh did not finish", nor a lost connection: the end answered, the step overran."""
    workdir = str(tmp_path / "trial")
    overrun = Command("board", ("sh", "-c", "sleep 30", "pifarm-check-cipher"), timeout_s=0.5)
    plan = Plan(setup=(overrun,), measure=Command("board", ("true",), 5))
    with pytest.raises(trial.TrialFailed) as failed:
        trial.run(plan, {"board": ControllerEndpoint()}, Context(workdir=workdir))
    assert str(failed.value) == (
        "setup failed on the board: pifarm-check-cipher did not finish within 0.5 s; it was stopped"
    )


@pytest.mark.slow
def test_a_measurement_that_cannot_start_fails_the_trial_naming_it_and_why(tmp_path):
    workdir = tmp_path / "trial"
    (workdir / "measure.pid").mkdir(parents=True)  # its pid file cannot be written
    plan = Plan(measure=Command("board", ("env", "A=1", "sh", "-c", "true", "sha1sum"), 5))
    with pytest.raises(trial.TrialFailed, match=r"^sha1sum did not start on controller: .*pid"):
        trial.run(plan, {"board": ControllerEndpoint()}, Context(workdir=str(workdir)))
