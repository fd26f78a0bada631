"""The board page's "Prepare for benchmarks" form: who may post it, what it refuses, what it
shows from the latest probe, and the progress JSON the page follows."""

import pytest
from django.urls import reverse
from django.utils import timezone

from devices.models import BoardTask, FactSnapshot
from tests.benchmarks.factories import installing_sysbench
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


def prepare_url(board) -> str:
    return reverse("benchmarks:prepare_board", args=[board.code])


def test_an_operator_prepares_a_board_for_the_chosen_benchmarks(client, operator):
    board = make_board()
    client.force_login(operator)
    response = client.post(prepare_url(board), {"benchmarks": ["sysbench-cpu", "fio"]})
    assert response.status_code == 302
    assert response["Location"] == board.get_absolute_url()
    task = board.tasks.get()
    assert task.kind == BoardTask.Kind.PREPARE
    assert task.benchmarks == ["sysbench-cpu", "fio"]


def test_a_benchmark_chosen_more_than_once_is_prepared_for_once(client, operator):
    board = make_board()
    client.force_login(operator)
    chosen = ["sysbench-cpu", "fio", "sysbench-cpu", "sysbench-cpu"]
    assert client.post(prepare_url(board), {"benchmarks": chosen}).status_code == 302
    assert board.tasks.get().benchmarks == ["sysbench-cpu", "fio"]


def test_a_second_post_while_one_is_unfinished_starts_nothing_and_says_so(client, operator):
    board = make_board()
    client.force_login(operator)
    client.post(prepare_url(board), {"benchmarks": ["fio"]})
    response = client.post(prepare_url(board), {"benchmarks": ["lame"]}, follow=True)
    assert board.tasks.count() == 1
    assert "bench-1 is already being prepared for fio (queued)" in response.content.decode()


def test_a_viewer_may_not_prepare_a_board(client, viewer):
    board = make_board()
    client.force_login(viewer)
    assert client.post(prepare_url(board), {"benchmarks": ["fio"]}).status_code == 403
    assert not board.tasks.exists()
    assert prepare_url(board) not in client.get(board.get_absolute_url()).content.decode()


def test_prepare_needs_post(client, operator):
    client.force_login(operator)
    assert client.get(prepare_url(make_board())).status_code == 405


@pytest.mark.parametrize("chosen", [[], ["no-such-benchmark"], ["sysbench-cpu", "rm -rf /"]])
def test_a_bad_choice_is_a_400_that_says_so_and_starts_nothing(client, operator, chosen):
    board = make_board()
    client.force_login(operator)
    response = client.post(prepare_url(board), {"benchmarks": chosen})
    assert response.status_code == 400
    body = response.content.decode()
    assert "Choose at least one benchmark" in body or "Select a valid choice" in body
    assert not board.tasks.exists()


def test_a_retired_board_is_not_prepared(client, operator):
    board = make_board(retired=timezone.now())
    client.force_login(operator)
    response = client.post(prepare_url(board), {"benchmarks": ["fio"]})
    assert response.status_code == 302
    assert not board.tasks.exists()


def test_the_form_shows_what_the_latest_probe_found_missing(client, operator):
    board = make_board()
    probed = {"sysbench": False, "iperf3": True, "ethtool": True}
    FactSnapshot.objects.create(board=board, facts={"tools": probed})
    client.force_login(operator)
    body = client.get(board.get_absolute_url()).content.decode()
    assert 'value="sysbench-cpu"' in body
    assert "missing: sysbench" in body
    assert "not known from the probe: ip" in body  # iperf3-tcp: the probe does not look for ip


def test_a_tool_the_probe_found_under_either_name_is_not_missing(client, operator):
    """A board with 7-Zip as 7zz showed "7z" struck through, while the catalog takes 7zz."""
    board = make_board()
    FactSnapshot.objects.create(board=board, facts={"tools": {"7zz|7z": True, "sysbench": True}})
    client.force_login(operator)
    body = client.get(board.get_absolute_url()).content.decode()
    assert "missing: 7zz|7z" not in body and 'class="missing">7z' not in body
    assert '<li class="present">7zz or 7z</li>' in body


def test_the_progress_json_of_a_prepare_task(client, viewer):
    board = make_board()
    task = installing_sysbench(board, "Unpacking sysbench ...\n")
    client.force_login(viewer)
    data = client.get(reverse("devices:task_status", args=[task.code])).json()
    assert data["kind"] == "prepare for benchmarks"
    assert data["benchmarks"] == ["sysbench-cpu"]
    assert data["step"] == "installing sysbench"
    assert data["log_tail"] == "Unpacking sysbench ...\n"
    assert data["finished"] is False
    body = client.get(board.get_absolute_url()).content.decode()
    assert "installing sysbench" in body and "Unpacking sysbench ..." in body
