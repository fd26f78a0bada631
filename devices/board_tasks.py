"""The board tasks of devices: fetching a host key, probing, checking health (devices.work).

Each is a kind of board work whose body drives the board; the lifecycle (claim, lock, wait,
end, crash) is devices.work's.
"""

import logging
import math

from django.conf import settings
from django.db import transaction

from devices import remote, ssh, work
from devices.models import Board, BoardTask, FactSnapshot
from devices.probe import PROBE_SCRIPT, ProbeError, parse_probe_output

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 30
# config.txt and cpuinfo are each capped at 1 MiB by the script, then base64-encoded.
PROBE_OUTPUT_CAP = 4 * 1024 * 1024


def fetch_host_key(task: BoardTask, hold: None) -> None:
    board = task.board
    offered = ssh.fetch_host_key(board.host, board.port, remote.timeouts())
    Board.objects.filter(pk=board.pk).update(offered_host_key=offered, status_reason="")


def probe_board(task: BoardTask, hold: work.Hold) -> None:
    board = task.board
    with remote.session(board) as session:
        try:
            facts = read_facts(session)
        except ProbeError as exc:
            raise work.Stop(work.State.FAILED, str(exc)) from None
    with transaction.atomic():
        snapshot = save_snapshot(board, facts)
        BoardTask.objects.filter(pk=task.pk).update(snapshot=snapshot)
        work.mark_board(board.pk, Board.Status.ONLINE, clears_attention=True)


def read_facts(session: ssh.Session):
    """Probe the board over an open session (one round trip); ProbeError if not understood."""
    result = session.run_script(PROBE_SCRIPT, PROBE_TIMEOUT_S, output_cap=PROBE_OUTPUT_CAP)
    facts = parse_probe_output(result.text)
    if result.stdout_truncated:
        facts.errors.append(f"the probe printed more than {PROBE_OUTPUT_CAP} bytes; cut there")
    return facts


def check_health(task: BoardTask, hold: work.Hold) -> None:
    """Is the board reachable and does it let us in? One short command."""
    with remote.session(task.board) as session:
        session.run(["true"], settings.SSH_CONNECT_TIMEOUT)
    work.mark_board(task.board_id, Board.Status.ONLINE)


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


def _probe_longest_s() -> float:
    return work.lock_ttl(PROBE_TIMEOUT_S)


def _probe_step_s() -> float:
    return PROBE_TIMEOUT_S


def _not_probed(task: BoardTask) -> str:
    return work.busy_reason(task, "so it was not probed. Try again later.")


def _register(kind: str, body: str, **differs) -> None:
    """A task of devices: a short one, whose SSH error ends it failed, saying so."""
    work.register(
        work.Kind(
            name=kind,
            model=BoardTask,
            body=f"devices.board_tasks.{body}",
            longest_s=_probe_longest_s,
            ssh_errors_end_it=True,
            **differs,
        )
    )


# It only reads the key the board offers: it drives nothing, and takes no lock.
_register(BoardTask.Kind.FETCH_HOST_KEY.value, "fetch_host_key", lock_step_s=None)
_register(
    BoardTask.Kind.PROBE.value, "probe_board", lock_step_s=_probe_step_s, busy_reason=_not_probed
)
# A board another job drives right now evidently answers: its health check is done.
_register(
    BoardTask.Kind.HEALTH.value, "check_health", lock_step_s=_probe_step_s, on_busy=work.State.DONE
)
