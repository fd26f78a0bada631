"""How pifarm reaches a board: register, confirm or replace its host key, edit, remove (retire)
and restore."""

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST, require_safe

from devices import retire, ssh, tasks
from devices.forms import BoardForm
from devices.models import Board, BoardTask
from devices.views.access import permission_required
from devices.views.boards import acts_on_board, get_board, say_if_not_queued


@sensitive_post_parameters("private_key", "password")
@permission_required("devices.add_board")
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


@sensitive_post_parameters("private_key", "password")
@permission_required("devices.change_board")
@acts_on_board(needs_pinned_key=False)
def edit(request, board):
    form = BoardForm(request.POST or None, instance=board, keep_credential_if_blank=True)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            board = form.save(commit=False)
            if form.connection_changed:
                # Another address is another machine until the user confirms its key.
                board.host_key = board.offered_host_key = ""
                board.status, board.status_reason = Board.Status.NEW, ""
            board.save()
            if form.connection_changed:
                tasks.start(board, BoardTask.Kind.FETCH_HOST_KEY)
        if form.connection_changed:
            return redirect("devices:confirm", code=board.code)
        messages.success(request, f"Saved the connection settings of {board.name}.")
        return redirect(board)
    return render(request, "devices/edit.html", {"form": form, "board": board})


@permission_required("devices.delete_board")
@require_POST
def remove(request, code):
    return _remove(request, get_board(code))


def _remove(request, board: Board):
    try:
        retired = retire.remove(board, request.user)
    except retire.StillWorking as busy:
        messages.error(request, retire.still_working_message(busy))
        return redirect(board)
    if retired:
        messages.info(
            request,
            f"{board.name} was retired: it is off the dashboard and no work starts on it; "
            "its history is kept. An admin can restore it.",
        )
    else:
        messages.info(request, f"{board.name} was not registered; pifarm forgot it.")
    return redirect("devices:dashboard")


@permission_required("devices.change_board")
@require_POST
def restore(request, code):
    board = get_board(code)
    try:
        retire.restore(board)
    except retire.NameTaken as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{board.name} is back in service.")
    return redirect(board)


@permission_required("devices.view_board")
@require_safe
def confirm(request, code):
    board = get_board(code)
    offered = board.offered_host_key
    if board.retired or (
        board.host_key
        and not offered
        and not board.tasks.filter(
            kind=BoardTask.Kind.FETCH_HOST_KEY, state__in=["queued", "running"]
        )
    ):
        return redirect(board)
    return render(
        request,
        "devices/confirm.html",
        {
            "board": board,
            "task": board.tasks.filter(kind=BoardTask.Kind.FETCH_HOST_KEY).first(),
            "pinned_fingerprint": ssh.fingerprint(board.host_key) if board.host_key else "",
            "offered_fingerprint": ssh.fingerprint(offered) if offered else "",
            "offered_type": offered.split()[0] if offered else "",
            "offered_key_file": _host_key_file(offered),
        },
    )


def _host_key_file(key_line: str) -> str:
    """The middle of /etc/ssh/ssh_host_<...>_key.pub for a key type."""
    kind = key_line.split()[0] if key_line else ""
    return "ecdsa" if kind.startswith("ecdsa-") else kind.removeprefix("ssh-")


@permission_required("devices.change_board")
@require_POST
@acts_on_board(needs_pinned_key=False)
def confirm_decision(request, board):
    if not board.offered_host_key:
        raise Http404("nothing to confirm")
    if request.POST.get("fingerprint") != ssh.fingerprint(board.offered_host_key):
        # The key changed between showing it and the click: show the new one.
        messages.error(request, "The offered key changed; check the fingerprint again.")
        return redirect("devices:confirm", code=board.code)
    if request.POST.get("decision") != "accept":
        return _reject(request, board)
    with transaction.atomic():
        Board.objects.filter(pk=board.pk).update(
            host_key=board.offered_host_key, offered_host_key="", status_reason=""
        )
        task = tasks.start(board, BoardTask.Kind.PROBE)
    messages.success(request, f"Host key pinned for {board.name}; probing it now.")
    say_if_not_queued(request, [task])
    return redirect(board)


def _reject(request, board: Board):
    if not board.host_key:
        return _remove(request, board)  # a new board, or one whose address changed
    Board.objects.filter(pk=board.pk).update(offered_host_key="")
    messages.info(request, f"{board.name} keeps its pinned key; the offered one was rejected.")
    return redirect(board)


@permission_required("devices.change_board")
@require_POST
@acts_on_board(needs_pinned_key=False)
def fetch_host_key(request, board):
    """Fetch the key again: after a failed try, or to replace a key the board changed."""
    with transaction.atomic():
        Board.objects.filter(pk=board.pk).update(offered_host_key="")
        tasks.start(board, BoardTask.Kind.FETCH_HOST_KEY)
    return redirect("devices:confirm", code=board.code)
