from functools import wraps

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from devices import presets, ssh, tasks, work
from devices.forms_presets import RestoreStockForm
from devices.models import Application, Board, BoardTask, FactSnapshot
from devices.vcgencmd import decode_throttled
from devices.views.access import permission_required
from devices.views.responses import json_response

HISTORY_LENGTH = 20
# Boards a person must look at first: no preset is applied to them (as in the apply form).
LOOK_FIRST = (Board.Status.NEEDS_ATTENTION, Board.Status.MAINTENANCE)


def get_board(code) -> Board:
    """Any board, retired or not: a retired board's pages stay readable."""
    return get_object_or_404(Board, code=code)


def acts_on_board(*, needs_pinned_key: bool):
    """For views that start work on a board or change how pifarm reaches it: they take the
    board instead of its code. Work that drives the board needs its pinned host key (there is
    no such action before it); a retired board is refused with a message and left as it was."""

    def decorate(view):
        @wraps(view)
        def acting(request, code, *args, **kwargs):
            board = get_board(code)
            if needs_pinned_key and not board.host_key:
                raise Http404("no such action")
            if board.retired:
                messages.error(
                    request,
                    f"{board.name} is retired, so no work starts on it and its connection "
                    "stays as it was. An admin can restore it.",
                )
                return redirect(board)
            return view(request, board, *args, **kwargs)

        return acting

    return decorate


def say_if_not_queued(request, started: list[BoardTask]) -> None:
    """Work that could not be queued (unknown queue, Redis down) has failed already: say why."""
    for task in started:
        task.refresh_from_db(fields=["state", "reason"])
        if task.state == BoardTask.State.FAILED:
            kind = task.get_kind_display().capitalize()
            messages.error(request, f"{kind} of {task.board.name} did not start: {task.reason}")


@permission_required("devices.view_board")
@require_safe
def dashboard(request):
    boards = list(Board.objects.in_service().order_by("name"))
    busy = work.busy_on(boards)
    latest = Board.latest_snapshots(boards)
    rows = [(board, latest.get(board.pk), busy.get(board.pk, [])) for board in boards]
    retired = Board.objects.retired().count()
    return render(request, "devices/dashboard.html", {"rows": rows, "retired_count": retired})


@permission_required("devices.view_board", json=True)
@require_safe
def board_statuses(request):
    """Status of every board, for the dashboard to follow health checks without a reload."""
    boards = Board.objects.in_service().order_by("name")
    return json_response(
        {
            "boards": [
                {
                    "code": str(board.code),
                    "status": board.status,
                    "label": board.get_status_display(),
                    "reason": board.status_reason,
                    "last_seen": board.last_seen.isoformat() if board.last_seen else None,
                }
                for board in boards
            ],
            "pending": BoardTask.objects.filter(
                state__in=BoardTask.UNFINISHED, board__retired__isnull=True
            ).exists(),
        }
    )


def _board_context(board: Board) -> dict:
    """The live block: status, facts and history (and, through its template's tags, what
    other apps show there: benchmarks' prepare form)."""
    context = {
        "board": board,
        "host_key_fingerprint": ssh.fingerprint(board.host_key) if board.host_key else "",
        "history": board.snapshots.all()[:HISTORY_LENGTH],
        "stock_words": presets.is_at_stock(board)[1],
        **_facts_context(board.latest_snapshot),
    }
    return context


@permission_required("devices.view_board")
@require_safe
def board_detail(request, code):
    board = get_board(code)
    if not board.host_key and not board.retired:
        return redirect("devices:confirm", code=board.code)
    return board_page(request, board)


def board_page(request, board: Board, status: int = 200, **forms):
    """The board page; a form given (prepare_form, stock_form) shows as posted, with errors."""
    context = {
        **forms,
        **_board_context(board),
        "task": board.tasks.first(),
        "stock_form": forms.get("stock_form") or RestoreStockForm(),
        "stock_name": presets.STOCK.name,
        "stock_governor": presets.STOCK_GOVERNOR,
    }
    return render(request, "devices/board.html", context, status=status)


@permission_required("devices.view_board")
@require_safe
def board_live(request, code):
    """Status, facts, history and the prepare form, swapped into the board page when a task
    finishes."""
    return render(request, "devices/_board_live.html", _board_context(get_board(code)))


@permission_required("devices.view_factsnapshot")
@require_safe
def snapshot_detail(request, code, pk):
    board = get_board(code)
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


@permission_required("devices.probe_board")
@require_POST
@acts_on_board(needs_pinned_key=True)
def start_task(request, board, kind):
    if kind not in (BoardTask.Kind.PROBE, BoardTask.Kind.HEALTH):
        raise Http404("no such action")

    def already(task: BoardTask) -> str:
        label = task.get_kind_display().capitalize()
        return f"{label} of {board.name} is already {task.state}; not repeated."

    return start_and_say(request, board, kind, already=already)


def start_and_say(request, board: Board, kind: str, *, already, **options):
    """Start a task from a page, then back to the board: saying, in already(task), when one
    of that kind was under way already (nothing is repeated), or why it could not be queued.
    options: as tasks.start takes them."""
    started_before = timezone.now()
    with transaction.atomic():
        task = tasks.start(board, kind, **options)
    if task.created < started_before:
        messages.info(request, already(task))
    say_if_not_queued(request, [task])
    return redirect(board)


@permission_required("devices.apply_preset")
@require_POST
@acts_on_board(needs_pinned_key=True)
def restore_stock(request, board):
    """Apply the stock version to the board: an application like any other (its record, the
    board's lock, verification and roll-back); only the version is chosen for the person."""
    form = RestoreStockForm(request.POST)
    if not form.is_valid():
        return board_page(request, board, status=400, stock_form=form)
    if board.status in LOOK_FIRST:
        messages.error(
            request,
            f"{board.name} is marked “{board.get_status_display()}”, so nothing was applied. "
            "Clear that first (re-probe it once it is fixed, or take it out of maintenance).",
        )
        return redirect(board)
    try:
        with transaction.atomic():
            version = presets.stock_version()
            application = presets.start_application(
                board, version, form.cleaned_data["mode"], request.user
            )
    except presets.AlreadyApplying as exc:  # a button pressed twice: show the first one
        messages.error(request, str(exc))
        return redirect(exc.unfinished)
    application.refresh_from_db(fields=["state", "reason"])
    if application.state == Application.State.FAILED:  # it could not be queued
        messages.error(request, f"{board.name}: {application.reason}")
    else:
        messages.success(request, f"Restoring stock on {board.name}: applying {version}.")
    return redirect(application)


@permission_required("devices.probe_board")
@require_POST
def check_all(request):
    with transaction.atomic():
        boards = (
            Board.objects.in_service().exclude(host_key="").exclude(status=Board.Status.MAINTENANCE)
        )
        started = [tasks.start(board, BoardTask.Kind.HEALTH) for board in boards]
    messages.info(request, "Health checks queued for every board.")
    say_if_not_queued(request, started)
    return redirect("devices:dashboard")


@permission_required("devices.view_boardtask", json=True)
@require_safe
def task_status(request, code):
    task = get_object_or_404(BoardTask, code=code)
    data = {
        "state": task.state,
        "label": task.get_state_display(),
        "kind": task.get_kind_display(),
        "reason": task.reason,
        "waiting": task.waiting_words,
        "finished": task.is_finished,
        "duration_s": task.duration_s,
    }
    if task.kind == BoardTask.Kind.PREPARE:  # and its progress
        data.update(benchmarks=task.benchmarks, step=task.step, log_tail=task.log_tail)
    return json_response(data)
