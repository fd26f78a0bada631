"""Removing a board retires it: its history stays, no work starts on it, an admin restores it."""

import socket
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.urls import reverse
from django.utils import timezone

from devices import presets, retire, ssh, tasks, work
from devices.forms import BoardForm
from devices.models import Application, Board, BoardTask, FactSnapshot, Preset

from .factories import KEYS, TEST_PRIVATE_KEY, make_board

pytestmark = pytest.mark.django_db


def history(board):
    """A board that has been probed, checked and applied to, all finished."""
    snapshot = FactSnapshot.objects.create(
        board=board, model="Raspberry Pi 4 Model B Rev 1.4", facts={"config_txt": "arm_boost=1\n"}
    )
    BoardTask.objects.create(board=board, kind="probe", state="done", snapshot=snapshot)
    preset = Preset.objects.create(name="fast", families=["pi4"])
    version = presets.new_version(preset, options={"arm_freq": 1800})
    Application.objects.create(
        board=board, version=version, state="verified", backup_text="arm_freq=1500\n"
    )
    return snapshot


def counts(board):
    return board.snapshots.count(), board.tasks.count(), board.applications.count()


def retired_board(name="old-1", **fields):
    board = make_board(name, **fields)
    Board.objects.filter(pk=board.pk).update(retired=timezone.now())
    board.refresh_from_db()
    return board


# ---- the model ------------------------------------------------------------------------------


@pytest.mark.parametrize("record", ["snapshot", "task", "application"])
def test_the_database_refuses_to_delete_a_board_with_history(record):
    board = make_board()
    if record == "snapshot":
        FactSnapshot.objects.create(board=board, facts={})
    elif record == "task":
        BoardTask.objects.create(board=board, kind="probe", state="done")
    else:
        version = presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": 900})
        Application.objects.create(board=board, version=version, state="failed")
    with pytest.raises(ProtectedError):
        board.delete()
    assert Board.objects.filter(pk=board.pk).exists()


def test_a_snapshot_a_task_points_at_is_never_deleted():
    board = make_board()
    snapshot = history(board)
    with pytest.raises(ProtectedError):
        snapshot.delete()


def test_a_new_board_may_take_a_retired_boards_name_but_two_in_service_may_not():
    retired_board("bench-1")
    make_board("bench-1")  # the replacement on the same shelf
    with pytest.raises(IntegrityError), transaction.atomic():
        make_board("bench-1")
    form = BoardForm(
        {
            "name": "bench-1",
            "host": "10.213.9.11",
            "port": 22,
            "username": "pi",
            "queue": "default",
            "auth_method": "key",
            "private_key": TEST_PRIVATE_KEY,
        }
    )
    assert form.errors["name"] == ["A board in service already has this name."]


def test_register_board_takes_a_retired_boards_name_but_not_one_in_service():
    retired_board("old-1")
    make_board("bench-1")
    with pytest.raises(CommandError, match="A board in service already has this name"):
        register_from_shell("bench-1")
    with pytest.raises(CommandError) as refused:  # the name passed: it went on to connect
        register_from_shell("old-1")
    assert "name" not in str(refused.value)


def register_from_shell(name):
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    call_command(
        "register_board",
        name,
        "127.0.0.1",
        port=port,
        key_file=KEYS / "test_ed25519",
        fingerprint="SHA256:x",
    )


# ---- removing through the UI ----------------------------------------------------------------


def test_removing_a_board_retires_it_and_keeps_every_record(logged_in, user):
    board = make_board()
    snapshot = history(board)
    before = counts(board)
    response = logged_in.post(reverse("devices:remove", args=[board.code]))
    assert response.url == reverse("devices:dashboard")
    board.refresh_from_db()
    assert board.retired is not None and board.retired_by == user
    assert counts(board) == before
    assert board.credential().secret == TEST_PRIVATE_KEY  # kept for a restore
    dashboard = logged_in.get(response.url).content.decode()
    assert "bench-1 was retired" in dashboard
    assert board.get_absolute_url() not in dashboard
    assert "1 retired board not shown" in dashboard
    page = logged_in.get(board.get_absolute_url()).content.decode()
    assert "Retired on" in page
    assert reverse("devices:remove", args=[board.code]) not in page
    assert reverse("devices:start_task", args=[board.code, "probe"]) not in page
    snapshot_url = reverse("devices:snapshot", args=[board.code, snapshot.pk])
    assert logged_in.get(snapshot_url).status_code == 200
    listing = logged_in.get(reverse("devices:applications")).content.decode()
    assert 'bench-1</a> <span class="tag">retired</span>' in listing
    application = board.applications.get()
    assert "arm_freq=1500" in logged_in.get(application.get_absolute_url()).content.decode()


def _work(board, kind):
    if kind.startswith("application"):
        version = presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": 900})
        state = kind.split()[1]
        return Application.objects.create(board=board, version=version, state=state)
    return BoardTask.objects.create(board=board, kind="probe", state=kind.split()[1])


@pytest.mark.parametrize(
    "kind", ["task queued", "task running", "application queued", "application running"]
)
def test_a_board_with_work_queued_or_running_is_not_removed(logged_in, kind):
    board = make_board()
    work = _work(board, kind)
    response = logged_in.post(reverse("devices:remove", args=[board.code]), follow=True)
    board.refresh_from_db()
    assert board.retired is None
    body = response.content.decode()
    assert "bench-1 was not removed, because work is queued or running on it" in body
    link = work.get_absolute_url() if isinstance(work, Application) else board.get_absolute_url()
    assert f'<a href="{link}">' in body
    assert ("applying p v1" if isinstance(work, Application) else "probe (") in body


def test_the_refusal_lists_the_first_few_items_and_counts_the_rest(logged_in):
    board = make_board()
    BoardTask.objects.bulk_create(
        BoardTask(board=board, kind="probe", state="waiting") for _ in range(300)
    )
    response = logged_in.post(reverse("devices:remove", args=[board.code]), follow=True)
    body = response.content.decode()
    message = body[body.index("bench-1 was not removed") :]
    message = message[: message.index("Remove it once that has finished.")]
    assert message.count(f'<a href="{board.get_absolute_url()}">probe (waiting)</a>') == 5
    assert message.endswith("</a> and 295 more. ")
    assert len(message) < 1000


def test_rejecting_the_key_of_a_moved_board_retires_it_and_keeps_its_history(logged_in):
    """An address change unpins the key; rejecting the new one must not lose the history."""
    board = make_board()
    history(board)
    offered = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOzP"
    Board.objects.filter(pk=board.pk).update(host_key="", offered_host_key=offered)
    url = reverse("devices:confirm_decision", args=[board.code])
    logged_in.post(url, {"decision": "reject", "fingerprint": ssh.fingerprint(offered)})
    board.refresh_from_db()
    assert board.retired is not None
    assert counts(board) == (1, 1, 1)


def test_forgetting_a_board_that_never_got_past_registration_deletes_it(logged_in):
    board = make_board(host_key="")
    BoardTask.objects.create(board=board, kind="fetch_host_key", state="failed", reason="refused")
    response = logged_in.post(reverse("devices:remove", args=[board.code]), follow=True)
    assert "bench-1 was not registered; pifarm forgot it." in response.content.decode()
    assert not Board.objects.exists()


# ---- no work starts on a retired board ------------------------------------------------------


@pytest.mark.parametrize(
    "name, args",
    [("start_task", ["probe"]), ("start_task", ["health"]), ("edit", []), ("fetch_host_key", [])],
)
def test_a_retired_board_is_given_no_work(logged_in, redis_queue, name, args):
    board = retired_board()
    response = logged_in.post(reverse(f"devices:{name}", args=[board.code, *args]), follow=True)
    assert "old-1 is retired, so no work starts on it" in response.content.decode()
    assert not board.tasks.exists()
    assert len(redis_queue.jobs) == 0


def test_check_all_and_the_health_check_loop_skip_retired_boards(logged_in, redis_queue):
    retired_board()
    make_board("in-use")
    logged_in.post(reverse("devices:check_all"))
    call_command("healthcheck")
    assert [task.board.name for task in BoardTask.objects.all()] == ["in-use"]


def test_a_retired_board_is_not_offered_to_apply_a_preset_to(logged_in):
    board = retired_board()
    make_board("in-use")
    presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": 900})
    url = reverse("devices:apply", args=[Preset.objects.get().code, 1])
    offered = logged_in.get(url).context["form"].fields["boards"].queryset
    assert [b.name for b in offered] == ["in-use"]
    compare = reverse("devices:preset_version", args=[Preset.objects.get().code, 1])
    assert [b.name for b in logged_in.get(compare).context["boards"]] == ["in-use"]
    response = logged_in.post(url, {"boards": [board.pk], "mode": "trial"})
    assert response.status_code == 200
    assert "boards" in response.context["form"].errors
    assert not Application.objects.exists()


def test_the_dashboard_status_feed_leaves_retired_boards_out(logged_in):
    board = retired_board()
    BoardTask.objects.create(board=board, kind="probe")  # ends at once when a worker takes it
    make_board("in-use")
    data = logged_in.get(reverse("devices:board_statuses")).json()
    assert [row["code"] for row in data["boards"]] == [str(Board.objects.get(name="in-use").code)]
    assert data["pending"] is False


# ---- restoring ------------------------------------------------------------------------------


def test_staff_restore_a_retired_board_from_its_page(client, staff):
    board = retired_board()
    client.force_login(staff)
    assert "Restore old-1 to service" in client.get(board.get_absolute_url()).content.decode()
    client.post(reverse("devices:restore", args=[board.code]))
    board.refresh_from_db()
    assert board.retired is None
    assert board.credential().secret == TEST_PRIVATE_KEY


def test_only_admins_may_restore(client, operator):
    board = retired_board()
    client.force_login(operator)
    assert "Restore old-1" not in client.get(board.get_absolute_url()).content.decode()
    assert client.post(reverse("devices:restore", args=[board.code])).status_code == 403
    board.refresh_from_db()
    assert board.retired is not None


def test_a_board_whose_name_was_taken_meanwhile_is_not_restored(client, staff):
    board = retired_board("bench-1")
    make_board("bench-1")
    client.force_login(staff)
    response = client.post(reverse("devices:restore", args=[board.code]), follow=True)
    assert "A board in service is named bench-1: rename one of them" in response.content.decode()
    board.refresh_from_db()
    assert board.retired is not None


# ---- jobs that find their board retired -----------------------------------------------------


@pytest.fixture
def listener():
    """A port on loopback that records whether anything connected to it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def _connected(server) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return False
    return True


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["probe", "health", "fetch_host_key", "application"])
def test_a_job_whose_board_was_retired_ends_its_record_without_connecting(run_jobs, listener, kind):
    """Work queued at the moment of removal, after removal looked for work: the job ends it."""
    board = make_board(host="127.0.0.1", port=listener.getsockname()[1])
    if kind == "application":
        version = presets.new_version(Preset.objects.create(name="p"), options={"arm_freq": 900})
        record = presets.start_application(board, version, "trial")
    else:
        record = tasks.start(board, kind)
    Board.objects.filter(pk=board.pk).update(retired=timezone.now())
    run_jobs()
    record.refresh_from_db()
    assert record.state == "failed"
    reason = record.reason
    assert reason.startswith("Nothing was done: bench-1 was retired on ")
    assert record.started is None and record.finished is not None
    assert not _connected(listener)


@pytest.mark.django_db(transaction=True)
def test_a_job_that_claimed_its_record_first_keeps_the_board_from_being_removed():
    """The other order: the claim is recorded, so removal sees the work and refuses."""
    board = make_board()
    task = BoardTask.objects.create(board=board, kind="probe")
    assert work.claim(work.KINDS["probe"], task.pk)
    with pytest.raises(retire.StillWorking) as refused:
        retire.remove(board)
    assert refused.value.work == [BoardTask.objects.get(pk=task.pk)]


@pytest.mark.django_db(transaction=True)
def test_work_queued_while_a_removal_runs_waits_for_it_then_finds_the_board_retired(monkeypatch):
    """Removal has found no work and not yet committed: a task queued and claimed now waits
    for it (SQLite's write lock; on PostgreSQL the board's row lock) and ends as retired."""
    board = make_board()
    checked, go = threading.Event(), threading.Event()
    look_for_work = retire.work_on

    def look_then_pause(locked):
        found = look_for_work(locked)
        checked.set()
        go.wait(10)
        return found

    monkeypatch.setattr(retire, "work_on", look_then_pause)
    remover = threading.Thread(target=_in_thread, args=(retire.remove, board))
    remover.start()
    assert checked.wait(10)
    claimer = threading.Thread(target=_in_thread, args=(_queue_and_claim, board))
    claimer.start()
    claimer.join(0.5)
    assert claimer.is_alive()  # held up by the removal's lock
    go.set()
    remover.join(10)
    claimer.join(10)
    task = BoardTask.objects.get()
    assert task.state == "failed"
    assert "bench-1 was retired" in task.reason


def _in_thread(function, *args):
    try:
        function(*args)
    finally:
        connection.close()  # each thread has its own database connection


def _queue_and_claim(board):
    task = BoardTask.objects.create(board=board, kind="probe")
    work.claim(work.KINDS["probe"], task.pk)


def test_forgetting_a_board_twice_is_no_error(logged_in):
    """A double click: the second request finds the board already forgotten."""
    board = make_board("bench-1", host_key="")
    assert retire.remove(board) is False
    assert retire.remove(board) is False  # the same instance, its row gone: no DoesNotExist
    response = logged_in.post(reverse("devices:remove", args=[board.code]))
    assert response.status_code == 404
