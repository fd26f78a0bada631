"""A campaign's page, its live status, cancel and retry, its CSV, and the list of campaigns."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks import campaigns, progress, results
from benchmarks.models import Campaign, Lane, Run
from benchmarks.views.campaigns import CAMPAIGNS_PER_PAGE
from devices.models import FactSnapshot
from tests.benchmarks.factories import add_run, make_campaign, measure
from tests.devices.factories import TEST_PRIVATE_KEY, make_board

pytestmark = pytest.mark.django_db
OS_NAME = "Debian GNU/Linux 12 (bookworm)"


@pytest.fixture
def board():
    return make_board("bench-a")


@pytest.fixture
def finished_run(board):
    """A campaign whose first run is done (values, snapshot, tool version, suspect) and
    whose second one is still queued."""
    campaign = make_campaign(board, states=["done", "queued"])
    snapshot = FactSnapshot.objects.create(
        board=board, kernel_bits=64, userland_bits=32, os_name=OS_NAME, facts={}
    )
    run = campaign.runs.get(state=Run.State.DONE)
    end = timezone.now() - timedelta(minutes=5)  # before any status the tests ask for
    Run.objects.filter(pk=run.pk).update(
        snapshot=snapshot,
        details={"tool_version": "sha1sum (GNU coreutils) 9.1"},
        suspect=True,
        suspect_reasons=["the board throttled during the trial"],
        peer="controller",
        measure_s=0.25,
        started=end - timedelta(seconds=3),
        finished=end,
    )
    measure(run, throughput=(412.5, "MB/s"), seconds=(0.0388, "s"))
    run.refresh_from_db()
    return run


def url(name, campaign, *more):
    return reverse(f"benchmarks:{name}", args=[campaign.code, *more])


def test_the_page_shows_each_run_with_its_values_and_environment(client, viewer, finished_run):
    client.force_login(viewer)
    body = client.get(url("campaign", finished_run.campaign)).content.decode()
    row = body[body.index(f'id="run-{finished_run.code}"') :]
    row = row[: row.index("</tr>")]
    for text in [
        "bench-a",
        "as the board is",
        "size=16M",
        "<strong>412.5</strong> MB/s",
        "seconds <strong>0.0388</strong> s",
        "suspect",
        "the board throttled during the trial",
        "64-bit kernel, 32-bit userland",
        OS_NAME,
        "sha1sum (GNU coreutils) 9.1",
        "controller",
        "0.25 s",
    ]:
        assert text in row, text
    assert "1 of 2" in body  # runs ended
    assert '<progress class="campaign-progress" max="2" value="1">' in body


def test_a_viewer_sees_no_cancel_and_may_not_cancel(client, viewer, finished_run):
    campaign = finished_run.campaign
    queued = campaign.runs.get(state=Run.State.QUEUED)
    client.force_login(viewer)
    body = client.get(url("campaign", campaign)).content.decode()
    assert url("cancel_run", campaign, queued.code) not in body
    assert client.post(url("cancel_run", campaign, queued.code)).status_code == 403
    assert client.post(url("cancel", campaign)).status_code == 403
    assert client.post(url("retry", campaign)).status_code == 403
    queued.refresh_from_db()
    assert queued.state == Run.State.QUEUED


def test_an_operator_cancels_a_queued_run(client, operator, finished_run):
    campaign = finished_run.campaign
    queued = campaign.runs.get(state=Run.State.QUEUED)
    client.force_login(operator)
    page = client.get(url("campaign", campaign)).content.decode()
    assert f'action="{url("cancel_run", campaign, queued.code)}"' in page
    assert f'action="{url("cancel_run", campaign, finished_run.code)}"' not in page  # ended
    response = client.post(url("cancel_run", campaign, queued.code))
    assert response["Location"].endswith(f"#run-{queued.code}")
    queued.refresh_from_db()
    assert queued.state == Run.State.CANCELLED
    assert "oscar" in queued.reason


def test_a_run_of_another_campaign_is_not_found_here(client, operator, board, finished_run):
    other = make_campaign(board, name="other")
    stranger = other.runs.get()
    client.force_login(operator)
    response = client.post(url("cancel_run", finished_run.campaign, stranger.code))
    assert response.status_code == 404
    stranger.refresh_from_db()
    assert stranger.state == Run.State.QUEUED


def test_actions_take_only_post(client, operator, finished_run):
    client.force_login(operator)
    campaign = finished_run.campaign
    assert client.get(url("cancel", campaign)).status_code == 405
    assert client.get(url("retry", campaign)).status_code == 405
    assert client.post(url("campaign", campaign)).status_code == 405
    assert client.post(url("runs_csv", campaign)).status_code == 405


def test_cancelling_the_campaign_drops_its_queued_runs(client, operator, finished_run):
    client.force_login(operator)
    campaign = finished_run.campaign
    client.post(url("cancel", campaign))
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.CANCELLED
    assert not campaign.runs.filter(state=Run.State.QUEUED).exists()
    assert "Cancel the campaign" not in client.get(url("campaign", campaign)).content.decode()


def test_retry_queues_a_new_run_for_each_failed_one(client, operator, board):
    campaign = make_campaign(board, states=["failed", "queued"])  # the lane is still queued
    client.force_login(operator)
    page = client.get(url("campaign", campaign)).content.decode()
    assert "Retry failed runs (1)" in page
    client.post(url("retry", campaign))
    failed = campaign.runs.get(state=Run.State.FAILED)
    assert failed.retries.get().state == Run.State.QUEUED


def test_the_status_follows_lanes_and_sends_the_rows_that_changed(client, viewer, finished_run):
    campaign = finished_run.campaign
    Lane.objects.filter(campaign=campaign).update(
        state=Lane.State.RUNNING, step="measuring: sha1sum", log_tail="<b>bytes=16</b>"
    )
    client.force_login(viewer)
    first = client.get(url("campaign_status", campaign)).json()
    assert (first["total"], first["ended"]) == (2, 1)
    assert first["counts"]["done"] == 1 and first["counts"]["queued"] == 1
    assert first["lanes"][0]["step"] == "measuring: sha1sum"
    assert first["runs"] == []  # no "since": the page has every row already
    queued = campaign.runs.get(state=Run.State.QUEUED)
    Run.objects.filter(pk=queued.pk).update(state=Run.State.RUNNING, started=timezone.now())
    raw = client.get(url("campaign_status", campaign), {"since": first["since"]}).content
    assert b"<b>" not in raw  # board output reaches the page only escaped
    changed = client.get(url("campaign_status", campaign), {"since": first["since"]}).json()
    assert [run["code"] for run in changed["runs"]] == [str(queued.code)]
    assert f'id="run-{queued.code}"' in changed["runs"][0]["html"]


def test_the_status_refuses_in_json(client, finished_run):
    response = client.get(url("campaign_status", finished_run.campaign))
    assert response.status_code == 403
    assert response.json() == {"error": "Log in again to follow this."}


def test_the_csv_has_a_row_per_run_and_a_column_per_metric(client, viewer, finished_run):
    client.force_login(viewer)
    response = client.get(url("runs_csv", finished_run.campaign))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert list(rows[0]) == results.CSV_COLUMNS + ["seconds [s]", "throughput [MB/s]"]
    done = next(row for row in rows if row["run"] == str(finished_run.code))
    assert float(done["throughput [MB/s]"]) == 412.5
    assert (done["kernel_bits"], done["userland_bits"], done["os"]) == ("64", "32", OS_NAME)
    assert done["suspect_reasons"] == "the board throttled during the trial"
    assert len(rows) == 2


def test_the_dashboard_names_the_campaign_a_board_is_busy_with(client, viewer, board):
    campaign = make_campaign(board, name="nightly sha1", states=["running", "queued"])
    Lane.objects.filter(campaign=campaign).update(state=Lane.State.RUNNING)
    client.force_login(viewer)
    body = client.get(reverse("devices:dashboard")).content.decode()
    assert f'<a href="{campaign.get_absolute_url()}">campaign nightly sha1</a>' in body


def test_the_csv_header_is_defused_and_the_run_code_quoted_as_text(client, viewer, board):
    campaign = make_campaign(board, name="headers", states=["done"])
    measure(campaign.runs.get(), **{"=1+1": (1.0, "@SUM(A1)")})
    client.force_login(viewer)
    body = client.get(url("runs_csv", campaign)).getvalue().decode()
    header = next(csv.reader(io.StringIO(body)))
    assert "'=1+1 [@SUM(A1)]" in header
    assert f'"{campaign.runs.get().code}"' in body


def test_a_head_of_the_csv_builds_no_row(client, viewer, board, monkeypatch):
    """A server iterates a streamed body to its end for a HEAD too, sending none of it."""
    campaign = make_campaign(board, name="headed", states=["done"])
    built = []
    monkeypatch.setattr(results, "csv_lines", lambda found: built.append(found) or iter(["x\n"]))
    client.force_login(viewer)
    head = client.head(url("runs_csv", campaign))
    assert head.status_code == 200 and head["Content-Type"] == "text/csv; charset=utf-8"
    assert "headed" in head["Content-Disposition"] and built == []
    client.get(url("runs_csv", campaign))
    assert built == [campaign]


def test_the_csv_name_is_safe_and_its_cells_never_formulas_nor_secrets(client, viewer, board):
    campaign = make_campaign(board, name='a"b\r\nc/../=x', states=["failed"])
    Run.objects.filter(campaign=campaign).update(reason='=HYPERLINK("http://x")')
    client.force_login(viewer)
    response = client.get(url("runs_csv", campaign))
    disposition = response["Content-Disposition"]
    assert re.fullmatch(r'attachment; filename="[a-z0-9-]+-runs\.csv"', disposition), disposition
    body = response.getvalue().decode()
    row = next(csv.DictReader(io.StringIO(body)))
    assert row["reason"].startswith("'=")
    assert TEST_PRIVATE_KEY.splitlines()[1] not in body
    assert board.credential_ciphertext not in body


@pytest.mark.parametrize("separator", [";", "\t", ","])
def test_every_text_cell_is_quoted_so_no_separator_starts_a_cell(client, viewer, board, separator):
    """A spreadsheet that splits on ";" or a tab would start a new cell at "=1+1" in a bare
    cell; quoted, the cell stays whole."""
    campaign = make_campaign(board, name="quoted", states=["failed"])
    Run.objects.filter(campaign=campaign).update(reason=f"ok{separator}=1+1")
    client.force_login(viewer)
    body = client.get(url("runs_csv", campaign)).getvalue().decode()
    assert f'"ok{separator}=1+1"' in body
    header = body.splitlines()[0]
    assert header.startswith('"') and ',"reason",' in header


def test_the_list_counts_runs_by_state(client, viewer, operator, board):
    make_campaign(board, name="mixed", states=["done", "done", "failed"], created_by=operator)
    client.force_login(viewer)
    body = client.get(reverse("benchmarks:campaigns")).content.decode()
    assert "mixed" in body and "oscar" in body
    assert "2 done" in body and "1 failed" in body


def test_the_eta_comes_from_the_lane_s_measured_runs(board):
    campaign = make_campaign(board, states=[], estimated_s=1000)
    lane = campaign.lanes.get()
    end = timezone.now()
    for seconds in (4, 8):
        add_run(lane, state=Run.State.DONE, started=end - timedelta(seconds=seconds), finished=end)
    for _ in range(3):
        add_run(lane)
    found = progress.of(campaign)
    assert found.eta_s == pytest.approx(3 * (4 + 8) / 2)
    assert (found.total, found.ended, found.percent) == (5, 2, 40)


def test_without_a_finished_run_the_eta_is_the_estimate_s_share(board):
    campaign = make_campaign(board, states=["queued"] * 4, estimated_s=100)
    assert progress.of(campaign).eta_s == pytest.approx(100)


def test_the_settings_say_what_the_spec_asked(client, viewer, board):
    spec = {
        "benchmarks": [{"name": "sha1sum", "params": {"size": "16M"}}],
        "repetitions": {"min": 3, "max": 10, "target_pct": 2.0, "budget_s": 600},
    }
    campaign = make_campaign(board)
    Campaign.objects.filter(pk=campaign.pk).update(spec={**campaign.spec, **spec})
    client.force_login(viewer)
    body = client.get(url("campaign", campaign)).content.decode()
    assert "adaptive: 3 to 10, until the 95 % CI is within ± 2 % of the mean, within 10 min" in body
    assert 'sha1sum <span class="hint">size=16M</span>' in body


def messages_after(response) -> list[tuple[str, str]]:
    """(level, text) of the messages the page that a post redirected to shows."""
    assert response.status_code == 200
    return [(message.level_tag, str(message)) for message in response.context["messages"]]


def test_cancelling_a_campaign_again_says_it_is_being_cancelled_then_that_it_ended(
    client, operator, board
):
    campaign = make_campaign(board, states=["running", "queued"])
    client.force_login(operator)
    first = messages_after(client.post(url("cancel", campaign), follow=True))
    assert first == [
        (
            "success",
            "Cancelled bench campaign: 1 queued run dropped; 1 running run asked to stop (a "
            "measurement that ends first is kept).",
        )
    ]
    again = messages_after(client.post(url("cancel", campaign), follow=True))
    assert again == [
        ("info", "bench campaign is already being cancelled: 1 run is still stopping.")
    ]
    # the running run's job stops it
    campaign.runs.filter(state=Run.State.RUNNING).update(
        state=Run.State.CANCELLED, finished=timezone.now()
    )
    campaigns.finish_if_done(campaign.pk)
    ended = messages_after(client.post(url("cancel", campaign), follow=True))
    assert ended == [
        ("info", "bench campaign was already cancelled and has ended: there is nothing to cancel.")
    ]
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.CANCELLED


def test_cancelling_a_finished_campaign_says_it_had_finished(client, operator, board):
    campaign = make_campaign(board, states=["done"])
    campaigns.finish_if_done(campaign.pk)
    client.force_login(operator)
    said = messages_after(client.post(url("cancel", campaign), follow=True))
    assert said == [("info", "bench campaign had already finished: there is nothing to cancel.")]
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.FINISHED


def test_cancelling_a_run_again_says_it_is_being_stopped_or_has_ended(client, operator, board):
    campaign = make_campaign(board, states=["running", "queued"])
    running, queued = campaign.runs.order_by("sequence")
    client.force_login(operator)
    said = []
    for run in (running, running, queued, queued):
        said += messages_after(client.post(url("cancel_run", campaign, run.code), follow=True))
    assert said == [
        ("success", f"Stopping {running}."),
        ("info", f"{running} is already being stopped."),
        ("success", f"Cancelled {queued}."),
        ("info", f"{queued} has already ended (cancelled): there is nothing to cancel."),
    ]


def test_the_list_shows_the_newest_first_and_pages_the_rest(client, viewer, board):
    start = timezone.now() - timedelta(days=1)
    made = []
    for number in range(CAMPAIGNS_PER_PAGE + 5):
        campaign = make_campaign(board, name=f"campaign {number:03}", states=[])
        Campaign.objects.filter(pk=campaign.pk).update(created=start + timedelta(minutes=number))
        made.append(campaign.name)
    newest_first = made[::-1]
    client.force_login(viewer)
    listed = re.compile(r'campaign-name"><a href="[^"]+">([^<]+)</a>')
    first = client.get(reverse("benchmarks:campaigns")).content.decode()
    assert listed.findall(first) == newest_first[:CAMPAIGNS_PER_PAGE]
    assert "Page 1 of 2" in first
    second = client.get(reverse("benchmarks:campaigns"), {"page": 2}).content.decode()
    assert listed.findall(second) == newest_first[CAMPAIGNS_PER_PAGE:]


def test_retry_with_nothing_to_retry_leaves_a_finished_campaign_finished(client, operator, board):
    """A stale page's button, or a second operator's click after the first retry's runs ended."""
    campaign = make_campaign(board, states=["done"])
    campaigns.finish_if_done(campaign.pk)
    campaign.refresh_from_db()
    ended = campaign.finished
    client.force_login(operator)
    said = messages_after(client.post(url("retry", campaign), follow=True))
    assert said == [("info", "No failed, cancelled or skipped run is left to retry.")]
    campaign.refresh_from_db()
    assert (campaign.state, campaign.finished) == (Campaign.State.FINISHED, ended)
    assert "Cancel the campaign" not in client.get(url("campaign", campaign)).content.decode()


@pytest.mark.parametrize(
    "since",
    ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "2026-13-01T00:00:00+00:00",
     "yesterday", "2026-01-01T00:00:00"],
)  # fmt: skip
def test_a_since_out_of_range_or_bad_is_no_since(client, viewer, finished_run, since):
    """As for the page's first poll: no rows (the page was rendered with them as they are)."""
    client.force_login(viewer)
    response = client.get(url("campaign_status", finished_run.campaign), {"since": since})
    assert response.status_code == 200
    assert response.json()["runs"] == []


@pytest.mark.parametrize(
    ("states", "words"),
    [
        (["running", "queued"], "1 queued run dropped; 1 running run already being stopped"),
        (["done", "running"], "1 running run already being stopped"),  # not "no run was running"
    ],
)
def test_cancelling_the_campaign_does_not_ask_a_run_being_stopped_already_again(
    client, operator, board, states, words
):
    campaign = make_campaign(board, states=states)
    running = campaign.runs.get(state=Run.State.RUNNING)
    client.force_login(operator)
    client.post(url("cancel_run", campaign, running.code), follow=True)
    said = messages_after(client.post(url("cancel", campaign), follow=True))
    assert said == [("success", f"Cancelled bench campaign: {words}.")]


def test_the_page_says_the_order_of_the_presets_and_how_each_board_was_left(client, viewer, board):
    campaign = make_campaign(board, order=Campaign.Order.INTERLEAVED, seed=7)
    campaign.spec = {**campaign.spec, "presets": ["as-is", "quick@1"], "repetitions": 3}
    campaign.save()
    Lane.objects.filter(campaign=campaign).update(
        before={"version_id": None, "words": "no preset of pifarm's: its own config.txt"},
        left="put back as before the campaign: Stock (firmware defaults) v1",
    )
    client.force_login(viewer)
    body = client.get(url("campaign", campaign)).content.decode()
    assert (
        "presets in counterbalanced rounds, one per repetition: as-is, quick@1 | quick@1, "
        "as-is | as-is, quick@1 (every other board starts with quick@1)"
    ) in body
    assert "each board gets back the state it had before the campaign" in body
    assert (
        "Before the campaign: no preset of pifarm&#x27;s: its own config.txt. Afterwards: put "
        "back as before the campaign: Stock (firmware defaults) v1"
    ) in body
