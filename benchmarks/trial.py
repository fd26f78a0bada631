"""Run one trial of a plan on its two ends, and always clean up after it.

Setup, servers, the measurement (detached, polled so the job can show progress, renew its
lock and notice a cancel), collection, then teardown on both ends, whatever happened before:
a failed step, a timeout, a cancel or a lost connection. The trial's directories are removed
last. The caller (benchmarks.engine) keeps the outputs and records how the trial ended.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.catalog.spec import Command, Context, Plan
from benchmarks.endpoints import KILL_AFTER_S, Detached, Endpoint, StartFailed
from devices import ssh

log = logging.getLogger(__name__)

OUTPUT_CAP = 256 * 1024  # bytes of a measurement's output kept with the run
MEASURE = "measure"
SERVER_GRACE_S = 60  # a server outlives the measurement's deadline by this much at most
# Past its limit and `timeout`'s KILL, the exit status comes within a poll or two: a
# measurement still "running" this much later can no longer be believed to end by itself.
MEASURE_MARGIN_S = 15


class TrialFailed(Exception):
    """The trial produced no measurement; the message says why, in words."""

    def __init__(self, reason: str, outputs: Mapping[str, str] | None = None):
        super().__init__(reason)
        self.outputs = dict(outputs or {})


class Cancelled(Exception):
    """A person cancelled the trial; its processes on both ends were stopped."""


@dataclass
class Outcome:
    outputs: dict[str, str]  # "measure" and each collect command's name
    measure_s: float  # wall time of the measurement, as seen by the job (±50 ms)
    truncated: bool = False
    log: list[str] = field(default_factory=list)


@dataclass
class Hooks:
    """What the engine does while a trial runs; every hook is optional."""

    tick: Callable[[str], None] = lambda tail: None  # each poll: the output's tail
    cancelled: Callable[[], bool] = lambda: False
    # Just before the measurement starts; returns what starts with it on its end, in the same
    # round trip and as the same user (the sampler there).
    measuring: Callable[[], Sequence[Detached]] = lambda: ()
    # Just after it ended, however it ended: with what the companion that started with it on
    # its end printed, where the last wait stopped it (else None: stop it yourself).
    measured: Callable[[str | None], None] = lambda companion: None


def clean_up_after(
    plan: Plan, ends: Mapping[str, Endpoint], ctx: Context, extra: tuple[tuple[str, str], ...] = ()
) -> list[str]:
    """Undo what a trial whose job died may have left: stop its detached commands, run its
    teardown, remove its directories. extra: (end, name) of other detached commands (the
    sampler). Returns what went wrong, in words."""
    trial = _Trial(plan, ends, ctx, Hooks())
    names = [(command, f"server{index}") for index, command in enumerate(plan.servers)]
    names.append((plan.measure, MEASURE))
    names += [(Command(where, ("sampler",)), name) for where, name in extra if where in ends]
    trial.started = [(command, name) for command, name in names if command.on in ends]
    trial.clean_up()
    return [line for line in trial.log if "failed" in line]


def run(
    plan: Plan, ends: Mapping[str, Endpoint], ctx: Context, hooks: Hooks | None = None
) -> Outcome:
    trial = _Trial(plan, ends, ctx, hooks or Hooks())
    try:
        return trial.run()
    finally:
        trial.clean_up()


class _Trial:
    def __init__(self, plan: Plan, ends: Mapping[str, Endpoint], ctx: Context, hooks: Hooks):
        self.plan, self.ends, self.ctx, self.hooks = plan, ends, ctx, hooks
        self.dirs = {"board": ctx.workdir}
        if "peer" in ends:
            self.dirs["peer"] = ctx.peer_workdir
        self.started: list[tuple[Command, str]] = []  # detached commands, by name
        self.ended: set[str] = set()  # those seen to end by themselves: nothing to stop
        self.log: list[str] = []

    def note(self, words: str) -> None:
        log.info("trial: %s", words)
        self.log.append(words)

    def end(self, command: Command) -> Endpoint:
        return self.end_at(command.on)

    def end_at(self, where: str) -> Endpoint:
        try:
            return self.ends[where]
        except KeyError:
            raise TrialFailed(f"this benchmark needs a {where}, and none was given") from None

    def run(self) -> Outcome:
        # Where a setup step runs first; elsewhere the first detached command makes the
        # directory (one round trip fewer per trial).
        for where in dict.fromkeys(command.on for command in self.plan.setup):
            self.end_at(where).run(["mkdir", "-p", "--", self.dirs[where]], 10)
        for command in self.plan.setup:
            self.run_step(command, "setup")
        for index, command in enumerate(self.plan.servers):
            self.start_detached(command, f"server{index}", command.timeout_s + SERVER_GRACE_S)
        if self.plan.servers:
            time.sleep(self.plan.settle_s)
            self.check_servers()
        outputs, seconds, truncated = self.measure()
        for command in self.plan.collect:
            outputs[command.name] = self.run_step(command, "collecting").text
        return Outcome(outputs, seconds, truncated, self.log)

    def run_step(self, command: Command, stage: str) -> ssh.Result:
        self.note(f"{stage} on {command.on}: {command.program}")
        try:
            result = self.end(command).run(
                command.argv, command.timeout_s, sudo=command.sudo, stdin=command.stdin
            )
        except ssh.CommandTimeout:  # the end answered: the command itself overran
            raise TrialFailed(
                f"{stage} failed on the {command.on}: {command.program} did not finish within "
                f"{command.timeout_s:g} s; it was stopped"
            ) from None
        except ssh.CommandKilled:
            raise TrialFailed(
                f"{stage} failed on the {command.on}: {command.program} was killed by a signal"
            ) from None
        if not result.ok:
            raise TrialFailed(
                f"{stage} failed on the {command.on}: {command.program} exited with "
                f"{result.exit_status}: {result.error_text() or result.text[-300:].strip()}"
            )
        return result

    def start_detached(
        self, command: Command, name: str, timeout: float, after: Sequence[Detached] = ()
    ) -> None:
        self.note(f"starting {command.program} on the {command.on}")
        directory = self.dirs[command.on]
        try:
            self.end(command).start(
                directory, name, command.argv, timeout, sudo=command.sudo, after=after
            )
        except StartFailed as exc:
            raise TrialFailed(f"{command.program} {exc}") from None
        self.started.append((command, name))

    def check_servers(self) -> None:
        for command, name in self.started:
            waited = self.ends[command.on].wait(self.dirs[command.on], name, up_to_s=0)
            if waited.finished:
                error = self.error_of(command, name)
                status = "unknown" if waited.vanished else waited.exit_status
                raise TrialFailed(
                    f"{command.program} on the {command.on} stopped as soon as it started "
                    f"(exit status {status}): {error or waited.tail[-300:]}"
                )

    def error_of(self, command: Command, name: str) -> str:
        path = f"{self.dirs[command.on]}/{name}.err"
        result = self.ends[command.on].read(path, 4000, sudo=command.sudo)
        return result.text.strip()[-500:]

    def measure(self) -> tuple[dict[str, str], float, bool]:
        command = self.plan.measure
        end, directory = self.end(command), self.dirs[command.on]
        companions = self.hooks.measuring()
        # The wait that sees the end stops a companion of the same user too (the sampler).
        then_stop = companions[0].name if len(companions) == 1 and not command.sudo else ""
        waited = None
        began = time.monotonic()
        # Its own deadline, should the board's `timeout` never report (stopped, say).
        deadline_s = command.timeout_s + KILL_AFTER_S + MEASURE_MARGIN_S
        try:
            self.start_detached(command, MEASURE, command.timeout_s, companions)
            while True:
                waited = end.wait(directory, MEASURE, then_stop=then_stop)
                self.hooks.tick(waited.tail)
                if waited.finished:
                    break
                if self.hooks.cancelled():
                    raise Cancelled("cancelled while measuring")
                if time.monotonic() - began > deadline_s:
                    raise TrialFailed(
                        f"{command.program} did not end within {deadline_s:g} s (its limit of "
                        f"{command.timeout_s:g} s and {deadline_s - command.timeout_s:g} s of "
                        f"grace), and the {command.on} never reported it stopped; it was stopped"
                    )
        finally:
            seconds = time.monotonic() - began
            self.hooks.measured(waited.companion if waited is not None else None)
        self.ended.add(MEASURE)
        if waited.whole:  # the last poll brought all of it
            output = ssh.Result(0, waited.tail.encode(), b"")
        else:
            output = end.read(f"{directory}/{MEASURE}.out", OUTPUT_CAP, sudo=command.sudo)
        outputs = {MEASURE: output.text}
        if waited.vanished:
            raise TrialFailed(
                f"{command.program} ended on the {command.on}, but the process that watched it "
                "there was killed (out of memory, or by the command itself), so its exit "
                "status is unknown; its output is kept",
                outputs,
            )
        if waited.exit_status == ssh.TIMEOUT_EXIT_STATUS:
            raise TrialFailed(
                f"{command.program} did not finish within {command.timeout_s:g} s; it was stopped",
                outputs,
            )
        if waited.exit_status != 0:
            error = self.error_of(command, MEASURE)
            raise TrialFailed(
                f"{command.program} exited with {waited.exit_status}: "
                f"{error or output.text[-300:].strip()}",
                outputs,
            )
        self.note(f"measured in {seconds:.2f} s")
        return outputs, seconds, output.stdout_truncated

    def clean_up(self) -> None:
        """Stop what was started, run every teardown, remove the directories. Never raises:
        a board that went away is reported by the step that noticed it."""
        for command, name in reversed(self.started):
            if name in self.ended:
                continue
            self.quietly(
                f"stopping {command.program} on the {command.on}",
                lambda c=command, n=name: self.ends[c.on].stop(self.dirs[c.on], [n], sudo=c.sudo),
            )
        for command in self.plan.teardown:
            self.quietly(
                f"teardown on the {command.on}: {command.program}",
                lambda c=command: self.end(c).run(c.argv, c.timeout_s, sudo=c.sudo, stdin=c.stdin),
            )
        for where, directory in self.dirs.items():
            sudo = any(command.sudo for command, _ in self.started if command.on == where)
            self.quietly(
                f"stopping what was left on the {where} and removing {directory}",
                lambda w=where, d=directory, s=sudo: self.ends[w].finish(d, sudo=s),
            )

    def quietly(self, words: str, action: Callable[[], object]) -> None:
        try:
            result = action()
        except (ssh.SSHError, TrialFailed) as exc:
            self.note(f"{words} failed: {exc}")
            return
        if isinstance(result, ssh.Result) and not result.ok:
            self.note(f"{words} failed: {result.error_text() or result.exit_status}")
