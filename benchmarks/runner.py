"""One run on its board, by a job that holds the board's lock (benchmarks.lanes).

In order: the board's state, the benchmark's definition, the preset (applied through the
apply job's own code when the board does not run it), a snapshot of the board, the tools, the
peer, a quiet board, the trial with telemetry on both ends, the parse, the validity. Every way
out ends the run in a terminal state with its reason in words, and what a dead job left on a
board is cleaned up by the next run there.
"""

import getpass
import logging
import socket
import time

from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks import (
    adaptive,
    board_state,
    catalog,
    effective,
    limits,
    network_link,
    results,
    tallies,
    telemetry,
    trial,
)
from benchmarks.catalog import custom
from benchmarks.catalog.spec import Benchmark, Context, ParamError, ParseError
from benchmarks.endpoints import BoardEndpoint, ControllerEndpoint, Endpoint
from benchmarks.models import Lane, Measurement, Run
from benchmarks.telemetry.samplers import SAMPLER_JOB, Samplers
from benchmarks.tools import missing_tools
from devices import remote, ssh, work
from devices.board_tasks import PROBE_TIMEOUT_S, clean_for_db, read_facts, save_snapshot
from devices.credentials import CredentialError
from devices.locks import BoardBusy
from devices.models import Application, Board
from devices.probe import ProbeError
from devices.work import mark_board, status_for

log = logging.getLogger(__name__)

RAM_DISK = "/dev/shm"  # noqa: S108 - the board's tmpfs (Raspberry Pi OS, every Debian)
LOG_TAIL_CHARS = 2000
CONNECT_TRIES = 3  # a board whose sshd restarts (after a dropped connection) gets a moment
CONNECT_BACKOFF_S = 1.0  # the wait after the first failed try; it doubles after each
LANE_GIVES_UP_AFTER = 3  # runs in a row that could not reach the board: skip the rest


def longest_step_s() -> float:
    """A lane's longest stretch between two renewals of its board's lock (devices.work): the
    probe of the board, or a trial's clean-up command, at its deadline and kill grace (a poll
    of the measurement and the pause between two tries to connect are shorter). Applying a
    preset holds it longer (board_state.apply_version)."""
    return PROBE_TIMEOUT_S + ssh.KILL_GRACE_S


def longest_run_s() -> float:
    """The longest a run may take with the built-in benchmarks: its measurement's limit, the
    quiet wait, setup and clean-up."""
    built_in = max(benchmark.timeout_s for benchmark in catalog.BUILT_IN.values())
    return max(built_in, custom.MAX_TIMEOUT_S) + 600


# What a probe's snapshot is checked against before a run reuses it: the boot, config.txt's
# digest and the governor (scaling_governor of cpu0, as the probe reads it).
STATE_NOW = (
    'cat /proc/sys/kernel/random/boot_id; sha256sum < "$1" | cut -c1-64; '
    "cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
)


class Stop(work.Stop):
    """Ends the run (in a Run.State), as work.Stop ends board work. skip: also skip the lane's
    other runs of this preset ("preset") or all of them ("lane"), with the same reason."""

    def __init__(self, state: str, reason: str, *, skip: str = ""):
        super().__init__(state, reason)
        self.skip = skip


def execute(run: Run, lane: Lane, hold: work.Hold, kept: remote.Kept) -> Stop | None:
    """Run it to its end; how it ended when not done. kept: the job's open sessions, which
    the lane's next run in the same job reuses."""
    running = _Running(run, lane, hold, kept)
    try:
        running.go()
    except Stop as stop:
        running.end(stop)
        return stop
    return None


def end_interrupted(lane: Lane, why: str) -> int:
    """The lane's job died: its running run ends failed, and what it started on the board is
    stopped by the next run there (its plan says what to undo)."""
    now = timezone.now()
    ended = 0
    for run in lane.runs.filter(state=Run.State.RUNNING):
        ended += Run.objects.filter(pk=run.pk, state=Run.State.RUNNING).update(
            state=Run.State.FAILED,
            reason=f"stopped{_while(run)}: {why}",
            finished=now,
            environment={**run.environment, "cleanup_pending": True},
        )
    Lane.objects.filter(pk=lane.pk).update(step="")
    return ended


def run_paths(pk: int) -> dict:
    """Where a run works and what it may take, all following from its id: so the next run on
    the board can find and undo what a dead job left (a tunnel's interface, its directories)."""
    slot = pk % 6400  # a /30 of 10.213.100.0-10.213.199.255 and a name for this run's tunnel
    octet, base = 100 + slot // 64, (slot % 64) * 4
    return {
        "workdir": f"{RAM_DISK}/pifarm-run-{pk}",
        "peer_workdir": f"{RAM_DISK}/pifarm-run-{pk}-peer",
        "tunnel": {
            "board_ip": f"10.213.{octet}.{base + 1}",
            "peer_ip": f"10.213.{octet}.{base + 2}",
            "prefix": "30",
            "ifname": f"pft{slot}",
            "port": str(20000 + slot),
        },
        "port": 30000 + (pk % 10000) * 2,
    }


def _while(run: Run) -> str:
    return f" while {run.step}" if run.step else ""


class _Running:
    def __init__(self, run: Run, lane: Lane, hold: work.Hold, kept: remote.Kept):
        self.run, self.lane, self.hold, self.kept = run, lane, hold, kept
        self.board: Board = lane.board
        self.campaign = lane.campaign
        self.environment: dict = {}
        self.application: Application | None = None

    # ---- record keeping -----------------------------------------------------------------
    def step(self, words: str) -> None:
        """Each step renews the board's lock and ends a run a person cancelled meanwhile."""
        log.info("run %s: %s", self.run.pk, words)
        self.hold.renew()
        self.stop_if_cancelled(words)
        Run.objects.filter(pk=self.run.pk, state=Run.State.RUNNING).update(step=words)
        Lane.objects.filter(pk=self.lane.pk).update(step=words, heartbeat=timezone.now())

    def alive(self) -> None:
        """Within a long step: the board's lock, and the lane's heartbeat that keeps the sweep
        from taking the lane for dead (devices.work)."""
        self.hold.renew()
        Lane.objects.filter(pk=self.lane.pk).update(heartbeat=timezone.now())

    def stop_if_cancelled(self, before: str) -> None:
        if self.cancelled():
            raise Stop(Run.State.CANCELLED, f"cancelled before {before}; nothing was measured")

    def end(self, stop: Stop) -> None:
        log.info("run %s ended %s: %s", self.run.pk, stop.state, stop.reason)
        with transaction.atomic():
            Run.objects.filter(pk=self.run.pk, state=Run.State.RUNNING).update(
                state=stop.state,
                reason=clean_for_db(stop.reason),
                step="",
                finished=timezone.now(),
                environment=clean_for_db(self.environment),
                application=self.application,
            )
            rest = self.lane.runs.filter(state=Run.State.QUEUED)
            if stop.skip == "preset":
                rest = rest.filter(preset_version=self.run.preset_version)
            if stop.skip:
                rest.update(state=Run.State.SKIPPED, reason=stop.reason, finished=timezone.now())
        Lane.objects.filter(pk=self.lane.pk).update(step="", log_tail="")

    # ---- the run ------------------------------------------------------------------------
    def go(self) -> None:
        self.check_board()
        benchmark = self.benchmark()
        params = self.params(benchmark)
        self.ensure_preset()
        board_end = self.connect(self.board)
        snapshot = self.snapshot(board_end)
        ends = {"board": board_end}
        peer = self.peer()
        if peer is not None:
            ends["peer"] = peer
        self.clean_leftovers(ends)
        self.check_tools(board_end, benchmark.tools, "board")
        if peer is not None:
            self.check_tools(peer, benchmark.peer_tools, "peer")
        ctx = self.context(board_end, peer, snapshot)
        if peer is not None:
            # Who the other end was: a host name and the address the board reached it at.
            host = socket.gethostname() if ctx.peer_is_controller else self.lane.peer_board.host
            self.environment["peer_identity"] = {
                "name": self.lane.peer_name,
                "host": host,
                "address": ctx.peer_address,
            }
            if benchmark.category in network_link.NETWORK_CATEGORIES:
                self.environment["link"] = self.link(board_end, ctx.peer_address)
        self.wait_quiet(board_end)
        outcome, samples = self.measure(benchmark, params, ends, ctx)
        self.record(benchmark, params, outcome, samples, snapshot)

    def check_board(self) -> None:
        board = Board.objects.get(pk=self.board.pk)
        if board.status in (Board.Status.NEEDS_ATTENTION, Board.Status.MAINTENANCE):
            raise Stop(
                Run.State.SKIPPED,
                f"{board.name} is marked “{board.get_status_display()}”"
                + (f": {board.status_reason}" if board.status_reason else "")
                + ". Its runs were skipped; clear that and retry them.",
                skip="lane",
            )

    def benchmark(self) -> Benchmark:
        try:
            benchmark = catalog.lookup(self.run.benchmark)
        except catalog.UnknownBenchmark as exc:
            raise Stop(Run.State.SKIPPED, str(exc)) from None
        if benchmark.version != self.run.definition_version:
            raise Stop(
                Run.State.SKIPPED,
                f"{benchmark.name} changed since this campaign was made (definition "
                f"v{self.run.definition_version}, now v{benchmark.version}): its results would "
                "not compare. Start a new campaign.",
            )
        return benchmark

    def params(self, benchmark: Benchmark) -> dict:
        try:
            return benchmark.clean_params(self.run.params)
        except ParamError as exc:
            raise Stop(Run.State.SKIPPED, f"its parameters are refused now: {exc}") from None

    # ---- the preset ---------------------------------------------------------------------
    def ensure_preset(self) -> None:
        """Bring the board to the run's preset version, or for "as is" back to its state
        before the campaign, unless it is there already."""
        board_state.note_before(self.lane)
        version = self.run.preset_version
        if version is None:
            version = board_state.before(self.lane)
            if version is None:  # the board is as it was before the campaign
                self.application = self.board.current_application
                return
        last = self.board.current_application
        if last is not None and last.version_id == version.pk:
            self.application = last
            return
        # A board out of reach fails the run as one ("could not connect to ..."), counted
        # towards the lane giving up, rather than skipping the preset's runs as if the preset
        # were at fault: the application would only say that it changed nothing.
        self.reach(self.board).close()
        restoring = self.run.preset_version is None
        if restoring:
            self.step(f"putting back {version} (the state before the campaign)")
        else:
            self.step(f"applying {version}")
        self.kept.forget(self.board)  # the application reboots the board
        try:
            application = board_state.apply_version(self.lane, version, self.hold)
        except IntegrityError:
            # Someone's own application of this board waits for it: let it go first.
            Run.objects.filter(pk=self.run.pk).update(state=Run.State.QUEUED, started=None)
            raise BoardBusy("an application of this board is queued") from None
        self.application = application
        self.stop_if_cancelled("measuring (the preset's application ran to its end)")
        if application is None or application.state != Application.State.VERIFIED:
            outcome = application.reason if application else "it was not started"
            board = Board.objects.get(pk=self.board.pk)
            skip = "lane" if board.status == Board.Status.NEEDS_ATTENTION else "preset"
            what = "the state before the campaign" if restoring else str(version)
            raise Stop(Run.State.SKIPPED, f"{what} was not applied: {outcome}", skip=skip)

    # ---- the ends -----------------------------------------------------------------------
    def connect(self, board: Board) -> BoardEndpoint:
        """The board's session: the one the job's last run left open, else a new one."""
        session = self.kept.reuse(board)
        if session is None:
            session = self.reach(board)
            self.kept.keep(board, session)
        else:
            self.step(f"on {board.name} (connected)")
        return BoardEndpoint(board.name, session)

    def reach(self, board: Board) -> ssh.Session:
        """A session to board, or Stop: could not connect (after a few tries)."""
        self.step(f"connecting to {board.name}")
        for attempt in range(CONNECT_TRIES):
            try:
                session = remote.session(board)
                session.connect()
                return session
            except ssh.ConnectFailed as exc:
                error = exc
                if attempt + 1 < CONNECT_TRIES:
                    time.sleep(CONNECT_BACKOFF_S * 2**attempt)
                    self.alive()
            except (ssh.SSHError, CredentialError) as exc:
                error = exc
                break
        mark_board(board.pk, status_for(error), str(error))
        raise Stop(
            Run.State.FAILED,
            f"could not connect to {board.name}: {error}",
            skip="lane" if self.unreachable_in_a_row() else "",
        )

    def unreachable_in_a_row(self) -> bool:
        """This run and the ones before it in the lane all failed to reach the board."""
        before = self.lane.runs.filter(sequence__lt=self.run.sequence).order_by("-sequence")
        reasons = before.values_list("reason", flat=True)[: LANE_GIVES_UP_AFTER - 1]
        return len(reasons) == LANE_GIVES_UP_AFTER - 1 and all(
            reason.startswith("could not connect to") for reason in reasons
        )

    def snapshot(self, board_end: BoardEndpoint):
        """The board's facts at run time: the lane's last probe of it while the board still
        runs what that probe saw (the same boot, config.txt and governor: one short command
        tells), else a new probe."""
        earlier = (
            self.lane.runs.filter(snapshot__isnull=False)
            .exclude(pk=self.run.pk)
            .select_related("snapshot")
            .order_by("-started")
            .first()
        )
        if earlier is not None and self.unchanged_since(board_end, earlier.snapshot):
            snapshot = earlier.snapshot
        else:
            snapshot = self.probe(board_end)
        Run.objects.filter(pk=self.run.pk).update(snapshot=snapshot)
        self.environment["effective"] = effective.state(snapshot.facts)
        return snapshot

    def unchanged_since(self, board_end: BoardEndpoint, snapshot) -> bool:
        facts = snapshot.facts
        if not facts.get("config_path"):
            return False
        try:
            now = board_end.session.run(
                ["sh", "-c", STATE_NOW, "sh", facts["config_path"]], PROBE_TIMEOUT_S
            ).stdout.decode("utf-8", "replace")
        except ssh.SSHError as exc:
            raise self.lost(exc) from None
        then = [snapshot.boot_id, effective.state(facts)["config_sha256"], facts.get("governor")]
        return now.split() == then

    def probe(self, board_end: BoardEndpoint):
        self.step("probing the board")
        try:
            facts = read_facts(board_end.session)
        except ProbeError as exc:
            raise Stop(Run.State.FAILED, f"the board's probe was not understood: {exc}") from None
        except ssh.SSHError as exc:
            raise self.lost(exc) from None
        return save_snapshot(self.board, facts)

    def peer(self) -> Endpoint | None:
        if self.lane.peer_is_controller:
            return ControllerEndpoint()
        if self.lane.peer_board_id:
            return self.connect(self.lane.peer_board)
        return None

    def check_tools(self, end: Endpoint, tools: tuple[str, ...], where: str) -> None:
        if not tools:
            return
        self.step(f"checking the tools on the {where}")
        try:
            missing = missing_tools(end, tools)
        except ssh.SSHError as exc:
            raise self.lost(exc) from None
        if missing:
            benchmark = catalog.lookup(self.run.benchmark)
            packages = ", ".join(benchmark.packages) or "see the benchmark's description"
            raise Stop(
                Run.State.SKIPPED,
                f"tool missing on the {where} ({end.name}): {', '.join(missing)}. Install it "
                f"(Debian packages: {packages}), e.g. with “Prepare for benchmarks” on the "
                "board's page, and retry.",
            )

    def context(self, board_end: BoardEndpoint, peer: Endpoint | None, snapshot) -> Context:
        controller = isinstance(peer, ControllerEndpoint)
        if controller:
            peer_address = board_end.session.local_address()
        else:
            peer_address = self.lane.peer_board.host if peer else ""
        return Context(
            **run_paths(self.run.pk),
            board_address=self.board.host,
            peer_address=peer_address,
            peer_is_controller=controller,
            peer_user=self.peer_user(peer),
            board_user=self.board.username,
            userland_bits=snapshot.userland_bits if snapshot else None,
        )

    def link(self, board_end: BoardEndpoint, peer_address: str) -> dict:
        """The board's link towards its peer as its kernel reports it: the line rate a
        comparison draws (benchmarks.network_link)."""
        self.step("reading the board's link")
        try:
            return network_link.read(board_end, peer_address)
        except ssh.SSHError as exc:
            raise self.lost(exc) from None

    def peer_user(self, peer: Endpoint | None) -> str:
        if isinstance(peer, ControllerEndpoint):
            return getpass.getuser()
        return self.lane.peer_board.username if peer else ""

    def clean_leftovers(self, ends: dict[str, Endpoint]) -> None:
        """Stop and undo what runs on these ends left when their job died."""
        pending = Run.objects.select_related("board").filter(
            board__in=[self.board, *([self.lane.peer_board] if self.lane.peer_board else [])],
            state=Run.State.FAILED,  # a run that left work behind failed (the index: few)
            environment__cleanup_pending=True,
        )
        for leftover in pending:
            self.step(f"cleaning up after an interrupted run ({leftover.benchmark})")
            try:
                benchmark = catalog.lookup(leftover.benchmark)
                params = benchmark.clean_params(leftover.params)
            except (catalog.UnknownBenchmark, ParamError):
                continue
            mine = {where: end for where, end in ends.items() if where == "board"}
            if leftover.board_id == self.board.pk and "peer" in ends:
                mine["peer"] = ends["peer"]
            ctx = Context(**run_paths(leftover.pk), board_address=leftover.board.host)
            problems = trial.clean_up_after(
                benchmark.plan(params, ctx),
                mine,
                ctx,
                extra=(("board", SAMPLER_JOB), ("peer", SAMPLER_JOB)),
            )
            environment = {**leftover.environment, "cleanup_pending": False}
            if problems:
                environment["cleanup_problems"] = problems
            Run.objects.filter(pk=leftover.pk).update(environment=environment)

    # ---- the trial ----------------------------------------------------------------------
    def wait_quiet(self, board_end: BoardEndpoint) -> None:
        quiet = self.campaign.spec.get("quiet")
        if not quiet:
            return
        self.step(f"waiting for a quiet board (up to {quiet['deadline_s']:g} s)")
        try:
            found = telemetry.wait_until_quiet(
                board_end,
                load_below=quiet["load_below"],
                cpu_below_pct=quiet["cpu_below_pct"],
                cool_below_c=quiet["cool_below_c"],
                deadline_s=quiet["deadline_s"],
                each_round=self.quiet_round,
            )
        except ssh.SSHError as exc:
            raise self.lost(exc) from None
        self.environment["quiet"] = {
            "reached": found.reached,
            "waited_s": found.waited_s,
            "words": found.words,
        }

    def quiet_round(self) -> None:
        self.alive()
        self.stop_if_cancelled("measuring, while it waited for a quiet board")

    def measure(self, benchmark: Benchmark, params: dict, ends, ctx: Context):
        # On both ends: the processes a network trial involves, and the benchmark's tools.
        sampled = tuple(
            telemetry.followable(
                (*telemetry.NETWORK_PROCESSES, *benchmark.tools, *benchmark.peer_tools)
            )
        )
        plan = benchmark.plan(params, ctx)
        samplers = Samplers(ends, ctx, sampled, benchmark.timeout_s + 120, plan.measure)

        def measuring():
            self.step(f"measuring: {benchmark.title}")
            return samplers.start()

        hooks = trial.Hooks(
            tick=self.tick, cancelled=self.cancelled, measuring=measuring, measured=samplers.stop
        )
        try:
            outcome = trial.run(plan, ends, ctx, hooks)
        except trial.Cancelled:
            raise Stop(
                Run.State.CANCELLED,
                "cancelled while measuring; its processes on the board"
                + (" and the peer" if "peer" in ends else "")
                + " were stopped",
            ) from None
        except trial.TrialFailed as exc:
            self.keep_raw(exc.outputs.get(trial.MEASURE, ""))
            self.keep_samples(samplers)
            raise Stop(Run.State.FAILED, str(exc)) from None
        except ssh.SSHError as exc:
            raise self.lost(exc) from None
        return outcome, samplers

    def tick(self, tail: str) -> None:
        self.hold.renew()
        Lane.objects.filter(pk=self.lane.pk).update(
            log_tail=clean_for_db(tail[-LOG_TAIL_CHARS:]), heartbeat=timezone.now()
        )

    def cancelled(self) -> bool:
        return Run.objects.filter(pk=self.run.pk, cancel_requested=True).exists()

    def lost(self, error: Exception) -> Stop:
        """The connection broke: what the trial started there may still run, so the next run
        on the board undoes it (its clean-up could not reach the board)."""
        self.environment["cleanup_pending"] = True
        mark_board(self.board.pk, status_for(error), str(error))
        return Stop(Run.State.FAILED, f"lost the connection to {self.board.name}: {error}")

    def keep_raw(self, text: str) -> None:
        Run.objects.filter(pk=self.run.pk).update(**_raw_fields(text))

    def keep_samples(self, samplers: Samplers) -> None:
        Run.objects.filter(pk=self.run.pk).update(**_sample_fields(samplers))

    # ---- the result ---------------------------------------------------------------------
    def record(self, benchmark: Benchmark, params: dict, outcome, samplers, snapshot) -> None:
        """Parse the output and write the run's result, its output and its telemetry in one
        transaction; output the parser refuses is kept with the failed run."""
        raw = outcome.outputs.get(trial.MEASURE, "")
        try:
            parsed = benchmark.parse(outcome.outputs, params)
            missing = [
                m.name for m in benchmark.metrics if not m.optional and m.name not in parsed.values
            ]
            if missing:
                raise ParseError(f"no value for {', '.join(missing)}")
        except RecursionError:  # a parser's bug on pathological output, not the run's
            log.exception("run %s: the %s parser failed", self.run.pk, benchmark.name)
            self.keep_raw(raw)
            self.keep_samples(samplers)
            too_deep = "the output was not understood: it is nested too deeply to read"
            raise Stop(Run.State.FAILED, f"{too_deep} (the raw output is kept)") from None
        except ParseError as exc:
            self.keep_raw(raw)
            self.keep_samples(samplers)
            raise Stop(
                Run.State.FAILED,
                f"the output was not understood: {exc} (the raw output is kept with the run)",
            ) from None
        self.hold.renew()
        reasons = telemetry.suspect_reasons(
            samplers.samples.get("board", []),
            expected_arm_mhz=self.expected_arm_mhz(),
            involved=set(samplers.names),
        )
        if too_short := benchmark.too_short(outcome.measure_s):
            reasons.append(too_short)
        if found := self.environment.get("link"):  # the throughput against the link's ceiling
            uses = (
                limits.link_use(parsed.values[m.name], m.unit, found, params.get("mtu"))
                for m in benchmark.metrics
                if m.name in parsed.values
            )
            self.environment["link_use"] = next((use for use in uses if use), None)
        self.environment.update(
            telemetry=telemetry.summarize(samplers.samples.get("board", [])),
            peer_telemetry=telemetry.summarize(samplers.samples.get("peer", [])),
            peer=self.lane.peer_name,
            sampler_problems=samplers.problems,
            trial_log=outcome.log,
        )
        with transaction.atomic():
            Measurement.objects.bulk_create(
                Measurement(
                    run_id=self.run.pk,
                    metric=metric.name,
                    value=float(parsed.values[metric.name]),
                    unit=metric.unit,
                    higher_is_better=metric.higher_is_better,
                )
                for metric in benchmark.metrics
                if metric.name in parsed.values
            )
            recorded = Run.objects.filter(pk=self.run.pk, state=Run.State.RUNNING).update(
                state=Run.State.DONE,
                step="",
                finished=timezone.now(),
                **_raw_fields(raw),
                **_sample_fields(samplers),
                measure_s=outcome.measure_s,
                details=clean_for_db(parsed.details),
                clock_mhz=results.clock_under_load(self.environment["telemetry"]),
                tool_version=results.main_tool_version(parsed.details),
                config_fingerprint=effective.fingerprint(self.environment["effective"]),
                suspect=bool(reasons),
                suspect_reasons=reasons,
                environment=clean_for_db(self.environment),
                application=self.application,
                peer=self.lane.peer_name,
            )
            if recorded:  # not ended meanwhile (a sweep that took its job for dead, say)
                tallies.add(self.run.pk)
        Lane.objects.filter(pk=self.lane.pk).update(step="", log_tail="")
        mark_board(self.board.pk, Board.Status.ONLINE)
        adaptive.after_run(self.run, benchmark, suspect=bool(reasons))

    def expected_arm_mhz(self) -> int | None:
        version = self.run.preset_version
        if version is None:
            return None
        try:
            return int(str(version.options.get("arm_freq", "")).strip())
        except ValueError:
            return None


def _raw_fields(text: str) -> dict:
    return {
        "raw_output": clean_for_db(text),
        "raw_truncated": len(text.encode()) >= trial.OUTPUT_CAP,
    }


def _sample_fields(samplers: Samplers) -> dict:
    return {"telemetry": samplers.dicts("board"), "peer_telemetry": samplers.dicts("peer")}
