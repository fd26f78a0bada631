"""Retention (benchmarks.retention): archived and deleted campaigns, and old telemetry."""

import html
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks import retention
from benchmarks.models import Campaign, Comparison, Measurement, Run, ShareLink
from devices import roles
from tests.benchmarks.factories import make_campaign, measure
from tests.conftest import member
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(member(django_user_model, "lab-admin", roles.ADMIN))
    return client


def shared(campaign) -> ShareLink:
    comparison = Comparison.objects.create(
        name="shared", benchmark="sha1sum", metric="throughput", group_by="board"
    )
    comparison.campaigns.set([campaign])
    return ShareLink.objects.create(comparison=comparison)


def finished(name="old one", states=("done", "done")) -> Campaign:
    campaign = make_campaign(make_board(f"b-{name[:6]}"), name=name, states=states)
    Campaign.objects.filter(pk=campaign.pk).update(finished=timezone.now(), state="finished")
    for run in campaign.runs.all():
        measure(run, throughput=(100.0, "MB/s"))
    campaign.refresh_from_db()
    return campaign


def test_an_archived_campaign_leaves_the_list_and_its_shares_answer_410_until_restored(
    client, viewer
):
    campaign = finished()
    link = shared(campaign)
    assert client.get(link.get_absolute_url()).status_code == 200
    assert retention.archive(Campaign.objects.all()) == 1
    gone = client.get(link.get_absolute_url())
    assert gone.status_code == 410
    words = gone.content.decode()
    assert "A campaign this comparison shows was archived on " in words
    assert "old one" not in words  # a share's reader is told no names
    client.force_login(viewer)
    assert "old one" not in client.get(reverse("benchmarks:campaigns")).content.decode()
    retention.restore(Campaign.objects.all())
    client.logout()
    assert client.get(link.get_absolute_url()).status_code == 200


def test_an_unfinished_campaign_is_not_archived():
    campaign = make_campaign(make_board(), states=["queued"])
    assert retention.archive(Campaign.objects.filter(pk=campaign.pk)) == 0


def test_an_admin_deletes_a_finished_campaign_seeing_what_goes_with_it(admin_client, client):
    campaign = finished()
    link = shared(campaign)
    url = reverse("admin:benchmarks_campaign_delete", args=[campaign.pk])
    page = admin_client.get(url).content.decode()
    assert "Runs: 2" in page and "Measurements: 2" in page
    assert "1 saved comparison(s) that show them are kept but marked withdrawn" in page
    admin_client.post(url, {"post": "yes"})
    assert not Campaign.objects.exists() and not Run.objects.exists()
    assert not Measurement.objects.exists()
    admin_client.logout()
    gone = client.get(link.get_absolute_url())
    assert gone.status_code == 410
    words = html.unescape(gone.content.decode())
    assert "This comparison's data is gone: a campaign it showed was deleted on " in words
    assert "old one" not in words


def test_a_running_campaign_cannot_be_deleted(admin_client):
    campaign = make_campaign(make_board(), states=["queued"])
    url = reverse("admin:benchmarks_campaign_delete", args=[campaign.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    assert Campaign.objects.filter(pk=campaign.pk).exists()


def test_an_operator_cannot_delete_or_archive(client, operator):
    campaign = finished()
    client.force_login(operator)
    url = reverse("admin:benchmarks_campaign_delete", args=[campaign.pk])
    assert client.post(url, {"post": "yes"}).status_code in (302, 403)  # not staff: to login
    assert Campaign.objects.filter(pk=campaign.pk).exists()


def test_old_telemetry_is_removed_and_the_measurements_stay(settings, client, viewer):
    settings.PIFARM_TELEMETRY_DAYS = 30
    campaign = finished(states=("done", "done", "done"))
    old, recent, _ = campaign.runs.order_by("sequence")
    samples = [{"t": 0, "cpu": 50}]
    Run.objects.filter(pk__in=[old.pk, recent.pk]).update(telemetry=samples, peer_telemetry=samples)
    Run.objects.filter(pk=old.pk).update(finished=timezone.now() - timedelta(days=31))
    Run.objects.filter(pk=recent.pk).update(finished=timezone.now() - timedelta(days=29))
    assert retention.remove_old_telemetry() == 1
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.telemetry == [] and old.peer_telemetry == [] and old.telemetry_removed
    assert old.measurements.count() == 1
    assert recent.telemetry == samples
    assert retention.remove_old_telemetry() == 0  # once
    client.force_login(viewer)
    note = client.get(reverse("benchmarks:run_telemetry", args=[old.code])).json()["note"]
    assert note.startswith("This run's telemetry was removed on ")
    assert "by the retention (PIFARM_TELEMETRY_DAYS)" in note


def test_a_retention_of_0_keeps_everything(settings):
    settings.PIFARM_TELEMETRY_DAYS = 0
    campaign = finished()
    Run.objects.filter(campaign=campaign).update(
        telemetry=[{"t": 0}], finished=timezone.now() - timedelta(days=3650)
    )
    assert retention.remove_old_telemetry() == 0


def test_a_withdrawn_comparison_says_so_on_its_own_page(admin_client):
    campaign = finished()
    comparison = shared(campaign).comparison
    url = reverse("admin:benchmarks_campaign_delete", args=[campaign.pk])
    admin_client.post(url, {"post": "yes"})
    page = html.unescape(admin_client.get(comparison.get_absolute_url()).content.decode())
    assert "This comparison is not what was saved: a campaign it showed was deleted on " in page


def test_deleting_a_selection_with_a_running_campaign_leaves_it_and_says_so(admin_client):
    running = make_campaign(make_board("b-run"), name="still running", states=["queued"])
    done = finished()
    changelist = reverse("admin:benchmarks_campaign_changelist")
    chosen = {"action": "delete_selected", "_selected_action": [running.pk, done.pk]}
    page = html.unescape(admin_client.post(changelist, chosen).content.decode())
    assert "still running" not in page and "old one" in page
    assert "1 of the chosen campaigns have not finished: they are left as they are" in page
    response = admin_client.post(
        changelist, {**chosen, "_selected_action": [done.pk], "post": "yes"}
    )
    assert response.status_code == 302
    assert list(Campaign.objects.values_list("name", flat=True)) == ["still running"]
