"""Registering a simulated Pi through the pages: fetch key, confirm, probe; nothing leaks."""

import logging

import pytest
from django.urls import reverse

from devices.models import Board, BoardTask

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


def register(client, node, auth="key"):
    data = {
        "name": f"sim-{node.name}",
        "host": node.host,
        "port": node.port,
        "username": node.user,
        "queue": "default",
        "auth_method": auth,
        "private_key": node.private_key_pem if auth == "key" else "",
        "password": node.password if auth == "password" else "",
    }
    response = client.post(reverse("devices:register"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return Board.objects.get(name=f"sim-{node.name}")


@pytest.mark.parametrize("auth", ["key", "password"])
def test_register_confirm_and_probe_leak_no_secret(
    pisim_farm, logged_in, staff, client, run_jobs, redis_queue, caplog, auth
):
    caplog.set_level(logging.DEBUG)
    node = pisim_farm.nodes["pi4"]
    secret = node.private_key_pem if auth == "key" else node.password
    secret_fragments = [
        line for line in secret.splitlines() if len(line) > 8 and "-----" not in line
    ]
    pages = []

    board = register(logged_in, node, auth)
    job_args = [job.args for job in redis_queue.jobs]
    assert job_args == [("fetch_host_key", board.tasks.get().pk)]
    run_jobs()

    confirm = logged_in.get(reverse("devices:confirm", args=[board.code]))
    pages.append(confirm.content.decode())
    assert node.host_key_fingerprint in pages[-1]

    response = logged_in.post(
        reverse("devices:confirm_decision", args=[board.code]),
        {"decision": "accept", "fingerprint": node.host_key_fingerprint},
    )
    assert response.url == board.get_absolute_url()
    job_args = [job.args for job in redis_queue.jobs]
    run_jobs()
    board.refresh_from_db()
    assert board.host_key.split()[:2] == node.host_key_public.split()[:2]
    assert board.tasks.filter(kind=BoardTask.Kind.PROBE).get().state == BoardTask.State.DONE

    pages.append(logged_in.get(board.get_absolute_url()).content.decode())
    assert "Raspberry Pi 4 Model B Rev 1.4" in pages[-1]
    for url in (
        reverse("devices:dashboard"),
        reverse("devices:board_live", args=[board.code]),
        reverse("devices:board_statuses"),
        reverse("devices:edit", args=[board.code]),
        *(reverse("devices:task_status", args=[task.code]) for task in board.tasks.all()),
    ):
        pages.append(logged_in.get(url).content.decode())
    client.force_login(staff)
    for url in (
        reverse("admin:devices_board_changelist"),
        reverse("admin:devices_board_change", args=[board.pk]),
        reverse("admin:devices_factsnapshot_changelist"),
        reverse("admin:devices_boardtask_changelist"),
        reverse("admin:django_rq_home"),
        reverse("admin:django_rq_jobs", args=[0]),
        reverse("admin:django_rq_finished_jobs", args=[0]),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        pages.append(response.content.decode())

    logs = "\n".join(record.getMessage() for record in caplog.records)
    for fragment in [secret, *secret_fragments]:
        assert all(fragment not in page for page in pages)
        assert fragment not in logs
        assert all(fragment not in repr(args) for args in job_args)
