"""/api/v1/comparisons/: saved comparisons listed, and a comparison's statistics, as its JSON
download has them (what the API hides: tests/api/test_leaks.py)."""

import pytest
from django.urls import reverse

from benchmarks.models import Campaign, Measurement
from tests.api.support import Api, every_page
from tests.benchmarks.factories import lane_on, overclock, saved_comparison, trials

pytestmark = pytest.mark.django_db


@pytest.fixture
def comparison(viewer):
    campaign = Campaign.objects.create(name="overclock", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, [100.0, 102.0, 98.0])
    trials(lane, [120.0, 123.0, 117.0], preset_version=overclock())
    return saved_comparison(viewer, campaign)


def test_the_list_names_each_comparison_and_its_choices(client, viewer, comparison):
    listed = every_page(Api(client, viewer), reverse("api:comparison-list"))
    assert [
        {key: item[key] for key in ("code", "name", "benchmark", "metric", "group_by")}
        for item in listed
    ] == [
        {
            "code": str(comparison.code),
            "name": "overclock against stock",
            "benchmark": "sha1sum",
            "metric": "throughput",
            "group_by": "preset",
        }
    ]


def test_the_detail_is_the_statistics_of_the_json_download(client, viewer, comparison):
    api = Api(client, viewer)
    found = api.get(reverse("api:comparison-detail", args=[comparison.code])).json()
    client.force_login(viewer)
    download = client.get(reverse("benchmarks:comparison_json", args=[comparison.code])).json()
    assert found == download
    faster = found["groups"][1]
    assert (faster["group"], faster["n"], faster["mean"]) == ("fast v2", 3, 120.0)
    assert faster["percent_change"] == pytest.approx(20.0)
    assert faster["ci_low"] == pytest.approx(120 - 7.452, abs=1e-3)  # t(0.975, 2) * 3 / sqrt(3)
    assert faster["outcome"] == "better"


def test_a_comparison_without_values_is_a_404_that_says_why(client, viewer, comparison):
    Measurement.objects.all().delete()
    response = Api(client, viewer).get(reverse("api:comparison-detail", args=[comparison.code]))
    assert response.status_code == 404
    assert response.json() == {"detail": "no throughput values of sha1sum in these runs"}
