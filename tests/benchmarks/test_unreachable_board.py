"""A board nothing answers at: its runs fail saying that pifarm could not connect to it, whether
or not a preset was to be applied first."""

import socket

import pytest

from benchmarks import campaigns, runner
from benchmarks.models import Run
from devices import presets
from devices.models import Application, Board, Preset
from tests.benchmarks.factories import custom_benchmark
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db(transaction=True)


def closed_loopback_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(autouse=True)
def short_waits(monkeypatch):
    """The waits between connection tries keep their shape (each twice the one before), not
    their length: seconds of them, three tries a run, would only slow the suite."""
    monkeypatch.setattr(runner, "CONNECT_BACKOFF_S", 0.05)


@pytest.fixture
def echo(db):
    return custom_benchmark("echo", "echo value=1")


def campaign_on(board: Board, preset: str, repetitions: int = 1):
    return campaigns.start(
        {
            "name": "nobody home",
            "boards": [board.name],
            "presets": [preset],
            "benchmarks": ["echo"],
            "repetitions": repetitions,
            "quiet": False,
        }
    )


@pytest.mark.parametrize("preset", ["as-is", "mild@1"])
def test_a_run_on_a_board_nothing_listens_for_says_it_could_not_connect(
    run_jobs, fast, echo, preset
):
    presets.new_version(Preset.objects.create(name="mild"), options={"arm_freq": "1000"})
    port = closed_loopback_port()
    board = make_board("unreachable", host="127.0.0.1", port=port)

    campaign = campaign_on(board, preset)
    run_jobs()

    run = campaign.runs.get()
    assert run.state == Run.State.FAILED
    assert run.reason == (
        f"could not connect to unreachable: 127.0.0.1:{port} refused the connection "
        "(is sshd running?)"
    )
    assert not Application.objects.exists()  # nothing was tried on a board out of reach
    board.refresh_from_db()
    assert board.status == Board.Status.OFFLINE


def test_a_lane_whose_board_cannot_be_reached_before_its_preset_gives_up_after_three_runs(
    run_jobs, fast, echo
):
    presets.new_version(Preset.objects.create(name="mild"), options={"arm_freq": "1000"})
    board = make_board("unreachable", host="127.0.0.1", port=closed_loopback_port())

    campaign = campaign_on(board, "mild@1", repetitions=5)
    run_jobs()

    ended = list(campaign.runs.order_by("sequence").values_list("state", "reason"))
    assert [state for state, _ in ended] == [Run.State.FAILED] * 3 + [Run.State.SKIPPED] * 2
    assert all(reason.startswith("could not connect to unreachable: ") for _, reason in ended)


def test_a_run_retrying_its_connection_keeps_its_lane_heartbeat(run_jobs, fast, echo):
    """The sweep leaves a lane alone while its heartbeat is fresh; without a beat during the
    tries, a long PIFARM_SSH_CONNECT_TIMEOUT could make a live lane look dead, and the sweep
    would end its run as "stopped while connecting to ..." instead."""
    board = make_board("unreachable", host="127.0.0.1", port=closed_loopback_port())

    campaign = campaign_on(board, "as-is")
    run_jobs()

    run, lane = campaign.runs.get(), campaign.lanes.get()
    # It beat after its last wait, so the beat came later than all of the waits between its
    # tries (1 s, 2 s...) after the run began: a lower bound, which a loaded machine only helps.
    waits_s = sum(
        runner.CONNECT_BACKOFF_S * 2**attempt for attempt in range(runner.CONNECT_TRIES - 1)
    )
    assert (lane.heartbeat - run.started).total_seconds() >= waits_s
