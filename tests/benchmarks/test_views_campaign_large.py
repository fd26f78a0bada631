"""A campaign of thousands of runs: its page shows one page of results, its status sends only
what the page shows, in as many queries and about as many bytes as for a small campaign, and
its CSV still holds every run."""

import csv
import io
import math
import re
import tracemalloc

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from benchmarks import campaigns
from benchmarks.campaigns import RETRY_BATCH
from benchmarks.models import Campaign, Lane, Measurement, Run
from benchmarks.results import CSV_CHUNK
from benchmarks.views.campaigns import RUNS_PER_PAGE
from tests.benchmarks.factories import add_runs, make_campaign
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
ROW = re.compile(r'<tr id="run-([0-9a-f-]{36})"')
RUN_INSERT = f'INSERT INTO "{Run._meta.db_table}"'


@pytest.fixture
def board():
    return make_board("bench-a")


def campaign_of(board, runs: int):
    """A campaign of `runs` done runs, each with a value, on one board."""
    campaign = make_campaign(board, name=f"{runs} runs", states=[])
    made = add_runs(campaign.lanes.get(), runs, state=Run.State.DONE, measure_s=0.5)
    value = {"metric": "throughput", "value": 400.0, "unit": "MB/s", "higher_is_better": True}
    Measurement.objects.bulk_create([Measurement(run=run, **value) for run in made], batch_size=500)
    return campaign


def in_page_order(campaign) -> list[str]:
    return [str(code) for code in campaign.runs.order_by("sequence").values_list("code", flat=True)]


def get(client, path, **params):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, params)
    assert response.status_code == 200
    return response, len(queries)


def test_the_page_of_a_large_campaign_shows_one_page_in_as_many_queries(client, viewer, board):
    small, large = campaign_of(board, 2 * RUNS_PER_PAGE), campaign_of(board, 20 * RUNS_PER_PAGE)
    client.force_login(viewer)
    pages = {}
    for campaign in (small, large):
        response, queries = get(client, campaign.get_absolute_url())
        pages[campaign] = (response.content.decode(), queries)
    (small_body, small_queries), (large_body, large_queries) = pages[small], pages[large]
    assert ROW.findall(large_body) == in_page_order(large)[:RUNS_PER_PAGE]
    assert large_queries == small_queries
    # Ten times the runs, the same page but for the pager's figures.
    assert len(large_body) - len(small_body) < len(small_body) / 100
    assert "Page 1 of 20" in large_body


def test_the_pages_together_show_every_run_once(client, viewer, board):
    campaign = campaign_of(board, 2 * RUNS_PER_PAGE + 7)
    client.force_login(viewer)
    shown = []
    for number in (1, 2, 3):
        body = client.get(campaign.get_absolute_url(), {"page": number}).content.decode()
        shown += ROW.findall(body)
        assert f"Page {number} of 3" in body
    assert shown == in_page_order(campaign)
    past_the_end = client.get(campaign.get_absolute_url(), {"page": 99}).content.decode()
    assert ROW.findall(past_the_end) == in_page_order(campaign)[-7:]
    assert client.get(campaign.get_absolute_url(), {"page": "x"}).status_code == 200


def test_the_status_sends_only_the_changed_rows_of_the_page_shown(client, viewer, board):
    """Every run ending at once (a cancel) or a "since" long ago: no more than a page."""
    small, large = campaign_of(board, 2 * RUNS_PER_PAGE), campaign_of(board, 20 * RUNS_PER_PAGE)
    client.force_login(viewer)
    status = {}
    for campaign in (small, large):
        path = reverse("benchmarks:campaign_status", args=[campaign.code])
        first = client.get(path).json()
        campaign.runs.update(state=Run.State.CANCELLED, finished=timezone.now())
        status[campaign] = get(client, path, since=first["since"], page=2)
        rows = [row["code"] for row in status[campaign][0].json()["runs"]]
        assert rows == in_page_order(campaign)[RUNS_PER_PAGE : 2 * RUNS_PER_PAGE]
        ancient, _ = get(client, path, since="2000-01-01T00:00:00+00:00")
        assert len(ancient.json()["runs"]) == RUNS_PER_PAGE
    (small_answer, small_queries), (large_answer, large_queries) = status[small], status[large]
    assert large_queries == small_queries
    assert len(large_answer.content) - len(small_answer.content) < len(small_answer.content) / 100


def test_a_cancelled_run_s_redirect_opens_the_page_that_shows_it(client, operator, board):
    """The table lists board by board, by name: bench-a's runs come first, though its lane
    was made last."""
    later = make_campaign(make_board("bench-b"), states=[])
    add_runs(later.lanes.get(), RUNS_PER_PAGE)
    add_runs(Lane.objects.create(campaign=later, board=board), RUNS_PER_PAGE + 1)
    third_page = later.runs.filter(board__name="bench-b").order_by("sequence")[RUNS_PER_PAGE - 1]
    client.force_login(operator)
    response = client.post(reverse("benchmarks:cancel_run", args=[later.code, third_page.code]))
    assert response["Location"] == f"{later.get_absolute_url()}?page=3#run-{third_page.code}"
    body = client.get(response["Location"]).content.decode()
    assert str(third_page.code) in ROW.findall(body)


def test_the_csv_still_holds_every_run(client, viewer, board):
    campaign = campaign_of(board, 3 * RUNS_PER_PAGE)
    client.force_login(viewer)
    response = client.get(reverse("benchmarks:runs_csv", args=[campaign.code]))
    sheet = response.getvalue().decode()
    assert [row["run"] for row in csv.DictReader(io.StringIO(sheet))] == in_page_order(campaign)


def test_the_rows_read_no_output_telemetry_nor_probe_of_a_run(client, viewer, board):
    """What no row shows: up to 256 KiB of output and a sample a second per run, the board's
    whole probe; reading them for every row made a large campaign's CSV several times slower."""
    campaign = campaign_of(board, 3)
    client.force_login(viewer)
    status = reverse("benchmarks:campaign_status", args=[campaign.code])
    for path, params in [
        (campaign.get_absolute_url(), {}),
        (status, {"since": "2000-01-01T00:00:00+00:00"}),
        (reverse("benchmarks:runs_csv", args=[campaign.code]), {}),
    ]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path, params)
            assert response.status_code == 200
            b"".join(response)  # a streamed CSV reads its runs as it is sent
        read = " ".join(query["sql"] for query in queries.captured_queries)
        for column in ("raw_output", "telemetry", "peer_telemetry", "environment", "facts"):
            assert f'."{column}"' not in read, f"{path} reads {column}"


def cancelled_on_two_boards(runs_each: int):
    """A cancelled campaign of two ended lanes, each of runs_each cancelled runs and one done."""
    campaign = make_campaign(make_board(f"retry-a-{runs_each}"), name="cancelled", states=[])
    lanes = [
        campaign.lanes.get(),
        Lane.objects.create(campaign=campaign, board=make_board(f"retry-b-{runs_each}")),
    ]
    for lane in lanes:
        add_runs(lane, 1, state=Run.State.DONE)
        add_runs(lane, runs_each, state=Run.State.CANCELLED, finished=timezone.now())
    Lane.objects.filter(campaign=campaign).update(state=Lane.State.DONE, finished=timezone.now())
    campaign.state, campaign.finished = Campaign.State.CANCELLED, timezone.now()
    campaign.save()
    return campaign


def test_retrying_a_large_campaign_takes_as_many_queries_a_batch_as_a_small_one(
    client, operator, redis_queue, django_capture_on_commit_callbacks
):
    """One by one, a 12,000-run retry held SQLite's lock for 24 s: other lanes' writes failed
    with "database is locked". Now a few queries a batch of RETRY_BATCH runs, whatever their
    number."""
    small, large = cancelled_on_two_boards(3), cancelled_on_two_boards(600)
    others = {}
    for campaign in (small, large):  # what the page does for the first, a job for the second
        with (
            django_capture_on_commit_callbacks(execute=True),
            CaptureQueriesContext(connection) as queries,
        ):
            campaigns.retry_failed(campaign)
        others[campaign] = sum(not q["sql"].startswith(RUN_INSERT) for q in queries)
    batches = math.ceil(large.runs.filter(retries__isnull=False).count() / RETRY_BATCH)
    assert batches > 1
    assert others[large] <= batches * others[small]
    assert redis_queue.count == 4  # each ended lane queued again, once
    for campaign, runs_each in ((small, 3), (large, 600)):
        campaign.refresh_from_db()
        assert (campaign.state, campaign.finished) == (Campaign.State.RUNNING, None)
        for lane in campaign.lanes.all():
            assert lane.state == Lane.State.QUEUED
            runs = list(lane.runs.order_by("sequence"))
            cancelled, retries = runs[1 : 1 + runs_each], runs[1 + runs_each :]
            assert [run.retry_of_id for run in retries] == [run.pk for run in cancelled]
            assert {run.state for run in retries} == {Run.State.QUEUED}
            assert [run.repetition for run in retries] == [run.repetition for run in cancelled]
            assert len({run.sequence for run in runs}) == len(runs)


def test_a_large_retry_is_a_job_whose_progress_the_page_shows(
    client, operator, redis_queue, django_capture_on_commit_callbacks
):
    """12,000 runs took 7 s inside the request: past RETRY_BATCH a job does it."""
    campaign = cancelled_on_two_boards(RETRY_BATCH)  # 2 x RETRY_BATCH runs
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):  # the job is queued on commit
        posted = client.post(reverse("benchmarks:retry", args=[campaign.code]), follow=True)
        client.post(reverse("benchmarks:retry", args=[campaign.code]))  # twice: one job
    assert f"Retrying {2 * RETRY_BATCH:,} runs: this page shows how far it is" in (
        posted.content.decode()
    )
    assert campaign.runs.filter(retries__isnull=False).count() == 0  # nothing yet
    status = client.get(reverse("benchmarks:campaign_status", args=[campaign.code])).json()
    assert status["retrying"] == {"done": 0, "total": 2 * RETRY_BATCH}
    page = client.get(campaign.get_absolute_url()).content.decode()
    assert f"Retrying failed runs: 0 of {2 * RETRY_BATCH} queued again" in page
    [job] = redis_queue.jobs
    assert job.func_name == "benchmarks.campaigns.retry_in_job"
    with django_capture_on_commit_callbacks(execute=True):
        job.perform()  # as a worker would, in this process
    assert campaign.runs.filter(retries__isnull=False).count() == 2 * RETRY_BATCH
    status = client.get(reverse("benchmarks:campaign_status", args=[campaign.code])).json()
    assert status["retrying"] is None
    assert len(redis_queue.jobs) == 1 + 2  # the retry's (performed here), then each lane


def csv_peak_bytes(client, campaign) -> tuple[int, bool]:
    """The most memory Python held while the CSV was made and read, and whether it streamed."""
    tracemalloc.start()
    try:
        response = client.get(reverse("benchmarks:runs_csv", args=[campaign.code]))
        rows = sum(chunk.count(b"\n") for chunk in response)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows == campaign.runs.count() + 1
    return peak, response.streaming


@pytest.mark.slow  # twelve CSV chunks of runs: a scale test, not one for the loop
def test_the_csv_streams_in_as_much_memory_for_many_runs_as_for_few(client, viewer, board):
    """Runs are read CSV_CHUNK at a time: the memory of a chunk, whatever their number."""
    few, many = campaign_of(board, 2 * CSV_CHUNK), campaign_of(board, 10 * CSV_CHUNK)
    client.force_login(viewer)
    csv_peak_bytes(client, few)  # the first request loads what every one then uses
    (few_peak, few_streamed), (many_peak, many_streamed) = (
        csv_peak_bytes(client, campaign) for campaign in (few, many)
    )
    assert few_streamed and many_streamed
    # Five times the runs: read all at once, they took about five times the memory.
    assert many_peak < 2 * few_peak
