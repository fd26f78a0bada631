"""The comparison pages: the builder, saving, a saved comparison's page, its CSV and JSON."""

import csv
import io
import json
import re
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.forms_comparisons import CAMPAIGNS_LISTED, CAMPAIGNS_MAX, RUN_CODES_MAX
from benchmarks.models import Campaign, Comparison
from benchmarks.views.comparisons import COMPARISONS_PER_PAGE
from tests.benchmarks.factories import lane_on, overclock, trials

pytestmark = pytest.mark.django_db
BASELINE = [100.0, 102.0, 98.0]
FASTER = [120.0, 123.0, 117.0]


@pytest.fixture
def campaign():
    """Three trials as the board is and three with an overclock, on one board."""
    campaign = Campaign.objects.create(name="overclock", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, FASTER, preset_version=overclock())
    return campaign


def builder(client, **params):
    return client.get(reverse("benchmarks:comparison_new"), params)


def saved(campaign, **fields) -> Comparison:
    fields = {
        "name": "=HYPERLINK(1)",
        "benchmark": "sha1sum",
        "metric": "throughput",
        "group_by": "preset",
        **fields,
    }
    comparison = Comparison.objects.create(**fields)
    comparison.campaigns.set([campaign])
    return comparison


def save_form(campaign, **fields) -> dict:
    """The save form of the builder's usual choice: sha1sum's throughput by preset."""
    return {
        "campaigns": [campaign.code],
        "metric": "sha1sum:throughput",
        "group_by": "preset",
        **fields,
    }


def figure(response, name: str) -> dict:
    found = re.search(
        rf'<script id="{name}" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    return json.loads(found.group(1))


def test_the_builder_asks_for_a_selection_first(client, viewer):
    client.force_login(viewer)
    response = builder(client)
    assert response.status_code == 200
    assert b"Next: choose the metric" in response.content
    assert b"plotly" not in response.content


def test_a_campaign_chosen_shows_its_groups_charts_and_verdicts(client, viewer, campaign):
    client.force_login(viewer)
    response = builder(client, campaigns=[campaign.code])
    assert response.status_code == 200
    text = response.content.decode()
    assert "throughput [MB/s] of sha1sum" in text
    assert "fast v2" in text and "as the board is" in text
    assert "better: 20 % higher" in text
    means = figure(response, "means-chart")
    assert means["data"][0]["y"] == [100.0, 120.0]
    assert sorted(means["data"][1]["y"]) == sorted(BASELINE + FASTER)
    assert means["layout"]["yaxis"]["title"]["text"] == "throughput [MB/s]"
    changes = figure(response, "changes-chart")
    assert changes["data"][0]["y"] == [pytest.approx(20.0)]
    assert "/static/vendor/plotly.min.js" in text and "/static/js/comparison.js" in text


def test_the_baseline_and_grouping_can_be_chosen(client, viewer, campaign):
    client.force_login(viewer)
    response = builder(
        client,
        campaigns=[campaign.code],
        metric="sha1sum:throughput",
        group_by="preset",
        baseline="fast v2",
    )
    assert "worse: 17 % lower" in response.content.decode()


def test_an_unknown_run_code_is_named(client, viewer, campaign):
    client.force_login(viewer)
    response = builder(client, runs="not-a-code")
    assert "No run or campaign has the code not-a-code." in response.content.decode()


def test_a_viewer_saves_a_comparison_and_reads_it(client, viewer, campaign):
    client.force_login(viewer)
    response = client.post(
        reverse("benchmarks:comparison_save"),
        save_form(campaign, baseline="fast v2", name="overclock against stock"),
    )
    comparison = Comparison.objects.get()
    assert response.status_code == 302 and response.url == comparison.get_absolute_url()
    assert (comparison.owner, comparison.baseline, comparison.group_by) == (
        viewer,
        "fast v2",
        "preset",
    )
    assert list(comparison.campaigns.all()) == [campaign]
    page = client.get(comparison.get_absolute_url())
    assert page.status_code == 200
    assert "worse: 17 % lower" in page.content.decode()
    listed = client.get(reverse("benchmarks:comparisons"))
    assert "overclock against stock" in listed.content.decode()


@pytest.mark.parametrize("posted", ["nonexistent", ""])
def test_a_saved_comparison_keeps_the_baseline_its_result_used(client, viewer, campaign, posted):
    # Not a group (posted by hand, or left from another grouping): the result falls back to the
    # first group, and that is what is saved, not a name the saved page would ignore.
    client.force_login(viewer)
    response = client.post(
        reverse("benchmarks:comparison_save"),
        save_form(campaign, baseline=posted, name="against the first group"),
    )
    comparison = Comparison.objects.get()
    assert response.status_code == 302 and comparison.baseline == "as the board is"
    page = client.get(comparison.get_absolute_url())
    assert page.context["result"].baseline == comparison.baseline


def test_a_save_posted_twice_keeps_one_comparison(client, viewer, campaign):
    client.force_login(viewer)
    form = save_form(campaign, name="overclock against stock")
    first = client.post(reverse("benchmarks:comparison_save"), form)
    again = client.post(reverse("benchmarks:comparison_save"), form)
    renamed = client.post(reverse("benchmarks:comparison_save"), {**form, "name": "another"})
    assert first.status_code == again.status_code == renamed.status_code == 302
    assert again.url == first.url != renamed.url
    assert Comparison.objects.count() == 2


def test_saving_needs_a_name_and_a_post(client, viewer, campaign):
    client.force_login(viewer)
    url = reverse("benchmarks:comparison_save")
    response = client.post(url, {"campaigns": [campaign.code]})
    assert response.status_code == 400
    assert not Comparison.objects.exists()
    assert client.get(url).status_code == 405


@pytest.mark.parametrize(
    ("name", "named"),
    [("\u202eevil", "U+202E RIGHT-TO-LEFT OVERRIDE"), ("\x01\x1b[31mred", "U+0001")],
)
def test_a_name_with_a_control_or_bidi_character_is_refused(client, viewer, campaign, name, named):
    client.force_login(viewer)
    response = client.post(
        reverse("benchmarks:comparison_save"),
        save_form(campaign, name=name),
    )
    assert response.status_code == 400
    assert f"control or invisible character ({named})" in response.content.decode()
    assert not Comparison.objects.exists()


def test_the_anonymous_are_sent_to_log_in(client, campaign):
    comparison = saved(campaign)
    for url in (
        reverse("benchmarks:comparison_new"),
        comparison.get_absolute_url(),
        reverse("benchmarks:comparison_csv", args=[comparison.code]),
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response.url


def test_an_unknown_comparison_is_a_404(client, viewer):
    client.force_login(viewer)
    url = reverse("benchmarks:comparison", args=["00000000-0000-0000-0000-000000000000"])
    assert client.get(url).status_code == 404


def test_the_csv_has_a_row_per_group_with_its_figures_and_environment(client, viewer, campaign):
    client.force_login(viewer)
    comparison = saved(campaign)
    response = client.get(reverse("benchmarks:comparison_csv", args=[comparison.code]))
    assert response["Content-Disposition"].endswith(f'-{str(comparison.code)[:8]}.csv"')
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    rows = [row for row in table if not row["board"]]  # each board's rows: the test below
    assert [row["group"] for row in rows] == ["as the board is", "fast v2"]
    assert rows[0]["baseline"] == "true" and rows[0]["ratio"] == ""
    assert rows[1]["baseline"] == "false"
    assert float(rows[1]["percent_change"]) == pytest.approx(20.0)
    assert rows[1]["outcome"] == "better"
    assert rows[1]["n"] == "3" and rows[1]["kernel"] == "6.6.51-v8+"
    assert rows[1]["preset_version"] == "fast v2"
    # A reader that takes every bare cell for a number (text is quoted) reads it whole.
    typed = csv.reader(io.StringIO(response.content.decode()), quoting=csv.QUOTE_NONNUMERIC)
    header, first = next(typed), next(typed)
    assert dict(zip(header, first, strict=True))["n"] == 3.0


def test_the_json_has_the_choices_groups_and_boards(client, viewer, campaign):
    client.force_login(viewer)
    comparison = saved(campaign)
    found = client.get(reverse("benchmarks:comparison_json", args=[comparison.code])).json()
    assert (found["metric"], found["unit"], found["baseline"]) == (
        "throughput",
        "MB/s",
        "as the board is",
    )
    baseline, group = found["groups"]
    assert baseline["baseline"] is True and group["baseline"] is False
    # What a group does not have is null, as in the API: the baseline has no change.
    assert baseline["ratio"] is None and baseline["percent_ci_low"] is None
    assert group["sample_median"] is None and group["sample_n"] is None  # every trial drawn
    assert group["boards"]["bench-a"]["n"] == 3
    assert group["environment"]["board model"] == "Raspberry Pi 4 Model B Rev 1.5"
    assert group["p_holm"] == pytest.approx(group["p_value"])


def test_a_cell_a_spreadsheet_would_run_is_defused(client, viewer):
    campaign = Campaign.objects.create(name="hostile", spec={})
    trials(lane_on(campaign, "bench-h", model="=cmd|' /C calc'!A0"), BASELINE)
    client.force_login(viewer)
    comparison = saved(campaign, group_by="board_model")
    response = client.get(reverse("benchmarks:comparison_csv", args=[comparison.code]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows[0]["group"].startswith("'=") and rows[0]["board_model"].startswith("'=")


def test_the_csv_names_its_columns_alike_and_gives_each_board_a_row(client, viewer, campaign):
    """It mixed "p_holm" with "board model" and packed each board's figures into one cell."""
    client.force_login(viewer)
    comparison = saved(campaign)
    response = client.get(reverse("benchmarks:comparison_csv", args=[comparison.code]))
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert all(re.fullmatch(r"[a-z0-9_]+", column) for column in table[0]), list(table[0])
    groups = [row for row in table if not row["board"]]
    boards = [row for row in table if row["board"]]
    assert [row["group"] for row in groups] == ["as the board is", "fast v2"]
    assert [(row["group"], row["board"], row["n"]) for row in boards] == [
        ("as the board is", "bench-a", "3"),
        ("fast v2", "bench-a", "3"),
    ]
    assert boards[1]["mean"] == groups[1]["mean"] and boards[1]["p_holm"] == ""


def test_a_text_cell_holding_a_separator_is_quoted(client, viewer):
    campaign = Campaign.objects.create(name="hostile", spec={})
    trials(lane_on(campaign, "bench-h", model="Pi;=1+1\t=2+2"), BASELINE)
    client.force_login(viewer)
    comparison = saved(campaign, group_by="board_model")
    body = client.get(reverse("benchmarks:comparison_csv", args=[comparison.code])).content
    assert b'"Pi;=1+1\t=2+2"' in body


def queries_of_the_page(client, comparison) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(comparison.get_absolute_url()).status_code == 200
    return len(queries)


def test_the_page_makes_as_many_queries_for_many_runs_as_for_few(client, viewer, campaign):
    client.force_login(viewer)
    comparison = saved(campaign)
    few = queries_of_the_page(client, comparison)
    more = lane_on(campaign, "bench-b", userland=32)
    trials(more, FASTER * 20, preset_version=overclock("faster", 1))
    trials(more, BASELINE * 20, suspect=True)
    assert queries_of_the_page(client, comparison) == few


def test_large_finite_values_make_a_page_a_csv_and_a_json(client, viewer):
    campaign = Campaign.objects.create(name="huge", spec={})
    trials(lane_on(campaign, "bench-a"), [1e200, 1])
    trials(lane_on(campaign, "bench-b"), [2e200, 3])
    client.force_login(viewer)
    comparison = saved(campaign, group_by="board")
    assert client.get(comparison.get_absolute_url()).status_code == 200
    response = client.get(reverse("benchmarks:comparison_csv", args=[comparison.code]))
    groups = [
        row for row in csv.DictReader(io.StringIO(response.content.decode())) if not row["board"]
    ]
    assert groups[1]["p_value"]
    found = client.get(reverse("benchmarks:comparison_json", args=[comparison.code])).json()
    assert found["groups"][1]["outcome"] == "no difference"


def test_a_comparison_whose_campaigns_were_deleted_says_there_are_no_values(client, viewer):
    campaign = Campaign.objects.create(name="gone soon", spec={})
    trials(lane_on(campaign, "bench-a"), BASELINE)
    client.force_login(viewer)
    comparison = saved(campaign)
    campaign.delete()
    response = client.get(comparison.get_absolute_url())
    assert response.status_code == 200
    assert b"no throughput values of sha1sum in these runs" in response.content
    for kind in ("csv", "json"):
        response = client.get(reverse(f"benchmarks:comparison_{kind}", args=[comparison.code]))
        assert response.status_code == 404
        assert response.content == b"no throughput values of sha1sum in these runs"


def test_more_run_codes_or_campaigns_than_the_address_holds_are_refused_in_words(
    client, viewer, campaign
):
    client.force_login(viewer)
    codes = "\n".join(str(uuid.uuid4()) for _ in range(RUN_CODES_MAX + 1))
    response = builder(client, runs=codes)
    assert response.status_code == 200
    assert f"At most {RUN_CODES_MAX} run codes" in response.content.decode()
    assert "choose their campaign instead" in response.content.decode()
    response = builder(client, campaigns=[campaign.code] * (CAMPAIGNS_MAX + 1))
    assert f"At most {CAMPAIGNS_MAX} campaigns" in response.content.decode()
    assert "plotly" not in response.content.decode()
    assert (
        b"better: 20 % higher" in builder(client, campaigns=[campaign.code] * CAMPAIGNS_MAX).content
    )


def test_the_campaigns_cap_counts_the_pasted_ones_so_what_the_builder_shows_can_be_saved(
    client, viewer, campaign
):
    others = Campaign.objects.bulk_create(
        Campaign(name=f"other {i}", spec={}) for i in range(CAMPAIGNS_MAX)
    )
    client.force_login(viewer)
    chosen = [str(other.code) for other in others]  # the cap, campaign pasted besides them
    response = builder(client, campaigns=chosen, runs=str(campaign.code))
    assert f"At most {CAMPAIGNS_MAX} campaigns" in response.content.decode()
    assert "plotly" not in response.content.decode()
    # One fewer chosen: the builder shows the result, and its Save form saves it.
    page = builder(client, campaigns=chosen[1:], runs=str(campaign.code)).content.decode()
    assert "better: 20 % higher" in page
    save = re.search(r"<form [^>]*save-comparison.*?</form>", page, re.S).group(0)
    posted = {"name": "all of them"}
    for name, value in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', save):
        posted.setdefault(name, []).append(value)
    response = client.post(reverse("benchmarks:comparison_save"), posted)
    assert response.status_code == 302
    assert Comparison.objects.get().campaigns.count() == CAMPAIGNS_MAX
    # A pasted campaign also chosen counts once (and is saved once).
    page = builder(client, campaigns=[*chosen[1:], campaign.code], runs=str(campaign.code))
    assert "better: 20 % higher" in page.content.decode()
    assert page.content.decode().count(f'name="campaigns" value="{campaign.code}"') == 1


def test_the_builder_lists_the_newest_campaigns_and_takes_an_older_ones_pasted_code(
    client, viewer, campaign
):
    Campaign.objects.bulk_create(
        Campaign(name=f"later {i}", spec={}) for i in range(CAMPAIGNS_LISTED + 5)
    )
    client.force_login(viewer)
    page = builder(client).content.decode()
    assert page.count("<option") == CAMPAIGNS_LISTED
    assert f'value="{campaign.code}"' not in page  # the oldest
    assert f"The newest {CAMPAIGNS_LISTED} are listed" in page
    response = builder(client, runs=str(campaign.code))
    assert "better: 20 % higher" in response.content.decode()
    chosen = builder(client, campaigns=[campaign.code]).content.decode()
    assert f'<option value="{campaign.code}" selected>' in chosen  # still chosen when sent again


def test_a_pasted_campaign_code_is_saved_as_a_campaign(client, viewer, campaign):
    client.force_login(viewer)
    client.post(
        reverse("benchmarks:comparison_save"),
        {
            "runs": str(campaign.code),
            "metric": "sha1sum:throughput",
            "group_by": "preset",
            "name": "pasted",
        },
    )
    comparison = Comparison.objects.get()
    assert list(comparison.campaigns.all()) == [campaign] and not comparison.runs.exists()


def test_a_network_throughput_draws_the_line_rate_and_the_goodput_ceiling(client, viewer):
    network = Campaign.objects.create(name="network", spec={})
    link = {"link": {"device": "eth0", "mbit": 100, "mtu": 1500}}
    trials(
        lane_on(network, "bench-n"),
        [91.0, 92.5, 93.0],
        benchmark="iperf3-tcp",
        unit="Mbit/s",
        environment=link,
    )
    client.force_login(viewer)
    response = client.get(saved(network, benchmark="iperf3-tcp").get_absolute_url())
    layout = figure(response, "means-chart")["layout"]
    assert [shape["y0"] for shape in layout["shapes"]] == [100, pytest.approx(94.148, abs=1e-3)]
    assert [label["text"] for label in layout["annotations"]] == [
        "line rate 100 Mbit/s",
        "TCP goodput ceiling 94.1 Mbit/s",
    ]
    assert b"the TCP goodput ceiling over it" in response.content


def test_trials_against_the_measured_clock_a_colour_per_group(client, viewer):
    clocked = Campaign.objects.create(name="clocked", spec={})
    lane = lane_on(clocked, "bench-c")
    trials(lane, BASELINE, clock_mhz=1500.0)
    trials(lane, FASTER, clock_mhz=1800.0, preset_version=overclock())
    trials(lane, [99.0])  # its run read no clock: not drawn
    client.force_login(viewer)
    response = client.get(saved(clocked).get_absolute_url())
    chart = figure(response, "clock-chart")
    assert [trace["name"] for trace in chart["data"]] == ["as the board is (n=3)", "fast v2 (n=3)"]
    assert chart["data"][1]["x"] == [1800.0] * 3 and sorted(chart["data"][1]["y"]) == sorted(FASTER)
    assert chart["data"][0]["marker"]["color"] != chart["data"][1]["marker"]["color"]
    assert chart["layout"]["title"]["text"].endswith("n=6")
    assert chart["layout"]["xaxis"]["title"]["text"] == "median Arm clock under load [MHz]"


def test_without_a_measured_clock_the_page_says_why_there_is_no_scatter(client, viewer, campaign):
    client.force_login(viewer)
    response = client.get(saved(campaign).get_absolute_url())
    assert b'id="clock-chart"' not in response.content
    assert b"no run of these read its Arm clock under load" in response.content


def test_the_page_offers_runs_of_each_group_for_their_telemetry(client, viewer, campaign):
    client.force_login(viewer)
    response = client.get(saved(campaign).get_absolute_url())
    page = response.content.decode()
    offered = re.findall(r'<option value="([0-9a-f-]{36})">', page)
    runs = {str(code) for code in campaign.runs.values_list("code", flat=True)}
    assert len(offered) == 6 and set(offered) == runs
    assert '<optgroup label="fast v2">' in page
    assert 'data-url="/runs/00000000-0000-0000-0000-000000000000/telemetry.json"' in page


def test_the_list_of_comparisons_comes_in_pages_with_a_pager(client, viewer):
    Comparison.objects.bulk_create(
        Comparison(name=f"comparison {i:03}", benchmark="sha1sum", metric="throughput")
        for i in range(COMPARISONS_PER_PAGE + 5)
    )
    client.force_login(viewer)
    listed = reverse("benchmarks:comparisons")
    first = client.get(listed).content.decode()
    assert first.count('<td data-label="Comparison"') == COMPARISONS_PER_PAGE
    assert f"comparison {COMPARISONS_PER_PAGE + 4:03}" in first  # the newest first
    assert "comparison 004" not in first
    assert 'href="?page=2#comparisons" rel="next"' in first
    second = client.get(listed, {"page": 2}).content.decode()
    assert second.count('<td data-label="Comparison"') == 5
    assert all(f"comparison {i:03}" in second for i in range(5))  # the oldest
    assert 'href="?page=1#comparisons" rel="prev"' in second
    assert "comparisons 101–105 of 105" in second
    # As the list of campaigns: past the last page, its last page; not a number, the first.
    assert "comparisons 101–105 of 105" in client.get(listed, {"page": 9}).content.decode()
    assert "comparisons 1–100 of 105" in client.get(listed, {"page": "x"}).content.decode()
