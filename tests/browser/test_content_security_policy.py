"""Under the Content-Security-Policy, a staff user walks every kind of page, pifarm's, the
admin's and the RQ dashboard's, and the browser reports no violation and no console error;
the pages' own scripts (polling, admin actions) still work."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect
from rq import SimpleWorker

from devices.models import Application, BoardTask, FactSnapshot
from tests.browser.conftest import screenshot
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board
from tests.devices.test_views_presets import make_preset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def lab_with_one_of_everything():
    board = make_board(name="csp-pi")
    FactSnapshot.objects.create(
        board=board,
        facts={
            "config_txt": "arm_freq=1800\n",
            "config_path": "/boot/firmware/config.txt",
            "governor": "ondemand",
            "revision": {"family": "pi4_r14"},
        },
    )
    BoardTask.objects.create(board=board, kind=BoardTask.Kind.PROBE)
    preset = make_preset(name="csp preset")
    application = Application.objects.create(board=board, version=preset.latest)
    return board, preset, application


def pifarm_pages(board, preset, application):
    return [
        reverse("devices:dashboard"),
        reverse("devices:register"),
        reverse("devices:board", args=[board.code]),
        reverse("devices:edit", args=[board.code]),
        reverse("devices:snapshot", args=[board.code, board.latest_snapshot.pk]),
        reverse("devices:presets"),
        reverse("devices:preset_new"),
        reverse("devices:preset", args=[preset.code]),
        reverse("devices:preset_edit", args=[preset.code]),
        reverse("devices:preset_version", args=[preset.code, 1]) + f"?board={board.code}",
        reverse("devices:apply", args=[preset.code, 1]),
        reverse("devices:applications"),
        reverse("devices:application", args=[application.code]),
    ]


def admin_pages(board, job_id):
    return [
        reverse("admin:index"),
        reverse("admin:devices_board_changelist"),
        reverse("admin:devices_board_change", args=[board.pk]),
        reverse("admin:devices_preset_add"),
        reverse("admin:auth_user_add"),
        reverse("admin:axes_accessattempt_changelist"),
        reverse("admin:django_rq_dashboard_changelist"),
        reverse("admin:django_rq_queue_details", args=[0]),
        reverse("admin:django_rq_workers", args=[0]),
        reverse("admin:django_rq_failed_jobs", args=[0]),
        reverse("admin:django_rq_job_detail", args=[0, job_id]),
        reverse("admin:django_rq_delete_job", args=[0, job_id]),
        reverse("admin:django_rq_clear", args=[0]),
    ]


def test_every_page_runs_under_the_policy_without_a_complaint(
    page, live_server, staff, redis_queue, problems
):
    board, preset, application = lab_with_one_of_everything()
    job = redis_queue.enqueue("devices.work.perform", "probe", 0)  # waits: no worker in this test
    log_in(page, live_server, staff)
    for path in pifarm_pages(board, preset, application) + admin_pages(board, job.id):
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        page.wait_for_load_state("networkidle")
    assert problems == [], "\n".join(problems)


def test_the_admin_and_the_rq_dashboard_still_work_under_the_policy(
    page, live_server, staff, redis_queue, problems
):
    make_board(name="csp-pi")
    job = redis_queue.enqueue("devices.work.perform", "probe", 0)  # waits: no worker in this test
    log_in(page, live_server, staff)

    page.goto(live_server.url + reverse("admin:devices_board_changelist"))
    page.check("#action-toggle")
    expect(page.locator(".action-counter")).to_contain_text("1 of 1 selected")

    page.goto(live_server.url + reverse("admin:django_rq_dashboard_changelist"))
    jobs = reverse("admin:django_rq_jobs", args=[0])
    page.locator(f"a[href='{jobs}']").click()
    page.get_by_role("link", name=job.id).click()
    expect(page.locator("body")).to_contain_text("devices.work.perform")
    page.go_back()
    page.check("#action-toggle")
    expect(page.locator("input.action-select").first).to_be_checked()
    screenshot(page, "rq-dashboard-under-csp")
    page.select_option("select[name=action]", "delete")
    page.get_by_role("button", name="Go").click()
    page.get_by_role("button", name="Delete 1 job").click()
    expect(page.locator("body")).to_contain_text("successfully deleted")
    assert redis_queue.count == 0
    assert problems == [], "\n".join(problems)


def test_a_jobs_result_rows_open_the_result_under_the_policy(
    page, live_server, staff, redis_queue, problems
):
    """django-rq makes each result row a link with an onclick attribute, which the policy
    refuses: static/js/rq-dashboard.js makes the row one again."""
    job = redis_queue.enqueue("os.getpid")
    SimpleWorker([redis_queue], connection=redis_queue.connection).work(burst=True)
    log_in(page, live_server, staff)
    page.goto(live_server.url + reverse("admin:django_rq_job_detail", args=[0, job.id]))
    row = page.locator("tr.rq-clickable").first
    row.locator("td").first.click()
    page.wait_for_load_state("networkidle")
    assert f"/{job.id}/results/" in page.url, page.url
    # The browser reports django-rq's two onclick attributes as refused when it reads them (a
    # row's and its link's), on the job's page: nothing else may be.
    job_page = live_server.url + reverse("admin:django_rq_job_detail", args=[0, job.id])
    refused_attributes = [p for p in problems if p.startswith(job_page + ":") and "inline" in p]
    assert len(refused_attributes) <= 4, refused_attributes  # each as a message and a report
    assert [p for p in problems if p not in refused_attributes] == []
