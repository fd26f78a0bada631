"""RQ jobs on boards. Each takes a BoardTask id, claims it, and records how it ended."""

import logging
import math
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from devices import enqueue, remote, retire, ssh, tasks, work
from devices.credentials import CredentialError
from devices.locks import BoardBusy
from devices.models import Board, BoardTask, FactSnapshot
from devices.probe import PROBE_SCRIPT, ProbeError, parse_probe_output

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 30
# config.txt and cpuinfo are each capped at 1 MiB by the script, then base64-encoded.
PROBE_OUTPUT_CAP = 4 * 1024 * 1024


def lock_ttl() -> float:
    """Long enough for the slowest probe: connect, banner and auth deadlines, then the script."""
    return 3 * settings.SSH_CONNECT_TIMEOUT + PROBE_TIMEOUT_S + ssh.KILL_GRACE_S + 30


def claim_task(task_id: int) -> BoardTask | None:
    """Move the task from queued (or waiting) to running; None if someone else already did,
    or if its board was retired (the task then ends saying so)."""
    running = {"state": BoardTask.State.RUNNING, "started": timezone.now(), "next_try": None}
    if not retire.claim(BoardTask.objects, task_id, running=running, reason_field="error"):
        log.warning("task %s was not queued any more, or its board retired; skipping", task_id)
        return None
    return BoardTask.objects.select_related("board").get(pk=task_id)


def finish_task(
    task: BoardTask, error: str = "", snapshot: FactSnapshot | None = None, outcome: str = ""
) -> None:
    # Only a running task ends here: one already failed as stale stays failed.
    BoardTask.objects.filter(pk=task.pk, state=BoardTask.State.RUNNING).update(
        state=BoardTask.State.FAILED if error else BoardTask.State.DONE,
        error=error,
        snapshot=snapshot,
        outcome=outcome,
        step="",
        finished=timezone.now(),
    )


def mark_board(
    board_id: int, status: str | None, reason: str = "", *, clears_attention: bool = False
) -> None:
    """Record a board's status, leaving a board that a person put in maintenance alone.

    "Needs attention", with its reason, stays until a probe that succeeds (clears_attention)
    says what the board is now: that a board answers says nothing about the config.txt a
    person must check, and a later failure (a changed host key) must not hide that reason.
    """
    if status is None:
        return
    limit = Board._meta.get_field("status_reason").max_length
    updates = {"status": status, "status_reason": reason[:limit]}
    if status in (Board.Status.ONLINE, Board.Status.BUSY):
        updates["last_seen"] = timezone.now()
    spared = [Board.Status.MAINTENANCE]
    if not clears_attention:  # nor a new reason: the first says what a person must check
        spared.append(Board.Status.NEEDS_ATTENTION)
    Board.objects.filter(pk=board_id).exclude(status__in=spared).update(**updates)


def status_for(error: Exception) -> str | None:
    """What an SSH failure says about the board; None when it says nothing new."""
    if isinstance(error, ssh.HostKeyMismatch | ssh.AuthFailed | CredentialError):
        return Board.Status.NEEDS_ATTENTION
    if isinstance(error, ssh.ConnectFailed | ssh.ConnectionLost):
        return Board.Status.OFFLINE
    return None  # it answered but a command misbehaved: the task's error tells what


def fail_task(task: BoardTask, error: Exception) -> None:
    mark_board(task.board_id, status_for(error), str(error))
    finish_task(task, str(error))


def fetch_host_key(task_id: int) -> None:
    task = claim_task(task_id)
    if task is None:
        return
    board = task.board
    try:
        offered = ssh.fetch_host_key(board.host, board.port, remote.timeouts())
    except ssh.SSHError as exc:
        fail_task(task, exc)
        return
    Board.objects.filter(pk=board.pk).update(offered_host_key=offered, status_reason="")
    finish_task(task)


def probe_board(task_id: int) -> None:
    task = claim_task(task_id)
    if task is None:
        return
    board = task.board
    try:
        with work.hold(board.pk, ttl=lock_ttl(), label=f"task {task.pk}"):
            with remote.session(board) as session:
                facts = read_facts(session)
    except (ssh.SSHError, CredentialError) as exc:
        fail_task(task, exc)
        return
    except BoardBusy:
        _wait_for_board(task)
        return
    except ProbeError as exc:
        finish_task(task, str(exc))
        return
    with transaction.atomic():
        snapshot = save_snapshot(board, facts)
        mark_board(board.pk, Board.Status.ONLINE, clears_attention=True)
        finish_task(task, snapshot=snapshot)


def read_facts(session: ssh.Session):
    """Probe the board over an open session (one round trip); ProbeError if not understood."""
    result = session.run_script(PROBE_SCRIPT, PROBE_TIMEOUT_S, output_cap=PROBE_OUTPUT_CAP)
    facts = parse_probe_output(result.text)
    if result.stdout_truncated:
        facts.errors.append(f"the probe printed more than {PROBE_OUTPUT_CAP} bytes; cut there")
    return facts


def _wait_for_board(task: BoardTask) -> None:
    """Give the worker back and try again later, or end once it has waited long enough."""
    if not enqueue.wait_for_board(task, partial(tasks.queue_task, task)):
        finish_task(
            task,
            f"{task.board.name} was busy with other work for more than "
            f"{enqueue.busy_wait_s():.0f} s, so it was not probed. Try again later.",
        )


def clean_for_db(value):
    """Board output as the database takes it: PostgreSQL refuses NUL in text and JSON, and
    NaN or infinity in JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return value.replace("\x00", "\N{REPLACEMENT CHARACTER}")
    if isinstance(value, dict):
        return {clean_for_db(key): clean_for_db(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_for_db(item) for item in value]
    return value


def _column(value: str | None, field: str) -> str:
    """A fact cut to its dashboard column's length (the whole value stays in `facts`)."""
    limit = FactSnapshot._meta.get_field(field).max_length
    return clean_for_db(value or "")[:limit]


def save_snapshot(board: Board, facts) -> FactSnapshot:
    return FactSnapshot.objects.create(
        board=board,
        boot_id=_column(facts.boot_id, "boot_id"),
        model=_column(facts.model, "model"),
        revision=_column(facts.revision.code if facts.revision else "", "revision"),
        kernel_bits=facts.kernel_bits,
        userland_bits=facts.userland_bits,
        os_name=_column(facts.os_pretty_name, "os_name"),
        temperature_c=facts.temperature_c,
        throttled=facts.throttled,
        facts=clean_for_db(facts.to_dict()),
    )


def check_health(task_id: int) -> None:
    """Is the board reachable and does it let us in? One short command, no lock wait."""
    task = claim_task(task_id)
    if task is None:
        return
    board = task.board
    try:
        with work.hold(board.pk, ttl=lock_ttl(), label=f"task {task.pk}"):
            with remote.session(board) as session:
                session.run(["true"], settings.SSH_CONNECT_TIMEOUT)
    except BoardBusy:
        finish_task(task)  # a job is driving the board right now: it is evidently reachable
        return
    except (ssh.SSHError, CredentialError) as exc:
        fail_task(task, exc)
        return
    mark_board(board.pk, Board.Status.ONLINE)
    finish_task(task)


def task_crashed(job, connection, exc_type, exc_value, traceback) -> None:
    """RQ failure callback: a job that raised (a bug, a job timeout) still ends its task."""
    BoardTask.objects.filter(pk=job.args[0], state__in=BoardTask.UNFINISHED).update(
        state=BoardTask.State.FAILED,
        error=f"the job failed unexpectedly ({exc_type.__name__}); see the worker log",
        finished=timezone.now(),
    )
