import base64
import subprocess

import pytest
from django.urls import reverse

from devices import ssh
from devices.models import Board, BoardTask

from .factories import TEST_PRIVATE_KEY, TEST_PUBLIC_KEY, make_board

pytestmark = pytest.mark.django_db

OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJy5yJ0dWq3o9D3m3R6qkYcZ2nU6oT5l0b6cPzY1gq1X"


def edit_data(board, **overrides):
    data = {
        "name": board.name,
        "host": board.host,
        "port": board.port,
        "username": board.username,
        "tags": board.tags,
        "queue": board.queue,
        "auth_method": board.auth_method,
        "private_key": "",
        "password": "",
    }
    return {**data, **overrides}


def test_editing_tags_keeps_the_key_and_the_credential(logged_in):
    board = make_board()
    response = logged_in.post(
        reverse("devices:edit", args=[board.code]), edit_data(board, tags="a,b")
    )
    board.refresh_from_db()
    assert response.url == board.get_absolute_url()
    assert board.tag_list == ["a", "b"]
    assert board.host_key == TEST_PUBLIC_KEY
    assert board.credential().secret == TEST_PRIVATE_KEY


def test_a_new_address_unpins_the_key_and_fetches_the_new_one(logged_in, redis_queue):
    board = make_board(status=Board.Status.OFFLINE)
    url = reverse("devices:edit", args=[board.code])
    response = logged_in.post(url, edit_data(board, host="10.213.9.99"))
    board.refresh_from_db()
    assert response.url == reverse("devices:confirm", args=[board.code])
    assert board.host_key == ""
    assert board.status == Board.Status.NEW
    assert board.tasks.get().kind == BoardTask.Kind.FETCH_HOST_KEY


def test_switching_to_a_password_needs_the_password(logged_in):
    board = make_board()
    url = reverse("devices:edit", args=[board.code])
    response = logged_in.post(url, edit_data(board, auth_method="password"))
    assert "password" in response.context["form"].errors
    response = logged_in.post(url, edit_data(board, auth_method="password", password="pw-1"))
    board.refresh_from_db()
    assert board.credential().kind == "password"
    assert board.credential().secret == "pw-1"


def corrupted(key_text: str) -> str:
    """The key with one bit flipped in its public half, which then fails paramiko's checks."""
    lines = key_text.strip().splitlines()
    blob = bytearray(base64.b64decode("".join(lines[1:-1])))
    blob[59] ^= 0x01
    return f"{lines[0]}\n{base64.encodebytes(bytes(blob)).decode()}{lines[-1]}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TEST_PUBLIC_KEY, "This is a public key"),
        ("hello", "not an OpenSSH private key"),
        (corrupted(TEST_PRIVATE_KEY), "not an OpenSSH private key"),
    ],
)
def test_key_mistakes_get_a_message_that_says_what_is_wrong(logged_in, text, message):
    board = make_board()
    url = reverse("devices:edit", args=[board.code])
    response = logged_in.post(url, edit_data(board, private_key=text))
    assert message in " ".join(response.context["form"].errors["private_key"])
    assert "paste it again" in response.content.decode()


@pytest.mark.slow
def test_a_key_with_a_passphrase_is_explained(logged_in, tmp_path):
    key = tmp_path / "k"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(key)], check=True
    )
    board = make_board()
    url = reverse("devices:edit", args=[board.code])
    response = logged_in.post(url, edit_data(board, private_key=key.read_text()))
    assert "passphrase" in " ".join(response.context["form"].errors["private_key"])


def test_removing_a_board_needs_a_post_and_retires_it(logged_in):
    board = make_board()
    assert logged_in.get(reverse("devices:remove", args=[board.code])).status_code == 405
    logged_in.post(reverse("devices:remove", args=[board.code]))
    assert Board.objects.get().retired is not None  # tests/devices/test_retire.py: the rest


def test_replacing_a_pinned_key_needs_an_explicit_accept(logged_in, redis_queue):
    board = make_board(status=Board.Status.NEEDS_ATTENTION)
    logged_in.post(reverse("devices:fetch_host_key", args=[board.code]))
    Board.objects.filter(pk=board.pk).update(offered_host_key=OTHER_KEY)  # what the job found
    page = logged_in.get(reverse("devices:confirm", args=[board.code])).content.decode()
    assert ssh.fingerprint(TEST_PUBLIC_KEY) in page
    assert ssh.fingerprint(OTHER_KEY) in page
    decide = reverse("devices:confirm_decision", args=[board.code])
    logged_in.post(decide, {"decision": "reject", "fingerprint": ssh.fingerprint(OTHER_KEY)})
    board.refresh_from_db()
    assert board.host_key == TEST_PUBLIC_KEY
    assert board.offered_host_key == ""
    Board.objects.filter(pk=board.pk).update(offered_host_key=OTHER_KEY)
    logged_in.post(decide, {"decision": "accept", "fingerprint": ssh.fingerprint(OTHER_KEY)})
    board.refresh_from_db()
    assert board.host_key == OTHER_KEY


def test_board_statuses_answer_json_for_the_dashboard(logged_in):
    board = make_board(status=Board.Status.OFFLINE, status_reason="did not answer")
    data = logged_in.get(reverse("devices:board_statuses")).json()
    assert data["boards"] == [
        {
            "code": str(board.code),
            "status": "offline",
            "label": "offline",
            "reason": "did not answer",
            "last_seen": None,
        }
    ]
    assert data["pending"] is False


@pytest.mark.parametrize("name", ["edit", "remove", "confirm", "fetch_host_key", "board_live"])
def test_connection_pages_need_a_login(client, name):
    board = make_board()
    response = client.get(reverse(f"devices:{name}", args=[board.code]))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
