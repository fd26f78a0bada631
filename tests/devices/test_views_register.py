import pytest
from django.urls import reverse

from devices.models import Board, BoardTask

from .factories import TEST_PRIVATE_KEY

pytestmark = pytest.mark.django_db

URL = reverse("devices:register")


def form_data(**overrides):
    data = {
        "name": "bench-1",
        "host": "10.213.9.11",
        "port": "22",
        "username": "pi",
        "tags": "lab",
        "queue": "default",
        "auth_method": "key",
        "private_key": TEST_PRIVATE_KEY,
    }
    return {**data, **overrides}


def test_anonymous_users_are_sent_to_log_in(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_it_creates_the_board_and_queues_a_host_key_fetch(logged_in, redis_queue):
    response = logged_in.post(URL, form_data())
    board = Board.objects.get(name="bench-1")
    assert response.status_code == 302
    assert response.url == reverse("devices:confirm", args=[board.code])
    assert board.status == Board.Status.NEW
    assert board.host_key == ""
    task = board.tasks.get()
    assert task.kind == BoardTask.Kind.FETCH_HOST_KEY
    assert board.credential().secret.strip() == TEST_PRIVATE_KEY.strip()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host", "pi; rm -rf /"),
        ("host", "$(touch /tmp/pwned)"),
        ("host", "-oProxyCommand=touch /tmp/pwned"),
        ("host", "pi\nhost"),
        ("username", "pi'; id; '"),
        ("username", "-l root"),
        ("username", "$(id)"),
        ("port", "70000"),
        ("queue", "no-such-queue"),
        ("private_key", "not a key"),
    ],
)
def test_bad_input_is_refused_with_a_message_and_nothing_saved(logged_in, field, value):
    response = logged_in.post(URL, form_data(**{field: value}))
    assert response.status_code == 200
    assert response.context["form"].errors[field]
    assert not Board.objects.exists()


def test_a_password_board_needs_a_password(logged_in):
    response = logged_in.post(URL, form_data(auth_method="password", private_key=""))
    assert "password" in response.context["form"].errors
    assert not Board.objects.exists()


def test_a_rejected_form_never_sends_the_secret_back(logged_in):
    secret_password = "s3cret-pass-word"  # noqa: S105 - test data
    response = logged_in.post(
        URL, form_data(name="", auth_method="password", password=secret_password)
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert secret_password not in body
    response = logged_in.post(URL, form_data(name=""))
    assert TEST_PRIVATE_KEY.splitlines()[1] not in response.content.decode()


def test_a_duplicate_name_is_refused(logged_in, redis_queue):
    logged_in.post(URL, form_data())
    response = logged_in.post(URL, form_data(host="10.213.9.12"))
    assert response.status_code == 200
    assert "name" in response.context["form"].errors
    assert Board.objects.count() == 1


@pytest.mark.parametrize("name", ["controller", "Controller", "CONTROLLER"])
def test_a_board_cannot_be_named_controller_the_name_campaigns_give_the_workers_host(
    logged_in, name
):
    response = logged_in.post(URL, form_data(name=name))
    assert response.status_code == 200
    (error,) = response.context["form"].errors["name"]
    assert "“controller” is what a campaign calls the worker's own host" in error
    assert not Board.objects.exists()
