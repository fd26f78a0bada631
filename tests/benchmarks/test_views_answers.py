"""The answer page of a question's campaign, and the 32/64-bit view."""

import html
import json
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks import answers
from benchmarks.forms_comparisons import CAMPAIGNS_LISTED, CAMPAIGNS_MAX
from benchmarks.models import Campaign, Run
from tests.benchmarks.answer_data import holm_campaign, network_campaign
from tests.benchmarks.factories import add_run, lane_on, trials

pytestmark = pytest.mark.django_db


def answer_url(campaign) -> str:
    return reverse("benchmarks:answer", args=[campaign.code])


def test_the_answer_page_says_the_answer_then_each_metric_s_charts(client, viewer):
    campaign = network_campaign()
    client.force_login(viewer)
    body = client.get(answer_url(campaign)).content.decode()
    sentence = re.search(r'<p class="answer card" id="answer"><strong>(.*?)</strong>', body)
    assert html.unescape(sentence.group(1)).startswith("Yes, a little: the overclock made")
    assert 'http-equiv="refresh"' not in body  # finished: nothing to wait for
    for index in range(3):  # download, upload, scp: each its comparison
        chart = rf'<script id="metric-{index}-means-chart" type="application/json">(.*?)</script>'
        figure = json.loads(html.unescape(re.search(chart, body, re.S).group(1)))
        assert figure["layout"]["yaxis"]["title"]["text"].endswith("[Mbit/s]") or index == 2
    assert body.count("Open in the comparison builder") == 3
    link = html.unescape(re.search(r'href="(/comparisons/new/\?[^"]*)"', body).group(1))
    opened = client.get(link)
    assert opened.status_code == 200 and opened.context["result"].n == 6


def test_the_page_gives_each_metric_the_summary_s_adjusted_p_not_its_own(client, viewer):
    campaign = holm_campaign()
    client.force_login(viewer)
    body = client.get(answer_url(campaign)).content.decode()
    row = next(row for row in answers.answer(campaign).overview.rows if row.benchmark == "scp")
    alone = row.comparison.p_value  # what the scp section's own Holm adjustment gave
    assert f"Holm-adjusted p = {row.comparison.p_adjusted:.3g}" in body
    assert f"Holm-adjusted p = {alone:.3g}" not in body
    assert "worse:" not in body


def test_a_metric_of_more_runs_than_the_builder_takes_by_code_gets_a_hint_not_a_link(
    client, viewer, monkeypatch
):
    # The builder takes at most RUN_CODES_MAX codes (its address is capped): a link naming
    # 20,000 runs was 740 KB and answered 414.
    monkeypatch.setattr(answers, "RUN_CODES_MAX", 5)  # each direction's row holds 6 runs
    campaign = network_campaign()
    client.force_login(viewer)
    body = client.get(answer_url(campaign)).content.decode()
    assert body.count("Open in the comparison builder") == 1  # scp's: by campaign, no codes
    assert body.count("more than the comparison builder takes by their codes (5)") == 2


def test_a_running_campaign_s_answer_is_provisional_and_reloads(client, viewer):
    campaign = network_campaign(finished=False)
    add_run(campaign.lanes.get(), state=Run.State.QUEUED, benchmark="scp")
    client.force_login(viewer)
    body = client.get(answer_url(campaign)).content.decode()
    assert "Not yet: 18 of 19 runs have ended." in body
    assert 'http-equiv="refresh"' in body and "Provisional" in body


def test_the_campaign_page_links_its_answer_and_a_plain_campaign_has_none(client, viewer):
    campaign = network_campaign()
    client.force_login(viewer)
    assert answer_url(campaign) in client.get(campaign.get_absolute_url()).content.decode()
    plain = Campaign.objects.create(name="plain", spec={})
    assert client.get(answer_url(plain)).status_code == 404
    assert answer_url(plain) not in client.get(plain.get_absolute_url()).content.decode()


@pytest.mark.parametrize("spec", [{"question": ["network"]}, {"question": {"a": 1}}, ["network"]])
def test_a_campaign_whose_spec_names_no_question_has_no_answer_page(client, viewer, spec):
    """A spec saved by an older version, or edited in the admin: no question, not a 500."""
    campaign = Campaign.objects.create(name="odd spec", spec=spec)
    client.force_login(viewer)
    assert client.get(answer_url(campaign)).status_code == 404
    assert answer_url(campaign) not in client.get(campaign.get_absolute_url()).content.decode()


def test_the_bitness_page_pairs_userlands_with_n_units_and_kernel_bits(client, viewer):
    campaign = Campaign.objects.create(name="32 and 64", spec={}, finished=timezone.now())
    trials(lane_on(campaign, "pi4-32", userland=32), [100.0, 101.0, 99.0])
    trials(lane_on(campaign, "pi4-64"), [110.0, 111.0, 109.0, 110.5])
    trials(lane_on(campaign, "pi3-64", model="Raspberry Pi 3 Model B Rev 1.2"), [50.0, 51.0])
    client.force_login(viewer)
    listed = client.get(reverse("benchmarks:comparisons")).content.decode()
    assert reverse("benchmarks:bitness") in listed
    body = client.get(reverse("benchmarks:bitness"), {"campaigns": [campaign.code]})
    body = body.content.decode()
    assert "sha1sum throughput <small>[MB/s]</small>" in body
    assert "64-bit userland against 32-bit userland" in body
    assert "3 / 4" in body  # n of each side
    assert "64 / 64" in body  # the kernels: a 32-bit userland on a 64-bit kernel
    assert "2 trials of 64-bit userland on Raspberry Pi 3 Model B Rev 1.2" in body
    forest = json.loads(
        html.unescape(
            re.search(
                r'<script id="forest-chart" type="application/json">(.*?)</script>', body, re.S
            ).group(1)
        )
    )
    assert forest["data"][0]["y"] == ["sha1sum throughput<br>[MB/s]<br>n=3 vs 4"]
    assert forest["data"][0]["x"][0] == pytest.approx(10.0, abs=0.2)


def test_an_answer_of_suspect_trials_only_says_so_and_offers_them(client, viewer):
    campaign = network_campaign()
    campaign.runs.update(suspect=True)
    client.force_login(viewer)
    body = client.get(answer_url(campaign)).content.decode()
    assert "No run has a value yet" not in body  # they have: all of them suspect
    assert "No comparison without the 18 suspect trials" in body
    assert 'href="?include_suspects=on">include them</a> to see what they say' in body


def test_the_bitness_page_lists_the_newest_campaigns_and_takes_an_older_ones_pasted_code(
    client, viewer
):
    """As the comparison builder does: thousands of campaigns listed made hundreds of KB."""
    oldest = Campaign.objects.create(name="32 and 64", spec={}, finished=timezone.now())
    trials(lane_on(oldest, "pi4-32", userland=32), [100.0, 101.0, 99.0])
    trials(lane_on(oldest, "pi4-64"), [110.0, 111.0, 109.0])
    Campaign.objects.bulk_create(
        Campaign(name=f"later {i}", spec={}) for i in range(CAMPAIGNS_LISTED + 5)
    )
    client.force_login(viewer)
    bitness = reverse("benchmarks:bitness")
    page = client.get(bitness).content.decode()
    assert page.count("<option") == CAMPAIGNS_LISTED
    assert f'value="{oldest.code}"' not in page
    assert f"The newest {CAMPAIGNS_LISTED} are listed" in page
    pasted = client.get(bitness, {"runs": str(oldest.code)}).content.decode()
    assert "64-bit userland against 32-bit userland" in pasted and "3 / 3" in pasted
    chosen = client.get(bitness, {"campaigns": [oldest.code]}).content.decode()
    assert f'<option value="{oldest.code}" selected>' in chosen and "3 / 3" in chosen
    # The builder's cap, on the chosen and the pasted together.
    later = [
        str(code) for code in Campaign.objects.exclude(pk=oldest.pk).values_list("code", flat=True)
    ]
    over = client.get(bitness, {"campaigns": later[:CAMPAIGNS_MAX], "runs": str(oldest.code)})
    assert f"At most {CAMPAIGNS_MAX} campaigns" in over.content.decode()
    full = client.get(bitness, {"campaigns": later[1:CAMPAIGNS_MAX], "runs": str(oldest.code)})
    assert "3 / 3" in full.content.decode()


def test_the_answer_page_says_what_limited_each_group_and_why_cannot_tell(client, viewer):
    campaign = network_campaign()  # the download's overclock side is faster than the ceiling
    campaign.runs.update(environment={"link": {"device": "eth0", "mbit": 100, "mtu": 1500}})
    client.force_login(viewer)
    body = html.unescape(client.get(answer_url(campaign)).content.decode())
    assert body.count("<h3>What limited it</h3>") == 2  # the two iperf3 metrics, not scp
    assert (
        "<li><strong>as the board is</strong>: at the link's ceiling (94.0 of 94.1 Mbit/s): "
        "a faster CPU cannot show here</li>" in body
    )
    # The upload: no difference, both sides at the ceiling.
    verdicts = re.findall(r'class="verdict outcome-([a-z-]+)"><span class="cell-text">(.*?)<', body)
    assert ("cannot-tell", "cannot tell: both at the link's ceiling") in verdicts
    assert "At the link's ceiling: 95 % of the TCP goodput ceiling or more" in body
