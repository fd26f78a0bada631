import pytest
from django.urls import reverse

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
