import pytest
from django.urls import reverse

from devices.models import Board, BoardTask, FactSnapshot

from .factories import TEST_PRIVATE_KEY, make_board

pytestmark = pytest.mark.django_db


def test_the_admin_never_shows_a_credential(client, staff):
    client.force_login(staff)
    board = make_board()
    key_line = TEST_PRIVATE_KEY.splitlines()[1]
    for url in (
        reverse("admin:devices_board_changelist"),
        reverse("admin:devices_board_change", args=[board.pk]),
    ):
        body = client.get(url).content.decode()
        assert "bench-1" in body
        assert key_line not in body
        assert board.credential_ciphertext not in body


def test_saving_a_board_in_the_admin_keeps_its_credential(client, staff):
    client.force_login(staff)
    board = make_board()
    url = reverse("admin:devices_board_change", args=[board.pk])
    data = {
        "name": "bench-renamed",
        "host": board.host,
        "port": 22,
        "username": "pi",
        "tags": "",
        "queue": "default",
        "status": "maintenance",
        "status_reason": "",
    }
    assert client.post(url, data).status_code == 302
    board.refresh_from_db()
    assert board.name == "bench-renamed"
    assert board.credential().secret == TEST_PRIVATE_KEY


def _board_with_history():
    board = make_board()
    FactSnapshot.objects.create(board=board, facts={})
    BoardTask.objects.create(board=board, kind="probe", state="done")
    return board


def test_the_admin_never_deletes_a_board(client, staff):
    client.force_login(staff)
    board = _board_with_history()
    url = reverse("admin:devices_board_changelist")
    actions = [name for name, _ in client.get(url).context["action_form"].fields["action"].choices]
    assert "delete_selected" not in actions and "retire_boards" in actions
    assert client.get(reverse("admin:devices_board_delete", args=[board.pk])).status_code == 403
    client.post(url, {"action": "delete_selected", "_selected_action": [board.pk], "index": 0})
    assert Board.objects.filter(pk=board.pk).exists()
    assert (board.snapshots.count(), board.tasks.count()) == (1, 1)


def test_the_admin_retires_and_restores_boards(client, staff):
    client.force_login(staff)
    idle = _board_with_history()
    busy = make_board("bench-2")
    BoardTask.objects.create(board=busy, kind="health", state="running")
    url = reverse("admin:devices_board_changelist")
    selected = [idle.pk, busy.pk]
    response = client.post(
        url, {"action": "retire_boards", "_selected_action": selected, "index": 0}, follow=True
    )
    body = response.content.decode()
    assert "Bench-2 was not removed, because work is queued or running on it" in body  # capfirst
    assert f'<a href="{busy.get_absolute_url()}">health check (running)</a>' in body
    assert "Retired 1 board(s)." in body
    idle.refresh_from_db()
    busy.refresh_from_db()
    assert idle.retired is not None and idle.retired_by == staff
    assert busy.retired is None
    assert (idle.snapshots.count(), idle.tasks.count()) == (1, 1)
    retired = client.get(url, {"service": "retired"}).context["cl"].queryset
    assert list(retired) == [idle]
    client.post(url, {"action": "restore_boards", "_selected_action": [idle.pk], "index": 0})
    idle.refresh_from_db()
    assert idle.retired is None


def rename_in_the_admin(client, board, name: str):
    data = {
        "name": name,
        "host": board.host,
        "port": 22,
        "username": "pi",
        "tags": "",
        "queue": "default",
        "status": "online",
        "status_reason": "",
    }
    return client.post(reverse("admin:devices_board_change", args=[board.pk]), data)


def test_renaming_a_board_to_a_name_in_service_is_a_form_error(client, staff):
    client.force_login(staff)
    make_board("bench-2")
    response = rename_in_the_admin(client, make_board(), "bench-2")
    assert response.status_code == 200
    assert "A board in service already has this name." in response.content.decode()


def test_renaming_a_board_controller_in_the_admin_is_a_form_error(client, staff):
    client.force_login(staff)
    board = make_board()
    response = rename_in_the_admin(client, board, "Controller")
    assert response.status_code == 200
    assert "is what a campaign calls the worker&#x27;s own host" in response.content.decode()
    board.refresh_from_db()
    assert board.name == "bench-1"


@pytest.mark.parametrize("model", ["factsnapshot", "boardtask"])
def test_the_admin_never_deletes_history(client, staff, model):
    client.force_login(staff)
    board = _board_with_history()
    record = board.snapshots.get() if model == "factsnapshot" else board.tasks.get()
    url = reverse(f"admin:devices_{model}_delete", args=[record.pk])
    assert client.get(url).status_code == 403


def test_the_admin_refuses_a_queue_no_worker_serves(client, staff):
    client.force_login(staff)
    board = make_board()
    url = reverse("admin:devices_board_change", args=[board.pk])
    data = {"name": board.name, "username": "pi", "tags": "", "status": "online"}

    response = client.post(url, {**data, "queue": "bench-gone", "status_reason": ""})

    assert response.status_code == 200
    assert "No worker queue is named &#x27;bench-gone&#x27;; known: default." in (
        response.content.decode()
    )
    board.refresh_from_db()
    assert board.queue == "default"
