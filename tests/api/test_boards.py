"""GET /api/v1/boards/: every board with its latest probe, in service or retired."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from devices.models import Board, FactSnapshot
from tests.api.support import Api
from tests.devices.factories import make_board, probed_pi4

pytestmark = pytest.mark.django_db
BOARDS = reverse("api:board-list")
FIELDS = {
    "code", "name", "status", "status_reason", "last_seen", "tags", "queue", "created",
    "retired", "host_key_confirmed", "latest_probe",
}  # fmt: skip


def probe(board, **columns):
    return FactSnapshot.objects.create(board=board, facts={"simulated": True}, **columns)


def test_a_board_shows_its_state_and_its_latest_probe(client, viewer):
    board = make_board("bench-a", tags="lab, pi4")
    probe(board, model="old probe")
    probed_pi4(board, userland_bits=32, temperature_c=51.5, throttled=0)
    body = Api(client, viewer).get(BOARDS).json()
    assert body["count"] == 1 and body["next"] is None
    [row] = body["results"]
    assert set(row) == FIELDS
    assert row["code"] == str(board.code) and row["name"] == "bench-a"
    assert row["tags"] == ["lab", "pi4"] and row["host_key_confirmed"] is True
    probe_row = dict(row["latest_probe"])
    assert probe_row.pop("taken_at")
    assert probe_row == {
        "model": "Raspberry Pi 4 Model B Rev 1.4",
        "revision": "c03114",
        "simulated": True,
        "kernel_bits": 64,
        "userland_bits": 32,
        "os_name": "Debian GNU/Linux 12 (bookworm)",
        "temperature_c": 51.5,
        "throttled": 0,
    }


def test_a_board_never_probed_has_no_latest_probe(client, viewer):
    board = make_board("bench-a")
    response = Api(client, viewer).get(reverse("api:board-detail", args=[board.code]))
    assert response.json()["latest_probe"] is None


def test_retired_boards_are_listed_and_can_be_left_out(client, viewer):
    make_board("bench-a")
    retired = make_board("bench-old")
    Board.objects.filter(pk=retired.pk).update(retired=timezone.now())
    api = Api(client, viewer)
    names = [row["name"] for row in api.get(BOARDS).json()["results"]]
    assert names == ["bench-a", "bench-old"]
    assert [row["name"] for row in api.get(BOARDS, in_service="true").json()["results"]] == [
        "bench-a"
    ]
    assert [row["name"] for row in api.get(BOARDS, in_service="false").json()["results"]] == [
        "bench-old"
    ]
    response = api.get(BOARDS, in_service="maybe")
    assert response.status_code == 400 and response.json() == {"in_service": "true or false."}


def test_an_unknown_board_is_a_json_404(client, viewer):
    api = Api(client, viewer)
    response = api.get(reverse("api:board-detail", args=["6f0c9b8e-3a43-4c55-9d4e-0a1b2c3d4e5f"]))
    assert response.status_code == 404 and response.json()["detail"]
    assert api.get(f"{BOARDS}42/").status_code == 404  # no integer ids


def test_a_user_without_a_role_is_refused_naming_the_role(client, django_user_model):
    nobody = django_user_model.objects.create_user("nobody")
    response = Api(client, nobody).get(BOARDS)
    assert response.status_code == 403
    assert response.json()["detail"] == (
        "This needs the viewer role; you have no role. An admin can change it."
    )


def test_boards_are_read_only(client, user):
    api = Api(client, user)  # an admin: may edit boards on the pages, not here
    assert api.post(BOARDS, {"name": "new"}).status_code == 405
    assert not Board.objects.exists()


def test_the_list_reads_a_fixed_number_of_queries(client, viewer):
    api = Api(client, viewer)
    api.get(reverse("api:board-list"))  # its first use records last_used: once a minute

    def queries_for_boards(count):
        for i in range(Board.objects.count(), count):
            probe(make_board(f"bench-{i}", host=f"10.213.9.{10 + i}"), model="Pi")
        with CaptureQueriesContext(connection) as captured:
            assert api.get(BOARDS).json()["count"] == count
        return len(captured)

    assert queries_for_boards(2) == queries_for_boards(12)
