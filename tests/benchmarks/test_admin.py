"""The admin for benchmarks: admins write custom benchmarks; campaigns and runs are history,
read-only, with their lanes and measurements, and never deleted."""

import pytest
from django.urls import reverse

from benchmarks.models import CustomBenchmark, Run
from tests.benchmarks.factories import make_campaign, measure
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


@pytest.fixture
def run():
    campaign = make_campaign(make_board(), states=["done"])
    done = campaign.runs.get()
    measure(done, throughput=(321.5, "MB/s"))
    return done


def custom_benchmark_data(**changes) -> dict:
    return {
        "name": "my-dd",
        "title": "dd",
        "command": "dd if=/dev/zero",
        "params": "{}",
        "parser": "regex",
        "pattern": "(?P<value>\\d+)",
        "metric": "value",
        "unit": "MB/s",
        "higher_is_better": "on",
        "repetitions": "3",
        "timeout_s": "60",
        **changes,
    }


def test_an_admin_adds_a_custom_benchmark(client, user):
    client.force_login(user)
    response = client.post(reverse("admin:benchmarks_custombenchmark_add"), custom_benchmark_data())
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert CustomBenchmark.objects.get().command == "dd if=/dev/zero"


def test_parameter_defaults_are_stored_as_the_text_the_admin_wrote(client, user):
    client.force_login(user)
    params = '{"size": "64M", "flags": "--fast \\"quoted\\"", "empty": ""}'
    data = custom_benchmark_data(params=params)
    response = client.post(reverse("admin:benchmarks_custombenchmark_add"), data)
    assert response.status_code == 302, response.content.decode()[-2000:]
    stored = CustomBenchmark.objects.get().params
    assert stored == {"size": "64M", "flags": '--fast "quoted"', "empty": ""}


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ('{"p": null}', "p: the default must be text, in quotes"),
        ('{"q": [1, 2]}', "q: the default must be text, in quotes"),
        ('{"r": {"a": 1}}', "r: the default must be text, in quotes"),
        ('{"n": 8}', "n: the default must be text, in quotes, such as &quot;8&quot;"),
        ('{"p": "' + "x" * 300 + '"}', "p: the default is 300 characters long"),
    ],
)
def test_the_admin_refuses_a_default_the_parameter_cannot_take(client, user, params, words):
    client.force_login(user)
    data = custom_benchmark_data(params=params)
    response = client.post(reverse("admin:benchmarks_custombenchmark_add"), data)
    assert response.status_code == 200
    assert words in response.content.decode()
    assert not CustomBenchmark.objects.exists()


def test_a_run_shows_its_measurements_and_cannot_be_changed(client, user, run):
    client.force_login(user)
    page = client.get(reverse("admin:benchmarks_run_change", args=[run.pk]))
    body = page.content.decode()
    assert page.status_code == 200
    assert "321.5" in body and "MB/s" in body
    assert 'name="_save"' not in body
    assert client.post(reverse("admin:benchmarks_run_change", args=[run.pk]), {}).status_code == 403


def test_runs_and_campaigns_are_never_deleted_in_the_admin(client, user, run):
    client.force_login(user)
    for url in [
        reverse("admin:benchmarks_run_delete", args=[run.pk]),
        reverse("admin:benchmarks_campaign_delete", args=[run.campaign.pk]),
    ]:
        assert client.post(url, {"post": "yes"}).status_code == 403
    assert Run.objects.filter(pk=run.pk).exists()


def test_a_campaign_shows_its_lanes(client, user, run):
    run.campaign.lanes.update(step="measuring: sha1sum of a sparse file")
    client.force_login(user)
    body = client.get(reverse("admin:benchmarks_campaign_change", args=[run.campaign.pk]))
    assert "measuring: sha1sum of a sparse file" in body.content.decode()
    assert client.get(reverse("admin:benchmarks_campaign_add")).status_code == 403
