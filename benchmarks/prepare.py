"""The "prepare board" job: install, with apt, what the chosen benchmarks lack on a board.

It finds each benchmark's missing tools with the check a run makes (benchmarks.tools). If
some lack one, it runs `apt-get update`, then `apt-get install` of those benchmarks' packages
(from our own catalog), detached on the board under a deadline, so that a lost connection
cannot leave apt running for ever; it polls apt's output into the task for the board page,
then checks the tools again and probes the board (its page then shows the tools there now).
apt needs root: `sudo -n`, so a sudo that wants a password fails at once with sudo's words
instead of hanging.
"""

import logging
import re
import time

from benchmarks import catalog
from benchmarks.catalog.spec import Benchmark
from benchmarks.endpoints import BoardEndpoint
from benchmarks.runner import RAM_DISK
from benchmarks.tools import missing_tools
from devices import remote, work
from devices.board_tasks import PROBE_TIMEOUT_S, clean_for_db, read_facts, save_snapshot
from devices.models import Board, BoardTask
from devices.probe import ProbeError

log = logging.getLogger(__name__)

APT_DEADLINE_S = 900  # update and install together: a slow mirror, a Pi Zero unpacking
LOG_TAIL_BYTES = 4000  # of apt's output, kept on the task for the page
ERROR_LINES = 12  # of apt's output, in the reason of a task that failed
POLL_GRACE_S = 60  # past the deadline (timeout's own kill grace, a slow board): then give up
# $@: the packages. stderr joins stdout: apt's errors ("E: Unable to locate package") and
# sudo's ("a password is required") are what the page must show. The "==>" lines mark the step.
APT_SCRIPT = r"""
exec 2>&1
echo "==> apt-get update"
sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update || exit
echo "==> apt-get install $*"
exec sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
"""
INSTALL_MARK = "==> apt-get install"
# Debian policy 5.6.1. The names come from our own catalog; this keeps any other word (an
# option, say) from ever reaching apt's command line as a package.
DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+")


def prepare_board(task: BoardTask, hold: work.Hold) -> None:
    """Every way out raises work.Stop: done, saying what it did, or failed, saying why."""
    with remote.session(task.board) as session:
        _Preparing(task, BoardEndpoint(task.board.name, session), hold).go()


def _failed(reason: str) -> work.Stop:
    return work.Stop(work.State.FAILED, reason)


class _Preparing:
    def __init__(self, task: BoardTask, end: BoardEndpoint, hold: work.Hold):
        self.task, self.end, self.hold = task, end, hold
        self.workdir = f"{RAM_DISK}/pifarm-prepare-{task.pk}"
        self.missing: dict[str, list[str]] = {}  # benchmark name: its tools the board lacks

    def go(self) -> None:
        benchmarks = [_benchmark(name) for name in self.task.benchmarks]
        lacking = self.lacking(benchmarks)
        names = ", ".join(b.name for b in benchmarks)
        if not lacking:
            raise work.Stop(work.State.DONE, f"nothing to install: every tool of {names} is there")
        packages = list(dict.fromkeys(p for b in lacking for p in b.packages))
        self.install(packages)
        still = self.lacking(benchmarks)
        if still:
            raise _failed(
                f"apt-get installed {', '.join(packages)}, yet tools are still missing: "
                + _missing_words(still, self.missing)
            )
        self.probe()
        installed = f"installed {', '.join(packages)}; every tool of {names} is there now"
        raise work.Stop(work.State.DONE, installed)

    def probe(self) -> None:
        """A fresh snapshot, so that the board's page (its tools) shows what is there now."""
        self.set_step("probing the board")
        try:
            snapshot = save_snapshot(self.task.board, read_facts(self.end.session))
        except ProbeError as exc:  # the install stands; the page keeps the older facts
            log.warning("prepare task %s: the probe after apt failed: %s", self.task.pk, exc)
            return
        BoardTask.objects.filter(pk=self.task.pk).update(snapshot=snapshot)
        work.mark_board(self.task.board_id, Board.Status.ONLINE)

    def lacking(self, benchmarks: list[Benchmark]) -> list[Benchmark]:
        """The benchmarks that lack a tool on the board; self.missing says which tools."""
        self.set_step("checking the tools")
        self.missing = {b.name: missing_tools(self.end, b.tools) for b in benchmarks}
        lacking = [b for b in benchmarks if self.missing[b.name]]
        unknown = [b for b in lacking if not b.packages]
        if unknown:
            raise _failed(
                "no Debian package is known for the tools these lack: "
                + _missing_words(unknown, self.missing)
            )
        return lacking

    def install(self, packages: list[str]) -> None:
        refused = [p for p in packages if not DEBIAN_PACKAGE.fullmatch(p)]
        if refused:
            raise _failed(f"not a Debian package name: {', '.join(map(repr, refused))}")
        self.set_step(f"updating the package lists, to install {', '.join(packages)}")
        argv = ["sh", "-c", APT_SCRIPT, "pifarm-prepare", *packages]
        self.end.start(self.workdir, "apt", argv, APT_DEADLINE_S)
        try:
            status, tail = self.follow(packages)
        finally:
            self.end.run(["rm", "-rf", "--", self.workdir], 15)
        if status == 0:
            return
        if status == 124:
            problem = f"apt-get did not finish within {APT_DEADLINE_S} s and was stopped"
        elif status is None:
            problem = (
                "apt-get ended, but the process that watched it on the board was killed, "
                "so whether it succeeded is unknown"
            )
        else:
            problem = f"apt-get failed (exit status {status})"
        raise _failed(f"{problem}; its last lines:\n{clean_for_db(_last_lines(tail))}")

    def follow(self, packages: list[str]) -> tuple[int | None, str]:
        """Poll apt into the task until it ends; its exit status (None: unknown, its watcher
        was killed) and the tail of its output."""
        give_up = time.monotonic() + APT_DEADLINE_S + POLL_GRACE_S
        installing = False
        while time.monotonic() < give_up:
            waited = self.end.wait(self.workdir, "apt", tail_bytes=LOG_TAIL_BYTES)
            if not installing and INSTALL_MARK in waited.tail:
                installing = True
                self.set_step(f"installing {', '.join(packages)}")
            self.hold.renew()
            BoardTask.objects.filter(pk=self.task.pk).update(log_tail=clean_for_db(waited.tail))
            if waited.finished:
                return waited.exit_status, waited.tail
        raise _failed(f"apt-get did not end within {APT_DEADLINE_S + POLL_GRACE_S} s")

    def set_step(self, words: str) -> None:
        log.info("prepare task %s: %s", self.task.pk, words)
        self.hold.renew()
        BoardTask.objects.filter(pk=self.task.pk, state=BoardTask.State.RUNNING).update(
            step=words[: BoardTask._meta.get_field("step").max_length]
        )


def _benchmark(name: str) -> Benchmark:
    benchmark = catalog.BUILT_IN.get(name)
    if benchmark is None:  # custom benchmarks name no packages: nothing to install for them
        raise _failed(f"there is no built-in benchmark {name!r}")
    return benchmark


def _missing_words(benchmarks: list[Benchmark], missing: dict[str, list[str]]) -> str:
    return "; ".join(f"{b.name}: {', '.join(missing[b.name])}" for b in benchmarks)


def _last_lines(tail: str) -> str:
    lines = [line for line in tail.splitlines() if line.strip()]
    return "\n".join(lines[-ERROR_LINES:]) or "it printed nothing"


def _longest_s() -> float:
    """Connecting, the checks, apt's deadline and a slow last poll."""
    return work.lock_ttl(PROBE_TIMEOUT_S) + APT_DEADLINE_S + POLL_GRACE_S


def _lock_step_s() -> float:
    return PROBE_TIMEOUT_S  # the probe after apt; apt itself is polled every few seconds


def _not_prepared(task: BoardTask) -> str:
    return work.busy_reason(task, "so it was not prepared. Try again later.")


work.register(
    work.Kind(
        name=BoardTask.Kind.PREPARE.value,
        model=BoardTask,
        body="benchmarks.prepare.prepare_board",
        longest_s=_longest_s,
        lock_step_s=_lock_step_s,
        busy_reason=_not_prepared,
        ssh_errors_end_it=True,
    )
)
