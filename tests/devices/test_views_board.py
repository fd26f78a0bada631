import uuid

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from devices import presets
from devices.models import Application, Board, BoardTask, FactSnapshot, Preset

from .factories import TEST_PRIVATE_KEY, make_board

pytestmark = pytest.mark.django_db


def snapshot_for(board, throttled=0x50005, **facts):
    return FactSnapshot.objects.create(
        board=board,
        model="Raspberry Pi 4 Model B Rev 1.4",
        kernel_bits=64,
        userland_bits=32,
        os_name="Raspberry Pi OS",
        temperature_c=51.2,
        throttled=throttled,
        facts={
            "model": "Raspberry Pi 4 Model B Rev 1.4",
            "config_txt": "arm_boost=1\n",
            "config_path": "/boot/firmware/config.txt",
            "throttled": throttled,
            "tools": {"iperf3": True, "lame": False},
            **facts,
        },
    )


def test_the_board_page_shows_facts_and_throttling_in_words(logged_in):
    board = make_board()
    snapshot_for(board)
    response = logged_in.get(board.get_absolute_url())
    body = response.content.decode()
    assert response.status_code == 200
    assert "Raspberry Pi 4 Model B Rev 1.4" in body
    assert "/boot/firmware/config.txt" in body
    assert "under-voltage" in body.lower()
    assert TEST_PRIVATE_KEY.splitlines()[1] not in body


SIMULATED = '<span class="tag simulated"'


@pytest.mark.parametrize("page", ["board", "dashboard"])
def test_a_simulated_board_is_labelled_so_where_its_model_is_shown(logged_in, page):
    simulated, real = make_board("sim-1"), make_board("real-1")
    snapshot_for(simulated, simulated=True)
    snapshot_for(real, simulated=False)

    def shown(board) -> str:
        if page == "board":
            return logged_in.get(board.get_absolute_url()).content.decode()
        body = logged_in.get(reverse("devices:dashboard")).content.decode()
        return body.split(f">{board.name}</a>")[1].split("</tr>")[0]  # the board's row

    assert SIMULATED in shown(simulated)
    assert SIMULATED not in shown(real)


def test_an_unknown_board_is_404(logged_in):
    assert logged_in.get(reverse("devices:board", args=[uuid.uuid4()])).status_code == 404


def test_anonymous_users_cannot_see_a_board(client):
    board = make_board()
    assert client.get(board.get_absolute_url()).status_code == 302


def test_actions_need_post(logged_in):
    board = make_board()
    url = reverse("devices:start_task", args=[board.code, "probe"])
    assert logged_in.get(url).status_code == 405


def test_an_unknown_action_is_404(logged_in):
    board = make_board()
    url = reverse("devices:start_task", args=[board.code, "reboot"])
    assert logged_in.post(url).status_code == 404


def test_reprobe_queues_a_probe(logged_in, redis_queue):
    board = make_board()
    logged_in.post(reverse("devices:start_task", args=[board.code, "probe"]))
    assert board.tasks.get().kind == BoardTask.Kind.PROBE


MARKUP = 'sudo: unable to resolve host <script>alert(1)</script>"><img src=x>'


def test_board_text_in_status_json_never_reaches_the_browser_as_markup(logged_in):
    board = make_board(status=Board.Status.OFFLINE, status_reason=MARKUP)
    task = BoardTask.objects.create(board=board, kind=BoardTask.Kind.PROBE, reason=MARKUP)
    for url, field in (
        (reverse("devices:board_statuses"), lambda data: data["boards"][0]["reason"]),
        (reverse("devices:task_status", args=[task.code]), lambda data: data["reason"]),
    ):
        response = logged_in.get(url)
        assert (
            "<script>" not in response.content.decode() and "<img" not in response.content.decode()
        )
        assert field(response.json()) == MARKUP  # escaped for HTML, the same text for JSON


def test_task_status_answers_json(logged_in):
    board = make_board()
    task = BoardTask.objects.create(board=board, kind=BoardTask.Kind.PROBE)
    data = logged_in.get(reverse("devices:task_status", args=[task.code])).json()
    assert data == {
        "state": "queued",
        "label": "queued",
        "kind": "probe",
        "reason": "",
        "waiting": "",
        "finished": False,
        "duration_s": None,
    }


def test_the_dashboard_lists_boards_with_status_and_bitness(logged_in):
    board = make_board(status=Board.Status.ONLINE)
    snapshot_for(board)
    body = logged_in.get(reverse("devices:dashboard")).content.decode()
    assert "bench-1" in body
    assert "64 / 32-bit" in body
    assert "51.2&nbsp;°C" in body


def test_the_dashboard_says_what_a_board_is_busy_with_and_its_arm_clock(logged_in):
    busy, idle = make_board(), make_board(name="bench-2", host="10.213.9.12")
    snapshot_for(busy, arm_clock_hz=1_800_457_088)
    version = presets.new_version(Preset.objects.create(name="oc"), options={"arm_freq": "1800"})
    application = Application.objects.create(board=busy, version=version, state="running")
    body = logged_in.get(reverse("devices:dashboard")).content.decode()
    row = body[body.index(">bench-1<") : body.index(">bench-2<")]
    assert f'<a href="{application.get_absolute_url()}">applying oc v1</a>' in row
    assert "<small>(running)</small>" in row
    assert "1800&nbsp;MHz" in row
    rest = body[body.index(">bench-2<") :]
    assert 'data-label="Busy with">–</td>' in rest and idle.name in rest


def test_confirm_refuses_a_fingerprint_that_is_not_the_offered_one(logged_in):
    board = make_board(host_key="")
    Board.objects.filter(pk=board.pk).update(
        offered_host_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOzP"
    )
    url = reverse("devices:confirm_decision", args=[board.code])
    response = logged_in.post(url, {"decision": "accept", "fingerprint": "SHA256:forged"})
    board.refresh_from_db()
    assert response.status_code == 302
    assert board.host_key == ""


def test_rejecting_the_key_forgets_the_board(logged_in):
    board = make_board(host_key="")
    from devices import ssh

    offered = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOzP"
    Board.objects.filter(pk=board.pk).update(offered_host_key=offered)
    url = reverse("devices:confirm_decision", args=[board.code])
    logged_in.post(url, {"decision": "reject", "fingerprint": ssh.fingerprint(offered)})
    assert not Board.objects.filter(pk=board.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_reprobing_a_board_on_a_queue_no_worker_serves_says_why(logged_in, redis_queue):
    board = make_board()
    Board.objects.filter(pk=board.pk).update(queue="bench-gone")  # PIFARM_QUEUES changed since

    response = logged_in.post(
        reverse("devices:start_task", args=[board.code, "probe"]), follow=True
    )

    assert response.status_code == 200
    said = [str(message) for message in response.context["messages"]]
    assert said == [
        "Probe of bench-1 did not start: no worker serves the queue 'bench-gone' (the queues "
        "are: default); set the board's worker queue to one of them"
    ]
    assert board.tasks.get().state == BoardTask.State.FAILED


def test_a_probe_pressed_many_times_makes_one_task(logged_in, redis_queue):
    board = make_board()
    url = reverse("devices:start_task", args=[board.code, "probe"])
    for _ in range(5):
        response = logged_in.post(url, follow=True)
    assert board.tasks.count() == 1
    assert f"Probe of {board.name} is already queued; not repeated." in response.content.decode()
    board.tasks.update(state=BoardTask.State.DONE)  # once it has run, a new one starts
    logged_in.post(url)
    assert board.tasks.count() == 2


def test_status_json_of_an_unknown_record_is_a_json_404(logged_in):
    for url in (
        reverse("devices:task_status", args=[uuid.uuid4()]),
        reverse("devices:application_status", args=[uuid.uuid4()]),
    ):
        response = logged_in.get(url)
        assert response.status_code == 404
        assert response.json() == {"error": "There is no such record."}


def restore_stock(client, board, **data):
    return client.post(reverse("devices:restore_stock", args=[board.code]), data)


def test_restore_stock_applies_the_stock_version_like_any_application(
    client, operator, redis_queue, django_capture_on_commit_callbacks
):
    client.force_login(operator)
    board = make_board()
    with django_capture_on_commit_callbacks(execute=True):
        response = restore_stock(client, board, mode="direct")
    application = Application.objects.get()
    assert response.status_code == 302
    assert response.url == application.get_absolute_url()
    assert application.board == board
    assert application.version == presets.stock_version()
    assert application.mode == Application.Mode.DIRECT
    assert application.requested_by == operator
    assert [job.args for job in redis_queue.jobs] == [("apply", application.pk)]


def test_restore_stock_without_a_mode_takes_a_trial_boot(logged_in, redis_queue):
    restore_stock(logged_in, make_board())
    assert Application.objects.get().mode == Application.Mode.TRIAL


def test_restore_stock_posted_twice_applies_once(logged_in, redis_queue):
    board = make_board()
    first = restore_stock(logged_in, board)
    second = restore_stock(logged_in, board)
    application = Application.objects.get()
    assert first.url == second.url == application.get_absolute_url()


def test_restore_stock_needs_post_and_the_operator_role(client, viewer):
    board = make_board()
    url = reverse("devices:restore_stock", args=[board.code])
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(viewer)
    assert client.post(url).status_code == 403
    assert not Application.objects.exists()


def test_restore_stock_is_post_only(logged_in):
    url = reverse("devices:restore_stock", args=[make_board().code])
    assert logged_in.get(url).status_code == 405


def test_restore_stock_refuses_an_unknown_mode(logged_in):
    assert restore_stock(logged_in, make_board(), mode="yolo").status_code == 400
    assert not Application.objects.exists()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"status": Board.Status.NEEDS_ATTENTION}, "needs attention"),
        ({"status": Board.Status.MAINTENANCE}, "maintenance"),
    ],
)
def test_restore_stock_refuses_a_board_a_person_must_look_at(logged_in, fields, said):
    board = make_board(**fields)
    response = restore_stock(logged_in, board)
    assert response.url == board.get_absolute_url()
    assert not Application.objects.exists()
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert said in messages[0]


def test_restore_stock_refuses_a_retired_board(logged_in):
    board = make_board()
    board.retired = timezone.now()
    board.save()
    response = restore_stock(logged_in, board)
    assert response.url == board.get_absolute_url()
    assert not Application.objects.exists()


def test_restore_stock_of_an_unknown_board_is_404(logged_in):
    response = logged_in.post(reverse("devices:restore_stock", args=[uuid.uuid4()]))
    assert response.status_code == 404


def test_the_board_page_says_whether_it_is_at_stock_and_offers_to_restore_it(client, operator):
    client.force_login(operator)
    board = make_board()
    snapshot_for(board, governor="performance", revision={"family": "pi4_r14"})
    body = client.get(board.get_absolute_url()).content.decode()
    assert "bench-1 is not at stock: it runs the performance governor (stock: ondemand)" in body
    assert reverse("devices:restore_stock", args=[board.code]) in body


def test_a_viewer_is_not_offered_restore_stock(client, viewer):
    client.force_login(viewer)
    board = make_board()
    body = client.get(board.get_absolute_url()).content.decode()
    assert reverse("devices:restore_stock", args=[board.code]) not in body
