"""How runs end, on simulated Pis with a real RQ worker: every run reaches a terminal state
with its reason, and the rest of the campaign goes on."""

import threading
import time

import pytest

from benchmarks import campaigns
from benchmarks.catalog import custom_rules
from benchmarks.models import Campaign, Run
from devices import presets, remote
from devices.board_tasks import read_facts, save_snapshot
from devices.models import Board, Preset
from pisim import Faults
from tests.benchmarks.factories import custom_benchmark, needs_frobnicate, sleeper
from tests.devices.simfarm import register_node
from tests.pisim.test_cpu_quota import set_governor
from tests.workers import wait_until

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]
NO_QUIET = False  # the quiet wait has tests of its own; these need no second of it


def run_once(board, run_jobs, name: str, given: dict | None = None, **definition) -> Run:
    """Define one custom benchmark, run it once on board as a campaign, and return the run."""
    custom_benchmark(name, **definition)
    campaign = campaigns.start(
        {
            "name": name,
            "boards": [board.name],
            "repetitions": 1,
            "quiet": NO_QUIET,
            "benchmarks": [{"name": name, "params": given or {}}],
        }
    )
    run_jobs()
    return campaign.runs.get()


def states(campaign: Campaign) -> list[tuple[str, str]]:
    return [(run.state, run.reason) for run in campaign.runs.order_by("lane", "sequence")]


def test_a_preset_the_board_cannot_boot_skips_its_runs_and_the_rest_goes_on(
    pisim_node_factory, run_jobs, fast
):
    fast.PIFARM_REBOOT_DEADLINE = 8
    node = pisim_node_factory(faults=Faults(max_boot_arm_freq=1800, watchdog_timeout=2.0))
    board = register_node(node)
    bad = presets.new_version(Preset.objects.create(name="too fast"), options={"arm_freq": "2000"})
    sleeper()
    campaign = campaigns.start(
        {
            "name": "bad overclock",
            "boards": [board.name],
            "presets": ["too fast", "as-is"],
            "benchmarks": ["sleeper"],
            "repetitions": 2,
            "quiet": NO_QUIET,
        }
    )
    run_jobs()
    runs = list(campaign.runs.order_by("sequence"))
    # Counterbalanced: too fast, as is | as is, too fast. The first application's failure
    # skips both runs of the preset; "as is" needs nothing put back, as nothing changed.
    skipped = [run for run in runs if run.preset_version_id == bad.pk]
    as_is = [run for run in runs if run.preset_version_id is None]
    assert [run.state for run in skipped] == [Run.State.SKIPPED] * 2, states(campaign)
    assert all(f"{bad} was not applied" in run.reason for run in skipped)
    assert "booted its old config.txt by itself" in runs[0].reason  # the application's words
    assert runs[0].application.state == "rolled_back"
    assert [run.state for run in as_is] == [Run.State.DONE] * 2, states(campaign)
    assert board.applications.count() == 1
    lane = campaign.lanes.get()  # nothing to put back
    assert lane.left == "as before the campaign: no preset of pifarm's: its own config.txt"
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.FINISHED


def test_a_parameter_with_shell_metacharacters_arrives_as_one_literal_word(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    word = "$(touch /tmp/pwned-pifarm); `id` 'quoted' \"double\" ; | & > < * \\ \n end"
    run = run_once(
        board,
        run_jobs,
        "echo-length",
        {"word": word},
        command='echo "length=${#PIFARM_WORD}"',
        params={"word": "x"},
        pattern=r"length=(?P<value>\d+)",
    )
    assert run.state == Run.State.DONE, run.reason
    assert run.measurements.get().value == len(word)
    assert "pwned" not in node.run_as_root(["ls", "/tmp"], check=True).stdout.decode()


def test_a_default_the_admin_stored_reaches_the_command_as_written(pisim_farm, run_jobs):
    """The longest default a custom parameter may hold, with quotes and spaces: the command
    gets that text, not a repr of it."""
    default = ('--fast "quoted" ' * 20)[: custom_rules.MAX_PARAM_LENGTH]
    run = run_once(
        register_node(pisim_farm.nodes["pi4"]),
        run_jobs,
        "echo-default",
        command='echo "length=${#PIFARM_WORD} start=${PIFARM_WORD%% *}"',
        params={"word": default},
        pattern=r"length=(?P<value>\d+)",
    )
    assert run.state == Run.State.DONE, run.reason
    assert run.params == {"word": default}
    assert run.measurements.get().value == len(default)
    assert "start=--fast" in run.raw_output


def test_a_missing_tool_skips_the_run_and_says_which(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi4"])
    needs_frobnicate("sha1sum")
    campaign = campaigns.start(
        {
            "name": "tools",
            "boards": [board.name],
            "benchmarks": ["needs-frobnicate"],
            "repetitions": 2,
            "quiet": NO_QUIET,
        }
    )
    run_jobs()
    for state, reason in states(campaign):
        assert state == Run.State.SKIPPED
        assert "tool missing on the board (sim-pi4): frobnicate." in reason


def test_output_that_is_not_understood_fails_the_run_and_keeps_the_raw_output(pisim_farm, run_jobs):
    board = register_node(pisim_farm.nodes["pi4"])
    run = run_once(
        board,
        run_jobs,
        "garbage",
        command="echo 'no numbers here'; echo 'ümlaut'",
        pattern=r"result=(?P<value>\d+)",
    )
    assert run.state == Run.State.FAILED
    assert run.reason.startswith("the output was not understood: the output has no match")
    assert run.raw_output == "no numbers here\nümlaut\n"


def test_a_run_cancelled_while_it_measures_stops_on_the_board_and_the_next_run_goes_on(
    pisim_farm, run_jobs
):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    sleeper(seconds="0.2")
    campaign = campaigns.start(
        {
            "name": "cancel",
            "boards": [board.name],
            "quiet": NO_QUIET,
            "repetitions": 1,
            "benchmarks": [
                {"name": "sleeper", "params": {"seconds": "300"}},
                {"name": "sleeper", "params": {"seconds": "0.1"}},
            ],
        }
    )
    first = campaign.runs.order_by("sequence").first()

    def cancel_once_measuring():
        wait_until(lambda: Run.objects.get(pk=first.pk).step.startswith("measuring"), "measuring")
        time.sleep(1)  # the sleep has started on the board
        campaigns.cancel_run(first)

    canceller = threading.Thread(target=cancel_once_measuring)
    canceller.start()
    run_jobs()
    canceller.join()
    first.refresh_from_db()
    assert first.state == Run.State.CANCELLED
    assert first.reason == "cancelled while measuring; its processes on the board were stopped"
    assert "sleep 300" not in node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()
    assert campaign.runs.order_by("sequence").last().state == Run.State.DONE
    assert Board.objects.get(pk=board.pk).status == Board.Status.ONLINE


def test_a_custom_command_that_prints_without_end_is_cut_on_the_board(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    run = run_once(
        board,
        run_jobs,
        "flood",
        command="head -c 100000000 /dev/zero | tr '\\0' A",
        pattern=r"(?P<value>\d+)",
    )
    assert run.state == Run.State.FAILED
    assert run.reason.startswith(
        "flood's command exited with 141: it printed more than 1048576 bytes, all a custom "
        "command may print; it was stopped there"
    )
    assert len(run.raw_output) <= 1048576
    used = node.run_as_root(["du", "-s", "-k", "/dev/shm"], check=True).stdout.split()[0]
    assert int(used) < 2048  # nothing of it is left on the board's RAM disk


def test_what_a_command_started_in_a_session_of_its_own_is_ended_with_the_run(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    run = run_once(
        board,
        run_jobs,
        "escapes",
        command="setsid sleep 334 & sleep 335 & echo value=1",
        pattern=r"value=(?P<value>\d+)",
    )
    assert run.state == Run.State.DONE
    left = node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()
    assert "sleep 334" not in left and "sleep 335" not in left


def test_a_command_that_kills_what_watches_it_fails_its_run_soon_with_the_reason(
    pisim_farm, run_jobs
):
    """pkill -f matches the wrapper too (its words hold the command): no exit status comes.
    (It waits a second first: the shell that started it, whose words hold it too, has ended.)"""
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    run = run_once(
        board,
        run_jobs,
        "sabotage",
        command="sleep 1; pkill -f pifarm-sampler; sleep 1; echo value=1",
        pattern=r"value=(?P<value>\d+)",
        timeout_s=300,
    )
    # Soon: the watcher's words, not those of the 300 s limit.
    assert run.state == Run.State.FAILED
    assert "the process that watched it there was killed" in run.reason, run.reason
    assert "pifarm" not in node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()


def test_what_a_command_started_through_sudo_is_ended_with_the_run(pisim_farm, run_jobs):
    """sudo empties the environment, trial mark included; its child is still sudo's child."""
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    run = run_once(
        board,
        run_jobs,
        "sudobg",
        command="sudo -n setsid sleep 3002 > /dev/null 2>&1 < /dev/null & sleep 0.5; echo value=1",
        pattern=r"value=(?P<value>\d+)",
    )
    assert run.state == Run.State.DONE, run.reason
    assert "sleep 3002" not in node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()


def test_as_is_is_the_state_before_the_campaign_and_the_board_is_left_as_found(
    pisim_node_factory, run_jobs, fast
):
    node = pisim_node_factory(profile="pi4b-bookworm")
    config = "/boot/firmware/config.txt"
    original = node.read_file(config)
    board = register_node(node)
    set_governor(node, "performance")  # by hand, as pifarm's probe then saw it
    with remote.session(board) as session:
        save_snapshot(board, read_facts(session))
    quick = presets.new_version(Preset.objects.create(name="quick"), options={"arm_freq": "1600"})
    sleeper()
    campaign = campaigns.start(
        {
            "name": "as is against quick",
            "boards": [board.name],
            "presets": [f"quick@{quick.number}", "as-is"],
            "benchmarks": ["sleeper"],
            "repetitions": 2,
            "quiet": NO_QUIET,
        }
    )
    run_jobs()
    runs = list(campaign.runs.order_by("sequence").select_related("application__version"))
    assert [run.state for run in runs] == [Run.State.DONE] * 4, states(campaign)
    # quick, as is | as is, quick: "as is" ran on the config.txt the board had before
    assert [run.preset_version_id for run in runs] == [quick.pk, None, None, quick.pk]
    stock = presets.stock_version()
    assert [run.application.version_id for run in runs] == [quick.pk, stock.pk, stock.pk, quick.pk]
    for run in runs:
        ran = run.environment["effective"]
        if run.preset_version_id is None:
            assert ran["managed"] == {} and ran["firmware"]["arm_freq"] != "1600", ran
        else:
            assert ran["managed"] == {"arm_freq": "1600"} and ran["firmware"]["arm_freq"] == "1600"
    fingerprints = [run.config_fingerprint for run in runs]
    assert fingerprints[1] == fingerprints[2] != fingerprints[0] == fingerprints[3] != ""
    # ...and the board is left with the config.txt it had
    lane = campaign.lanes.get()
    assert lane.left == (
        f"put back as before the campaign: {stock}, but its governor was performance before the "
        "campaign and is ondemand now"
    ), lane.left
    assert node.read_file(config) == original
    assert board.applications.first().version == stock


def test_a_custom_command_that_leaves_a_child_holding_its_output_ends_within_a_second(
    pisim_farm, run_jobs
):
    """Its output's reader drains for a second at most, then stops: the run is done with the
    value, and the child the command left behind is swept from the board."""
    node = pisim_farm.nodes["pi4"]
    board = register_node(node)
    started = time.monotonic()
    run = run_once(
        board, run_jobs, "leaver", command="sleep 300 & echo 42", pattern=r"(?P<value>\d+)"
    )
    assert run.state == Run.State.DONE, run.reason
    assert run.measurements.get().value == 42
    assert 1 <= run.measure_s < 3  # the second the reader drains, not the 300 s
    assert time.monotonic() - started < 30
    assert "sleep 300" not in node.run_as_root(["ps", "-eo", "args"], check=True).stdout.decode()
