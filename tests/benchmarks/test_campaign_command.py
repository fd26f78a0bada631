"""`manage.py campaign` and `manage.py benchmarks`: the terminal's way in."""

import io
import json
import os
import subprocess
import threading

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from benchmarks import campaigns
from benchmarks.management.commands import campaign as campaign_command
from benchmarks.models import Campaign, Run
from tests.benchmarks.factories import (
    add_run,
    custom_benchmark,
    lane_on,
    make_campaign,
    needs_frobnicate,
    overclock,
    trials,
    unusable_custom_benchmark,
)
from tests.devices.factories import make_board
from tests.devices.simfarm import register_node
from tests.processes import run_manage

pytestmark = pytest.mark.django_db(transaction=True)


def manage(*argv, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The command as a person runs it, on the test database and Redis."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
    }
    return run_manage(env, *argv, stdin=stdin)


@pytest.mark.slow
def test_the_catalog_lists_metrics_parameters_tools_and_peers():
    listed = manage("benchmarks")
    assert listed.returncode == 0, listed.stderr
    assert "sha1sum (v2): sha1sum of a sparse file" in listed.stdout
    assert "throughput [MB/s, higher is better], seconds [s, lower is better]" in listed.stdout
    assert "params: size=2G, min_seconds=0" in listed.stdout
    assert "trials: lengthened to 3 s by min_seconds, suspect under 1 s" in listed.stdout
    as_json = {b["name"]: b for b in json.loads(manage("benchmarks", "--json").stdout)}
    assert as_json["iperf3-tcp"]["needs_peer"] is True
    assert as_json["iperf3-tcp"]["length_param"] == "duration"
    assert as_json["iperf3-tcp"]["min_trial_s"] == 5
    assert as_json["sha1sum"]["tools"] == ["sha1sum", "truncate"]


@pytest.mark.slow
def test_a_custom_benchmark_that_cannot_be_used_is_named_and_the_others_listed():
    unusable_custom_benchmark("nulldef")
    for argv in [("benchmarks",), ("benchmarks", "--json")]:
        listed = manage(*argv)
        assert listed.returncode == 0, listed.stderr
        assert "sha1sum" in listed.stdout and "nulldef" not in listed.stdout
        assert "nulldef cannot be used until an admin fixes it" in listed.stderr
        assert "p: the default must be text" in listed.stderr


@pytest.mark.worker
@pytest.mark.pisim
def test_a_spec_file_starts_a_campaign_that_is_followed_to_its_end(
    pisim_farm, start_worker, tmp_path
):
    board = register_node(pisim_farm.nodes["pi4"])
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: from a terminal\nboards: [{board.name}]\npresets: [as-is]\n"
        "benchmarks:\n  - name: sha1sum\n    params: {size: 16M}\nrepetitions: 2\nquiet: false\n"
        "min_trial_s: 0\n"
    )
    start_worker()
    done = manage("campaign", "start", str(spec), "--follow", "--json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert [row["state"] for row in table] == ["done", "done"]
    assert table[0]["values"]["throughput"]["unit"] == "MB/s"
    assert "] 2/2 runs" in done.stderr  # the progress bar, a line per change off a terminal
    assert "from a terminal: 2 done" in done.stderr  # standard output is the JSON alone


@pytest.mark.slow
def test_a_refused_spec_exits_2_with_the_reason_and_starts_nothing(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "x", "boards": ["nowhere"], "benchmarks": ["sha1sum"]}))
    refused = manage("campaign", "start", str(spec))
    assert refused.returncode == 2
    assert "the spec was refused: no board in service is named 'nowhere'" in refused.stderr
    garbage = manage("campaign", "start", "-", stdin="{not: [json")
    assert garbage.returncode == 2
    assert "is neither JSON nor YAML" in garbage.stderr
    assert not Campaign.objects.exists()


@pytest.mark.pisim
def test_a_campaign_with_a_skipped_run_exits_1(pisim_farm, run_jobs, tmp_path):
    board = register_node(pisim_farm.nodes["pi4"])
    needs_frobnicate()
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "name": "skips",
                "boards": [board.name],
                "repetitions": 1,
                "benchmarks": ["needs-frobnicate"],
                "quiet": False,
            }
        )
    )
    call_command("campaign", "start", str(spec))  # started, nothing ended yet: no error
    run_jobs()
    campaign = Campaign.objects.get()
    assert campaign.runs.get().state == Run.State.SKIPPED
    with pytest.raises(CommandError) as status:
        call_command("campaign", "status", str(campaign.code))
    assert status.value.returncode == 1
    assert "skips: 1 skipped" in str(status.value)


def test_cancelling_a_finished_campaign_says_so_and_changes_nothing(capsys):
    board = make_board("bench-a")
    campaign = make_campaign(board, name="over", states=["done"])
    campaigns.finish_if_done(campaign.pk)
    call_command("campaign", "cancel", str(campaign.code))
    assert "over had already finished: there is nothing to cancel." in capsys.readouterr().err
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.FINISHED


HUGE = "A" * 1_000_000  # under the 2.5 MB a spec file may be, over any text a spec takes
# YAML, whose loader reads JSON too, takes no key of over 1,024 characters: many keys, then.
MANY_KEYS = {f"key{n}": 1 for n in range(100_000)}


@pytest.mark.parametrize(
    "changes",
    [{"order": HUGE}, {"apply_mode": HUGE}, {"presets": [HUGE]}, {"presets": [f"{HUGE}@2"]},
     MANY_KEYS, {"boards": [HUGE]}, {"boards": [f"b{n}" for n in range(100_000)]},
     {"peer": HUGE}, {"benchmarks": [HUGE]}, {"question": ["network"]}, {"question": {"a": 1}},
     {"benchmarks": [{"name": "sha1sum", "params": MANY_KEYS}]}],
)  # fmt: skip
def test_a_refusal_shows_what_it_refused_cut_short(tmp_path, changes):
    """A spec file is any size; its refusal is a line or two."""
    make_board("bench-a")
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps({"name": "x", "boards": ["bench-a"], "benchmarks": ["sha1sum"], **changes})
    )
    with pytest.raises(CommandError) as refused:
        call_command("campaign", "start", str(spec))
    assert refused.value.returncode == 2
    assert "the spec was refused: " in str(refused.value)
    assert len(str(refused.value)) < 500, str(refused.value)[:200]
    assert not Campaign.objects.exists()


def test_an_unknown_user_is_shown_cut_short(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "x", "boards": ["bench-a"], "benchmarks": ["sha1sum"]}))
    with pytest.raises(CommandError) as refused:
        call_command("campaign", "start", str(spec), "--user", HUGE)
    assert refused.value.returncode == 2
    assert len(str(refused.value)) < 200


def test_a_user_without_the_role_to_start_campaigns_is_refused(tmp_path, viewer, operator):
    """The words of the 403 page: the role needed, and what the user has."""
    make_board("bench-a")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "x", "boards": ["bench-a"], "benchmarks": ["sha1sum"]}))
    with pytest.raises(CommandError) as refused:
        call_command("campaign", "start", str(spec), "--user", viewer.username)
    assert refused.value.returncode == 2
    assert str(refused.value) == (
        f"{viewer.username} may not start campaigns: this needs the operator role (a pifarm "
        f"operator probes boards, applies presets and runs campaigns); {viewer.username} has "
        "the viewer role."
    )
    assert not Campaign.objects.exists()
    call_command("campaign", "start", str(spec), "--user", operator.username)
    assert Campaign.objects.get().created_by == operator


def test_follow_waits_for_the_campaign_to_finish_not_for_its_runs(monkeypatch):
    """An adaptive campaign's run is done before the next trial is added: between the two no
    run is queued or running, and following stopped there (with the first trials only)."""
    monkeypatch.setattr(campaign_command, "POLL_S", 0.05)
    board = make_board("bench-a")
    campaign = make_campaign(board, name="adaptive", states=["done", "done"])
    out, err = io.StringIO(), io.StringIO()

    def follow():
        try:
            call_command(
                "campaign",
                "status",
                str(campaign.code),
                "--follow",
                "--json",
                stdout=out,
                stderr=err,
            )
        finally:
            connection.close()

    following = threading.Thread(target=follow)
    following.start()
    following.join(timeout=1)
    assert following.is_alive(), err.getvalue()
    add_run(campaign.lanes.get(), state=Run.State.DONE)  # the trial after_run added, and ran
    campaigns.finish_if_done(campaign.pk)  # its lane found no run left: the campaign finished
    following.join(timeout=10)
    assert not following.is_alive()
    assert [row["state"] for row in json.loads(out.getvalue())] == ["done"] * 3
    assert "adaptive: 3 done" in err.getvalue()


@pytest.mark.worker
@pytest.mark.pisim
def test_an_adaptive_campaign_is_followed_to_its_last_trial(pisim_farm, start_worker, tmp_path):
    """Values that never agree: trials are added up to the maximum, and all of them are
    printed (following stopped after the minimum, with exit 0)."""
    board = register_node(pisim_farm.nodes["pi4"])
    custom_benchmark(
        "noise",
        "od -An -N2 -tu2 /dev/urandom",
        title="random values",
        tools="od",
        pattern=r"(?P<value>\d+)",
    )
    spec = tmp_path / "spec.json"
    repetitions = {"min": 2, "max": 5, "target_pct": 0.001}
    spec.write_text(
        json.dumps(
            {
                "name": "adaptive",
                "boards": [board.name],
                "benchmarks": ["noise"],
                "quiet": False,
                "repetitions": repetitions,
            }
        )
    )
    start_worker()
    done = manage("campaign", "start", str(spec), "--follow", "--json")
    assert done.returncode == 0, done.stderr
    assert [row["state"] for row in json.loads(done.stdout)] == ["done"] * 5
    assert "adaptive: 5 done" in done.stderr


def test_a_start_warns_as_the_preview_does(tmp_path, monkeypatch):
    """An "as is" board not at stock (never probed: unknown) is said at the start."""
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    make_board("bench-unprobed")
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps({"name": "x", "boards": ["bench-unprobed"], "benchmarks": ["sha1sum"]})
    )
    err = io.StringIO()
    call_command("campaign", "start", str(spec), stderr=err)
    assert (
        "warning: bench-unprobed has not been probed, so whether it is at stock is unknown. "
        "Its “as is” is what it runs now"
    ) in err.getvalue()
    assert "which has not ended" not in err.getvalue()  # not of the campaign it just started


def test_a_campaign_ends_with_what_it_found_and_its_page(capsys, settings):
    """It used to end with "6 done" alone."""
    settings.PIFARM_SITE_URL = "https://pifarm.lab/"
    campaign = Campaign.objects.create(name="stock or fast", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, [100.0, 102.0, 98.0])
    trials(lane, [120.0, 123.0, 117.0], preset_version=overclock())
    call_command("campaign", "status", str(campaign.code))
    said = capsys.readouterr().out
    assert "stock or fast: 6 done" in said
    assert "sha1sum throughput [MB/s], by preset:" in said
    assert "as the board is  n=3   100 ± 4.968  the baseline" in said
    assert "fast v2          n=3   120 ±" in said and "better: 20 % higher" in said
    assert said.rstrip().endswith(f"page: https://pifarm.lab{campaign.get_absolute_url()}")


def test_colours_say_what_a_line_means_and_no_color_turns_them_off(capsys, monkeypatch):
    board = make_board("bench-a")
    campaign = make_campaign(board, name="coloured", states=["done", "failed"])
    with pytest.raises(CommandError):
        call_command("campaign", "status", str(campaign.code), force_color=True)
    said = capsys.readouterr()
    assert "\x1b[31;1mcoloured: 1 done, 1 failed" in said.out  # in an error's red
    assert "\x1b[" not in said.err  # Django's red for all of standard error is gone
    monkeypatch.setenv("NO_COLOR", "1")
    with pytest.raises(CommandError):
        call_command("campaign", "status", str(campaign.code), force_color=True)
    assert "\x1b[" not in capsys.readouterr().out


def test_control_characters_in_a_name_reach_the_terminal_as_escapes(capsys):
    """An admin's board or preset may hold ESC or BEL; the terminal gets their escapes."""
    campaign = make_campaign(make_board("bench-a"), name="red\x1b[31m bell\x07", states=["done"])
    call_command("campaign", "status", str(campaign.code))
    said = capsys.readouterr().out
    assert "\x1b" not in said and "\x07" not in said
    assert "red\\x1b[31m bell\\x07: 1 done" in said


def test_runs_of_different_parameters_are_not_pooled_by_preset(capsys):
    """The demo's question ran iperf3 both ways; one table by preset pooled the two."""
    campaign = Campaign.objects.create(name="both ways", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, [100.0, 102.0, 98.0], params={"direction": "peer-to-board"})
    trials(lane, [50.0, 51.0, 49.0], params={"direction": "board-to-peer"})
    call_command("campaign", "status", str(campaign.code))
    said = capsys.readouterr().out
    assert "sha1sum throughput [MB/s]: its runs ran with different parameters" in said
    assert "by preset:" not in said


def test_cancelling_a_running_campaign_says_what_it_did_and_is_no_failure(capsys):
    """Cancelled runs are what a cancel asks for: its exit status is 0, and a run still
    stopping is said to be asked to stop, not stopped."""
    board = make_board("bench-a")
    campaign = make_campaign(board, name="long", states=["done", "running", "queued"])
    call_command("campaign", "cancel", str(campaign.code))  # no CommandError: exit status 0
    assert (
        "cancelled long: 1 queued run dropped; 1 running run asked to stop (a measurement that "
        "ends first is kept)" in capsys.readouterr().err
    )
    assert campaign.runs.get(state=Run.State.RUNNING).cancel_requested


def test_a_run_that_failed_still_fails_a_cancel_s_exit_status():
    board = make_board("bench-a")
    campaign = make_campaign(board, name="long", states=["failed", "queued"])
    with pytest.raises(CommandError) as status:
        call_command("campaign", "cancel", str(campaign.code))
    assert status.value.returncode == 1
