"""Applying a preset version to a board: the RQ job and the record of what happened.

Write, reboot, wait, verify, roll back. The board's lock is held throughout, every step is
written to the Application row as it starts (the page polls it), and every way of ending says
in plain words what happened and, when a person must act, what to do. The commands that run
on the board live in devices.apply_steps.
"""

import base64
import logging

from django.conf import settings

from devices import apply_steps as steps
from devices import presets, remote, ssh, tasks, work
from devices.board_tasks import PROBE_OUTPUT_CAP, PROBE_TIMEOUT_S
from devices.configtxt.validation import MAX_BYTES as MAX_CONFIG_BYTES
from devices.credentials import CredentialError
from devices.models import Application, Board, BoardTask, PresetVersion
from devices.probe import PROBE_SCRIPT, ProbeError, parse_probe_output
from devices.vcgencmd import throttle_summary

log = logging.getLogger(__name__)

# Defaults; each can be overridden in Django settings under the name in brackets.
REBOOT_DEADLINE_S = 180  # [PIFARM_REBOOT_DEADLINE] from the reboot command to a new boot
REBOOT_POLL_S = 3  # [PIFARM_REBOOT_POLL] between attempts to reach a rebooting board
RECONNECT_DEADLINE_S = 60  # [PIFARM_RECONNECT_DEADLINE] after a dropped connection, no reboot

State = Application.State

# Steps before anything on the board changes (the crash callback reads them).
WAITING = "waiting for the board to be free"
CONNECTING = "connecting"
PROBING = "probing the board"
READING = "reading the current settings"
BEFORE_CHANGES = {"", WAITING, CONNECTING, PROBING, READING}


def _seconds(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def reboot_deadline() -> float:
    return _seconds("PIFARM_REBOOT_DEADLINE", REBOOT_DEADLINE_S)


def job_longest_s() -> float:
    """The longest an application runs: a trial, a roll-back with its reboot, and every
    command at its deadline. Waiting for the board is not in it: a job that finds the board
    busy ends at once and tries again later."""
    one_run = 2 * reboot_deadline() + 12 * steps.COMMAND_TIMEOUT_S
    return 2 * one_run


def longest_step_s() -> float:
    """Its longest stretch between two renewals of the board's lock: a reboot, the probe, or
    the three commands of one step (commit: write config.txt, prune backups, remove
    tryboot.txt), each at its deadline and kill grace."""
    commands = 3 * (steps.COMMAND_TIMEOUT_S + ssh.KILL_GRACE_S)
    return max(reboot_deadline(), PROBE_TIMEOUT_S, commands)


def _stop(state: str, reason: str, board_status=Board.Status.ONLINE, board_reason="") -> work.Stop:
    """Ends the application; the board answered unless board_status says otherwise."""
    return work.Stop(state, reason, board_status=board_status, board_reason=board_reason)


def apply_preset(application: Application, hold: work.Hold) -> None:
    """Apply with the board's lock held. Every way out raises work.Stop."""
    application = Application.objects.select_related("board", "version__preset").get(
        pk=application.pk
    )
    _Applying(application, hold).run()
    raise AssertionError("every way out of _Applying.run raises work.Stop")


def apply_holding(application: Application, hold: work.Hold) -> Application | None:
    """Apply from a job that holds the board's lock already (a campaign's run): the same
    steps, record and outcomes as a job of its own. None if it was no longer queued."""
    return work.perform_holding(Application.WORK_KIND, application.pk, hold)


class _Applying:
    """One run of one application. Every way out raises work.Stop."""

    def __init__(self, application: Application, hold: work.Hold):
        self.application = application
        self.board = application.board
        self.version = application.version
        self.hold = hold
        self.governor = self.version.governor
        self.trial = application.mode == Application.Mode.TRIAL
        self.target: ssh.Target | None = None
        self.session: ssh.Session | None = None
        self.boot_id = ""  # the boot the board runs now, as last seen
        # What may have changed on the board: the roll-back and the person read these.
        self.config_touched = False
        self.governor_touched = False
        self.tryboot_written = False
        self.backup_path = ""
        self.checks: dict = {}
        self.after_restore: steps.BoardState | None = None

    # ---- record keeping -----------------------------------------------------------------
    def step(self, words: str) -> None:
        log.info("application %s: %s", self.application.pk, words)
        self.hold.renew()
        self.record(step=words)

    def record(self, **fields) -> None:
        # Only while it runs: a record the sweep ended (its worker seemed gone) keeps its end.
        Application.objects.filter(pk=self.application.pk, state=State.RUNNING).update(**fields)

    # ---- connections --------------------------------------------------------------------
    def connect(self, timeout: float) -> ssh.Session:
        seconds = min(float(settings.SSH_CONNECT_TIMEOUT), timeout)
        session = ssh.Session(self.target, ssh.Timeouts(seconds, seconds, seconds))
        session.connect()
        return session

    def wait_up(self, deadline_s: float, old_boot_id: str | None = None) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        self.session, self.boot_id = steps.wait_until_up(
            self.connect,
            deadline_s=deadline_s,
            poll_s=_seconds("PIFARM_REBOOT_POLL", REBOOT_POLL_S),
            old_boot_id=old_boot_id,
            tick=self.hold.renew,
        )

    def ensure_connected(self) -> None:
        """After a dropped connection (no reboot): the board's sshd may take a moment."""
        if self.session is not None:
            try:
                self.session.run(["true"], steps.COMMAND_TIMEOUT_S)
                return
            except steps.NOT_UP_YET:
                pass
        self.wait_up(_seconds("PIFARM_RECONNECT_DEADLINE", RECONNECT_DEADLINE_S))

    # ---- the run ------------------------------------------------------------------------
    def run(self) -> None:
        if self.board.status in (Board.Status.NEEDS_ATTENTION, Board.Status.MAINTENANCE):
            raise _stop(
                State.FAILED,
                f"Nothing was changed: {self.board.name} is marked "
                f"“{self.board.get_status_display()}”. Clear that first (re-probe it once it is "
                "fixed, or take it out of maintenance).",
                board_status=None,
            )
        try:
            self.prepare()
        except (ssh.SSHError, CredentialError, steps.StepError) as exc:
            # It answered but something misbehaved: nothing changed, the board is still up.
            status = work.status_for(exc) or Board.Status.ONLINE
            reason = "" if status == Board.Status.ONLINE else str(exc)
            raise _stop(State.FAILED, f"Nothing was changed: {exc}", status, reason) from None
        work.mark_board(self.board.pk, Board.Status.BUSY)
        try:
            self.run_trial() if self.trial else self.run_direct()
        finally:
            if self.session is not None:
                self.session.close()

    def prepare(self) -> None:
        """Probe, validate, and note what the board runs now. Changes nothing."""
        self.step(CONNECTING)
        self.target = remote.session(self.board).target
        self.session = self.connect(settings.SSH_CONNECT_TIMEOUT)
        self.step(PROBING)
        result = self.session.run_script(PROBE_SCRIPT, PROBE_TIMEOUT_S, output_cap=PROBE_OUTPUT_CAP)
        try:
            facts = parse_probe_output(result.text)
        except ProbeError as exc:
            raise steps.StepError(str(exc)) from None
        self.original = self.config_bytes(facts)
        self.config_path = facts.config_path
        self.validate(facts)
        self.step(READING)
        self.record(config_path=self.config_path, backup_text=steps.db_backup(self.original))
        self.old_governor_file = steps.read_optional(self.session, steps.GOVERNOR_FILE)
        self.before = steps.read_state(self.session, self.names())
        self.boot_id = self.before.boot_id
        if self.trial and self.before.tryboot is None:
            raise steps.StepError(
                "this board does not report the tryboot flag (/sys/firmware/devicetree/base/"
                "chosen/bootloader/tryboot), so a trial boot cannot be confirmed. Apply the "
                "preset in direct mode instead."
            )

    def config_bytes(self, facts) -> bytes:
        if not facts.config_path:
            problems = [e for e in facts.errors if "config.txt" in e] or ["config.txt not found"]
            raise steps.StepError(problems[0])
        if facts.config_txt_raw_b64:
            data = base64.b64decode(facts.config_txt_raw_b64)
        else:
            data = facts.config_txt.encode("utf-8")
        if facts.config_txt_truncated or len(data) > MAX_CONFIG_BYTES:
            raise steps.StepError(
                f"{facts.config_path} is bigger than a real config.txt can be "
                f"({MAX_CONFIG_BYTES // 1024} KiB), so pifarm leaves it alone"
            )
        return data

    def validate(self, facts) -> None:
        """The preset's own lines, by configtxt's rules, for this exact board."""
        if facts.revision is None:
            raise steps.StepError("the board's model is unknown, so the preset cannot be checked")
        self.family = facts.revision.family
        try:
            findings = presets.findings_on_board(self.version, facts.revision.code)
            self.new = presets.render_config(self.original, self.version)
        except ValueError as exc:
            raise steps.StepError(f"{self.version} cannot be written: {exc}") from None
        errors = [finding.message for finding in findings if finding.severity == "error"]
        if self.governor and self.governor not in PresetVersion.Governor.values:
            # It lands in a root-owned file that init scripts read as shell.
            errors.append(f"{self.governor!r} is not a CPU governor")
        if errors:
            raise steps.StepError(
                f"{self.version} does not suit this board ({self.family}): " + "; ".join(errors)
            )

    def names(self) -> list[str]:
        return [*self.version.options, *steps.CLOCK_OPTIONS]

    # ---- direct: write config.txt, reboot, verify ---------------------------------------
    def run_direct(self) -> None:
        try:
            self.step("writing config.txt")
            self.write_config(self.new)
            if self.governor:
                self.persist_governor()
            self.step("rebooting")
            steps.reboot(self.session, tryboot=False)
        except (ssh.SSHError, steps.StepError) as exc:
            self.undo_before_reboot(exc)
        self.wait_for_new_boot(self.not_back_direct)
        self.step("verifying")
        try:
            checks = self.verify()
        except (ssh.SSHError, steps.StepError) as exc:
            self.roll_back(f"Verifying {self.version} failed: {exc}.")
        if not all(check["ok"] for check in checks.values()):
            self.roll_back(
                f"{self.version} did not pass verification: {steps.failed_words(checks)}."
            )
        raise _stop(
            State.VERIFIED,
            f"Applied {self.version}: config.txt written (the old one is kept on the board at "
            f"{self.backup_path} and in this record), rebooted, and every check passed: "
            f"{steps.passed_words(checks)}.",
        )

    def write_config(self, data: bytes) -> None:
        self.config_touched = True
        self.backup_path = self.session.write_file_atomic(self.config_path, data, sudo=True)
        self.record(backup_path=self.backup_path)
        if self.backup_path:
            self.prune_backups(self.config_path, self.backup_path)

    def prune_backups(self, path: str, just_made: str) -> None:
        """The board keeps its last few backups of path (config.txt, the governor's file);
        each application's record keeps its own copy of config.txt."""
        keep = settings.PIFARM_BOARD_BACKUPS_KEPT
        try:
            removed = steps.prune_backups(self.session, path, keep, just_made)
        except steps.StepError as exc:  # the new file is in place: that is what matters now
            log.warning("application %s: %s", self.application.pk, exc)
            return
        if removed:
            log.info("application %s: removed old backups %s", self.application.pk, removed)

    def persist_governor(self) -> None:
        self.step(f"making the {self.governor} governor persistent")
        self.governor_touched = True
        data = steps.governor_file(self.old_governor_file, self.governor)
        backup = self.session.write_file_atomic(steps.GOVERNOR_FILE, data, sudo=True)
        if backup:
            self.prune_backups(steps.GOVERNOR_FILE, backup)
        self.record(governor_method=steps.GOVERNOR_METHOD)
        steps.set_governor_live(self.session, self.governor)

    def wait_for_new_boot(self, not_back) -> None:
        deadline = reboot_deadline()
        self.step(f"waiting for the board to come back (up to {deadline:.0f} s)")
        try:
            self.wait_up(deadline, old_boot_id=self.boot_id)
        except steps.NotBack as exc:
            if exc.same_boot:
                self.undo_before_reboot(steps.StepError("the board did not reboot"))
            raise not_back(exc.last_error) from None
        except ssh.HostKeyMismatch as exc:
            raise not_back(str(exc)) from None

    def not_back_direct(self, last_error: str) -> work.Stop:
        reason = (
            f"The board did not come back within {reboot_deadline():.0f} s after rebooting "
            f"with {self.version} (last error: {last_error})."
        )
        todo = (
            "A person must power-cycle it. If it still does not come up, put its SD card in "
            f"another computer and copy {self.backup_path} over {self.config_path} on the boot "
            "partition (the old file is also in this application's record)"
        )
        if self.governor_touched:
            todo += f", and {self.governor_undo_words()}"
        return _stop(
            State.NEEDS_ATTENTION,
            f"{reason} {todo}. Then probe the board in pifarm.",
            Board.Status.NEEDS_ATTENTION,
            f"{reason} Old config.txt: {self.backup_path}",
        )

    def governor_undo_words(self) -> str:
        if self.old_governor_file is None:
            return f"delete {steps.GOVERNOR_FILE}"
        old = self.old_governor_file.decode("utf-8", "replace").strip().replace("\n", " / ")
        return f"put back the old {steps.GOVERNOR_FILE} (it held: {old})"

    # ---- trial: tryboot.txt, reboot '0 tryboot', verify, then commit --------------------
    def run_trial(self) -> None:
        trial_file = steps.tryboot_path(self.config_path)
        try:
            self.step("writing tryboot.txt")
            self.tryboot_written = True
            self.session.write_file_atomic(trial_file, self.new, sudo=True)
            self.step("rebooting into a trial boot")
            steps.reboot(self.session, tryboot=True)
        except (ssh.SSHError, steps.StepError) as exc:
            self.undo_before_reboot(exc)
        self.wait_for_new_boot(self.not_back_trial)
        self.step("verifying the trial boot")
        try:
            flag = steps.read_state(self.session).tryboot
            if flag == 1 and self.governor:
                # Live only: the governor file is written when the trial is committed, so a
                # failed trial leaves nothing behind but tryboot.txt.
                steps.set_governor_live(self.session, self.governor)
            checks = self.verify(trial_flag=flag) if flag == 1 else None
        except (ssh.SSHError, steps.StepError) as exc:
            self.roll_back(f"Verifying the trial boot of {self.version} failed: {exc}.")
        if checks is None:
            self.checks = {"trial boot (tryboot flag)": {"wanted": 1, "got": flag, "ok": False}}
            self.record(verification=self.checks)
            self.roll_back(
                f"The board did not start with {self.version}: it reset and booted its old "
                "config.txt by itself (the boot that answered was not the trial boot).",
                reboot=False,
            )
        if not all(check["ok"] for check in checks.values()):
            self.roll_back(
                f"The trial boot of {self.version} did not pass verification: "
                f"{steps.failed_words(checks)}."
            )
        self.commit(trial_file, checks)

    def commit(self, trial_file: str, checks: dict) -> None:
        try:
            self.step("writing the verified settings to config.txt")
            self.write_config(self.new)
            if self.governor:
                self.persist_governor()
            steps.remove(self.session, trial_file)
        except (ssh.SSHError, steps.StepError) as exc:
            self.roll_back(
                f"The trial boot of {self.version} passed, but committing it failed: {exc}."
            )
        raise _stop(
            State.VERIFIED,
            f"Applied {self.version} after a trial boot that passed every check "
            f"({steps.passed_words(checks)}); then config.txt was written (the old one is kept on "
            f"the board at {self.backup_path} and in this record) and tryboot.txt removed."
            + (
                f" The {self.governor} governor runs now and is kept for the next boots by "
                f"{steps.GOVERNOR_METHOD}; that file has not been through a boot yet."
                if self.governor
                else ""
            ),
        )

    def not_back_trial(self, last_error: str) -> work.Stop:
        trial_file = steps.tryboot_path(self.config_path)
        reason = (
            f"The board did not come back within {reboot_deadline():.0f} s from a trial boot "
            f"with {self.version} (last error: {last_error})."
        )
        todo = (
            "config.txt was not changed and the trial flag lasts one boot, so a person must "
            "power-cycle the board: it then starts with its old config.txt. Then delete "
            f"{trial_file} and probe the board in pifarm."
        )
        return _stop(
            State.NEEDS_ATTENTION,
            f"{reason} {todo}",
            Board.Status.NEEDS_ATTENTION,
            f"{reason} Power-cycle it: config.txt is unchanged.",
        )

    # ---- verification -------------------------------------------------------------------
    def verify(self, trial_flag: int | None = None) -> dict:
        state = steps.read_state(self.session, self.names(), load=True)
        checks = {}
        if trial_flag is not None:
            checks["trial boot (tryboot flag)"] = {"wanted": 1, "got": trial_flag, "ok": True}
        checks.update(steps.option_checks(self.version.options, state))
        if self.governor:
            checks["governor"] = steps.check(self.governor, state.governor)
        checks["arm_clock_mhz"] = steps.clock_check(state, self.family)
        checks["throttled"] = steps.throttled_check(state)
        self.checks = checks
        self.record(verification=checks)
        return checks

    # ---- undoing ------------------------------------------------------------------------
    def restore_files(self) -> None:
        """Put back what this run changed, by content; each write is atomic on its own."""
        self.ensure_connected()
        self.hold.renew()  # each command below may take its whole deadline
        if self.config_touched or self.tryboot_written:
            steps.remove_temp_files(self.session, self.config_path)
        if self.config_touched:
            self.hold.renew()
            if steps.file_sha256(self.session, self.config_path) != steps.sha256(self.original):
                self.session.write_file_atomic(self.config_path, self.original, sudo=True)
        if self.governor_touched:
            self.hold.renew()
            steps.remove_temp_files(self.session, steps.GOVERNOR_FILE)
            if self.old_governor_file is None:
                steps.remove(self.session, steps.GOVERNOR_FILE)
            else:
                self.session.write_file_atomic(
                    steps.GOVERNOR_FILE, self.old_governor_file, sudo=True
                )
            if self.before.governor:  # it was also set live, and no reboot may follow
                steps.set_governor_live(self.session, self.before.governor)
        if self.tryboot_written:
            self.hold.renew()
            steps.remove(self.session, steps.tryboot_path(self.config_path))

    def undo_before_reboot(self, error: Exception) -> None:
        """Something failed before the board rebooted: put the files back; nothing booted."""
        self.step("putting the old files back")
        try:
            self.restore_files()
            digest = steps.file_sha256(self.session, self.config_path)
        except (ssh.SSHError, steps.StepError, steps.NotBack) as exc:
            raise _stop(
                State.NEEDS_ATTENTION,
                f"Applying {self.version} stopped before the reboot ({error}), and putting the "
                f"old files back failed too ({exc}). {self.config_path} holds either the old "
                "or the new file, never a mix. A person must check it against the old file in "
                f"this record{self.backup_words()}, then probe the board in pifarm.",
                Board.Status.NEEDS_ATTENTION,
                f"config.txt may hold {self.version}: check it ({error})",
            ) from None
        if digest != steps.sha256(self.original):
            raise self.restore_failed(
                f"Applying {self.version} failed ({error}).",
                "config.txt does not match the old file",
            )
        raise _stop(
            State.FAILED,
            f"Nothing was changed: {error}. The board was not rebooted, and {self.config_path} "
            "was checked: it is the old file, byte for byte.",
        )

    def backup_words(self) -> str:
        return f" and on the board at {self.backup_path}" if self.backup_path else ""

    def roll_back(self, why: str, *, reboot: bool = True) -> None:
        """Verification failed on a board that is up: restore, reboot, check the restore."""
        self.step("putting the old settings back")
        try:
            self.restore_files()
            if reboot:
                self.step("rebooting with the old config.txt")
                leaving = self.boot_id
                steps.reboot(self.session, tryboot=False)
        except (ssh.SSHError, steps.StepError, steps.NotBack) as exc:
            raise self.restore_failed(why, f"putting the old files back failed: {exc}") from None
        if reboot:
            self.step(f"waiting for the board to come back (up to {reboot_deadline():.0f} s)")
            try:
                self.wait_up(reboot_deadline(), old_boot_id=leaving)
            except (steps.NotBack, ssh.HostKeyMismatch) as exc:
                raise self.restore_failed(
                    why, f"the board did not come back after the restore reboot ({exc})"
                ) from None
        self.step("checking that the old settings are back")
        try:
            restored = self.verify_restore()
        except (ssh.SSHError, steps.StepError) as exc:
            raise self.restore_failed(why, f"checking the restore failed: {exc}") from None
        self.record(verification={**self.checks, **restored})
        if not all(check["ok"] for check in restored.values()):
            raise self.restore_failed(why, f"after the restore, {steps.failed_words(restored)}")
        raise _stop(
            State.ROLLED_BACK,
            f"{why} {self.restore_words(reboot)} The old settings are back: "
            f"{steps.passed_words(restored, prefix='after restore: ')}."
            + self.still_throttled_words(),
        )

    def restore_words(self, rebooted: bool) -> str:
        if self.config_touched:
            done = ["the old config.txt was put back (byte-identical, checked)"]
        else:
            done = ["config.txt was never changed (checked)"]
        if self.governor_touched:
            done.append(f"{steps.GOVERNOR_FILE} was restored")
        if self.tryboot_written:
            done.append("tryboot.txt was removed")
        done.append("the board rebooted normally" if rebooted else "the board had restarted")
        return "Roll-back: " + ", ".join(done[:-1]) + " and " + done[-1] + "."

    def verify_restore(self) -> dict:
        self.after_restore = steps.read_state(self.session, self.names())
        digest = steps.file_sha256(self.session, self.config_path)
        return steps.restore_checks(
            self.before,
            self.after_restore,
            self.version.options,
            steps.sha256(self.original),
            digest,
        )

    def still_throttled_words(self) -> str:
        throttled = self.after_restore.throttled if self.after_restore else None
        if not throttled:
            return ""
        return (
            f" The board still reports throttling with its old settings ({throttled:#x}: "
            f"{throttle_summary(throttled)}): check its power supply and cooling."
        )

    def restore_failed(self, why: str, problem: str) -> work.Stop:
        todo = (
            f"A person must check the board: {self.config_path} should be the old file "
            f"(in this record{self.backup_words()})"
        )
        if self.governor_touched:
            todo += f", {self.governor_undo_words()}"
        if self.tryboot_written:
            todo += f", delete {steps.tryboot_path(self.config_path)}"
        return _stop(
            State.NEEDS_ATTENTION,
            f"{why} Rolling back did not finish: {problem}. {todo}; power-cycle it if it does "
            "not answer, then probe it in pifarm.",
            Board.Status.NEEDS_ATTENTION,
            f"Roll-back of {self.version} did not finish: {problem}",
        )


def while_step(application: Application) -> str:
    return f" while {application.step}" if application.step else ""


def interrupted(application: Application, why: str, crash: str) -> int:
    """Its job died: it raised (crash), or its worker or Redis went away (why)."""
    application = Application.objects.select_related("version__preset").get(pk=application.pk)
    if crash:
        during = while_step(application)
        cause = f"The job failed unexpectedly ({crash}{during}); see the worker log."
    else:
        cause = f"It stopped{while_step(application)}: {why}."
    return end_interrupted(application, cause)


def end_interrupted(application: Application, cause: str) -> bool:
    """End an application whose job died (it raised, or its worker or Redis went away).

    Past the steps that change nothing, it may have left the board half-way: the application
    and the board then need attention, and the outcome says what to check. Before them,
    nothing changed. False if it had already ended.
    """
    touched = application.step not in BEFORE_CHANGES
    if touched:
        path = application.config_path or "config.txt"
        also = f" (also at {application.backup_path})" if application.backup_path else ""
        reason = (
            f"{cause} It may have changed the board: check {path} against the old file in this "
            f"record{also}, then probe the board."
        )
    else:
        reason = f"{cause} Nothing was changed on the board."
    state = State.NEEDS_ATTENTION if touched else State.FAILED
    if not work.end(application, state, reason, unfinished=True):
        return False
    if touched:
        why = f"applying {application.version} stopped unexpectedly; check config.txt"
        work.mark_board(application.board_id, Board.Status.NEEDS_ATTENTION, why)
    else:
        Board.objects.filter(pk=application.board_id, status=Board.Status.BUSY).update(
            status=Board.Status.ONLINE, status_reason=""
        )
    return True


def _after(application: Application) -> None:
    """The board page's facts (config.txt, clocks) describe the board as it is now: probed
    once the lock is released, so the probe finds the board free."""
    if application.state in (State.VERIFIED, State.ROLLED_BACK):
        tasks.start(application.board, BoardTask.Kind.PROBE)


def _not_applied(application: Application) -> str:
    return work.busy_reason(
        application, "so nothing was changed. Start the application again later."
    )


work.register(
    work.Kind(
        name=Application.WORK_KIND,
        model=Application,
        body="devices.apply.apply_preset",
        longest_s=job_longest_s,
        lock_step_s=longest_step_s,
        busy_reason=_not_applied,
        interrupted=interrupted,
        untouched="Nothing was changed: ",
        ended=_after,
        claimed=lambda: {"step": WAITING},
    )
)
