from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_POST

from devices import ssh, tasks
from devices.forms import BoardForm
from devices.models import Board, BoardTask, FactSnapshot
from devices.vcgencmd import decode_throttled

HISTORY_LENGTH = 20


def _get_board(code) -> Board:
    return get_object_or_404(Board, code=code)


@login_required
@require_GET
def dashboard(request):
    boards = Board.objects.order_by("name")
    rows = [(board, board.latest_snapshot) for board in boards]
    return render(request, "devices/dashboard.html", {"rows": rows})


@sensitive_post_parameters("private_key", "password")
@login_required
def register(request):
    form = BoardForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            board = form.save(commit=False)
            board.created_by = request.user
            board.save()
            tasks.start(board, BoardTask.Kind.FETCH_HOST_KEY)
        return redirect("devices:confirm", code=board.code)
    return render(request, "devices/register.html", {"form": form})


@login_required
@require_GET
def confirm(request, code):
    board = _get_board(code)
    if board.host_key:
        return redirect(board)
    task = board.tasks.filter(kind=BoardTask.Kind.FETCH_HOST_KEY).first()
    offered = board.offered_host_key
    return render(
        request,
        "devices/confirm.html",
        {
            "board": board,
            "task": task,
            "offered_fingerprint": ssh.fingerprint(offered) if offered else "",
            "offered_type": offered.split()[0] if offered else "",
            "offered_key_file": _host_key_file(offered),
        },
    )


def _host_key_file(key_line: str) -> str:
    """The middle of /etc/ssh/ssh_host_<...>_key.pub for a key type."""
    kind = key_line.split()[0] if key_line else ""
    return "ecdsa" if kind.startswith("ecdsa-") else kind.removeprefix("ssh-")


@login_required
@require_POST
def confirm_decision(request, code):
    board = _get_board(code)
    if board.host_key or not board.offered_host_key:
        raise Http404("nothing to confirm")
    if request.POST.get("fingerprint") != ssh.fingerprint(board.offered_host_key):
        # The key changed between showing it and the click: show the new one.
        messages.error(request, "The offered key changed; check the fingerprint again.")
        return redirect("devices:confirm", code=board.code)
    if request.POST.get("decision") != "accept":
        name = board.name
        board.delete()
        messages.info(request, f"{name} was not registered; its key was rejected.")
        return redirect("devices:dashboard")
    with transaction.atomic():
        Board.objects.filter(pk=board.pk).update(host_key=board.offered_host_key)
        tasks.start(board, BoardTask.Kind.PROBE)
    messages.success(request, f"Host key pinned for {board.name}; probing it now.")
    return redirect(board)


@login_required
@require_POST
def retry_host_key(request, code):
    board = _get_board(code)
    if board.host_key:
        raise Http404("the host key is already pinned")
    with transaction.atomic():
        tasks.start(board, BoardTask.Kind.FETCH_HOST_KEY)
    return redirect("devices:confirm", code=board.code)


def _board_context(board: Board) -> dict:
    return {
        "board": board,
        "host_key_fingerprint": ssh.fingerprint(board.host_key) if board.host_key else "",
        "history": board.snapshots.all()[:HISTORY_LENGTH],
        **_facts_context(board.latest_snapshot),
    }


@login_required
@require_GET
def board_detail(request, code):
    board = _get_board(code)
    if not board.host_key:
        return redirect("devices:confirm", code=board.code)
    context = {**_board_context(board), "task": board.tasks.first()}
    return render(request, "devices/board.html", context)


@login_required
@require_GET
def board_live(request, code):
    """Status, facts and history alone, swapped into the board page when a task finishes."""
    return render(request, "devices/_board_live.html", _board_context(_get_board(code)))


@login_required
@require_GET
def snapshot_detail(request, code, pk):
    board = _get_board(code)
    snapshot = get_object_or_404(FactSnapshot, board=board, pk=pk)
    return render(request, "devices/snapshot.html", {"board": board, **_facts_context(snapshot)})


def _facts_context(snapshot: FactSnapshot | None) -> dict:
    if snapshot is None:
        return {"snapshot": None, "facts": None, "throttle_flags": []}
    throttled = snapshot.throttled
    return {
        "snapshot": snapshot,
        "facts": snapshot.facts,
        "throttle_flags": decode_throttled(throttled) if throttled is not None else [],
    }


@login_required
@require_POST
def start_task(request, code, kind):
    board = _get_board(code)
    if kind not in (BoardTask.Kind.PROBE, BoardTask.Kind.HEALTH) or not board.host_key:
        raise Http404("no such action")
    with transaction.atomic():
        tasks.start(board, kind)
    return redirect(board)


@login_required
@require_POST
def check_all(request):
    with transaction.atomic():
        boards = Board.objects.exclude(host_key="").exclude(status=Board.Status.MAINTENANCE)
        for board in boards:
            tasks.start(board, BoardTask.Kind.HEALTH)
    messages.info(request, "Health checks queued for every board.")
    return redirect("devices:dashboard")


@login_required
@require_GET
def task_status(request, code):
    task = get_object_or_404(BoardTask, code=code)
    return JsonResponse(
        {
            "state": task.state,
            "label": task.get_state_display(),
            "kind": task.get_kind_display(),
            "error": task.error,
            "finished": task.is_finished,
            "duration_s": task.duration_s,
        }
    )
