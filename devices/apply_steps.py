"""The board side of applying a preset: what runs on the board, and what it printed.

No models here: functions take an open ssh.Session and plain values, so devices.apply can
keep the record keeping and this module the remote commands. Facts come from
shared/reference/raspberry-pi.yaml (cited as "yaml: <key>").
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from devices import ssh
from devices.vcgencmd import (
    VcgencmdError,
    parse_clock,
    parse_get_config,
    parse_throttled,
    throttle_summary,
)

COMMAND_TIMEOUT_S = 30
# yaml: governor.persistence (the first method: RCINIT reads RCDEF at boot).
GOVERNOR_FILE = "/etc/default/cpu_governor"
GOVERNOR_METHOD = "CPU_DEFAULT_GOVERNOR in /etc/default/cpu_governor (raspi-config's init script)"
TRYBOOT_NAME = "tryboot.txt"
# Options the Arm clock check needs besides the preset's own (yaml: overclocking.general).
CLOCK_OPTIONS = ("arm_freq", "arm_freq_min", "force_turbo")
PI5_CLOCK_CAP_MHZ = 3000  # yaml: arm_freq.reported_limits.pi5
CLOCK_TOLERANCE = 0.03  # measure_clock reads a little off the nominal value

# Not up yet: refused, reset, a banner that never came or a hang-up right after it, a session
# cut during boot. A changed host key is not in this list: that is an answer, and a worrying one.
NOT_UP_YET = (
    ssh.ConnectFailed,
    ssh.ConnectionLost,
    ssh.CommandKilled,
    ssh.CommandTimeout,
    ssh.AuthFailed,
)

# $1 = "load" to measure the Arm clock under a short load; then the option names.
# - the tryboot flag is 4 bytes big-endian, 1 during a trial boot (yaml: tryboot.detect);
#   /sys/firmware/devicetree/base is where /proc/device-tree points on a Pi;
# - the load is a shell busy loop for at most 3 s; the clock is read after 1 s of it, so the
#   governor has had time to raise it (yaml: vcgencmd.measure_clock.meaning);
# - every vcgencmd call has its own deadline and prints one line, or what it said instead.
STATE_SCRIPT = r"""
PATH=${PATH:-/usr/bin:/bin}:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin:/opt/vc/bin
LC_ALL=C
export PATH LC_ALL
load=$1
shift
vc() { timeout 5 vcgencmd "$@" </dev/null 2>&1 | head -n 1; }
one() { head -c 200 -- "$1" 2>/dev/null | tr -d '\n'; }
echo "boot_id=$(one /proc/sys/kernel/random/boot_id)"
for f in /sys/firmware/devicetree/base/chosen/bootloader/tryboot \
         /proc/device-tree/chosen/bootloader/tryboot; do
  if [ -r "$f" ]; then echo "tryboot=$(od -An -v -tx1 -- "$f" | tr -d ' \n')"; break; fi
done
echo "governor=$(one /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"
echo "throttled=$(vc get_throttled)"
for name in "$@"; do echo "config=$(vc get_config "$name")"; done
if [ "$load" = load ]; then
  timeout 3 sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
  sleep 1
  echo "clock=$(vc measure_clock arm)"
  kill "$!" 2>/dev/null
  wait
fi
echo end=1
"""

_SET_GOVERNOR = r"""
ok=0
for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
  if [ -w "$f" ] && printf '%s\n' "$1" > "$f"; then ok=1; fi
done
[ "$ok" = 1 ]
"""

_READ_OPTIONAL = r"""
if [ -e "$1" ]; then printf 'present\n'; exec cat -- "$1"; fi
printf 'absent\n'
"""


# $1 directory, $2 file name, $3 how many to keep, $4 the backup just made (kept whatever its
# stamp says: the worker that named it may have a clock behind another's). Only pifarm's own
# backups of that file match (ssh.BACKUP_GLOB); directory and name are quoted, so only the
# glob expands.
_PRUNE_BACKUPS = r"""
set -eu
LC_ALL=C
export LC_ALL
keep=$3
just_made=$4
set -- "$1/$2"@GLOB@
[ -e "$1" ] || exit 0
left=$#
for f in "$@"; do
  [ "$left" -gt "$keep" ] || break
  [ "$f" != "$just_made" ] || continue
  rm -f -- "$f"
  printf '%s\n' "$f"
  left=$((left - 1))
done
""".replace("@GLOB@", ssh.BACKUP_GLOB)


class StepError(Exception):
    """A board step that answered, but not as it should. The message is for the user."""


@dataclass
class BoardState:
    """What the board runs now, as STATE_SCRIPT found it."""

    boot_id: str = ""
    tryboot: int | None = None  # None: the board does not report the flag
    governor: str = ""
    throttled: int | None = None
    throttled_text: str = ""  # what get_throttled printed, for a reply that did not parse
    config: dict[str, str | None] = field(default_factory=dict)  # None: could not be read
    config_text: dict[str, str] = field(default_factory=dict)
    arm_clock_hz: int | None = None
    clock_text: str = ""


def read_state(session: ssh.Session, names=(), *, load: bool = False) -> BoardState:
    """Boot id, tryboot flag, governor, throttled bits, get_config of names, clock under load."""
    names = list(dict.fromkeys(names))
    result = session.run(
        ["sh", "-c", STATE_SCRIPT, "pifarm-state", "load" if load else "idle", *names],
        COMMAND_TIMEOUT_S,
    )
    if not result.ok or "end=1" not in result.text.splitlines():
        raise StepError(f"reading the board's state failed: {result.error_text() or 'no output'}")
    return parse_state(result.text, names)


def parse_state(text: str, names: list[str]) -> BoardState:
    state = BoardState()
    configs = []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "boot_id":
            state.boot_id = value.strip()
        elif key == "tryboot" and re.fullmatch(r"[0-9a-f]{1,16}", value.strip()):
            state.tryboot = int(value.strip(), 16)
        elif key == "governor":
            state.governor = value.strip()
        elif key == "throttled":
            state.throttled_text = value.strip()
            state.throttled = _or_none(parse_throttled, value)
        elif key == "config":
            configs.append(value)
        elif key == "clock":
            state.clock_text = value.strip()
            state.arm_clock_hz = _or_none(parse_clock, value)
    for name, line in zip(names, configs, strict=False):
        state.config_text[name] = line.strip()
        state.config[name] = _config_value(name, line)
    return state


def _or_none(parser, text: str):
    try:
        return parser(text)
    except VcgencmdError:
        return None


def _config_value(name: str, line: str) -> str | None:
    try:
        values = parse_get_config(line)
    except VcgencmdError:
        return None
    return values.get(name, next(iter(values.values())))


def firmware_int(text: str | None) -> int | None:
    """An integer as the firmware reads it: decimal or 0x hex (yaml: config_txt_syntax.lines)."""
    match = re.fullmatch(r"\s*(-?)(0x[0-9a-fA-F]+|\d{1,18})\s*", text or "")
    if match is None:
        return None
    digits = match.group(2)
    value = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
    return -value if match.group(1) else value


def same_value(wanted: str, got: str | None) -> bool:
    if got is None:
        return False
    wanted_int, got_int = firmware_int(wanted), firmware_int(got)
    if wanted_int is not None and got_int is not None:
        return wanted_int == got_int
    return wanted.strip() == got.strip()


def expected_arm_mhz(state: BoardState, family: str | None) -> int | None:
    """The Arm clock a busy board should show with what it booted and its live governor.

    yaml: overclocking.general: busy cores run at arm_freq (the governor permitting: FW956),
    force_turbo=1 pins it; powersave keeps the minimum.
    """
    top = firmware_int(state.config.get("arm_freq"))
    low = firmware_int(state.config.get("arm_freq_min"))
    if top is None:
        return None
    wanted = top
    if not firmware_int(state.config.get("force_turbo")) and state.governor in {
        "powersave",
        "userspace",
    }:
        wanted = low if low is not None else top
    if family == "pi5":
        wanted = min(wanted, PI5_CLOCK_CAP_MHZ)
    return wanted


def clock_ok(wanted_mhz: int | None, got_hz: int | None) -> bool:
    if wanted_mhz is None or got_hz is None:
        return False
    return abs(got_hz / 1e6 - wanted_mhz) <= max(wanted_mhz * CLOCK_TOLERANCE, 5)


# ---- checks: {"wanted": ..., "got": ..., "ok": ...} per thing checked ----------------------
def check(wanted, got, ok: bool | None = None, **extra) -> dict:
    return {"wanted": wanted, "got": got, "ok": wanted == got if ok is None else ok, **extra}


def option_checks(options: dict[str, str], state: BoardState) -> dict:
    """Each managed option against what `vcgencmd get_config` says the firmware took."""
    checks = {}
    for name, wanted in options.items():
        got = state.config.get(name)
        shown = got if got is not None else state.config_text.get(name) or "no answer"
        checks[name] = check(wanted, shown, same_value(wanted, got))
    return checks


def clock_check(state: BoardState, family: str | None) -> dict:
    wanted, got_hz = expected_arm_mhz(state, family), state.arm_clock_hz
    shown = round(got_hz / 1e6) if got_hz is not None else state.clock_text or "no answer"
    note = f"measured under load with the {state.governor or 'unknown'} governor"
    return check(wanted, shown, clock_ok(wanted, got_hz), note=note)


def throttled_check(state: BoardState) -> dict:
    """yaml: vcgencmd.get_throttled.bits: any bit, now or since boot, fails the check."""
    if state.throttled is None:
        return check("0x0", state.throttled_text or "no answer", False)
    return check("0x0", f"{state.throttled:#x}", note=throttle_summary(state.throttled))


def restore_checks(
    before: BoardState, after: BoardState, options, wanted_sha: str, got_sha: str | None
) -> dict:
    """After a roll-back: the old file byte for byte, and the old effective values."""
    checks = {
        "after restore: config.txt sha256": check(
            wanted_sha[:16], (got_sha or "missing")[:16], got_sha == wanted_sha
        )
    }
    for name in options:
        was, now = before.config.get(name), after.config.get(name)
        ok = was is not None and same_value(was, now)
        checks[f"after restore: {name}"] = check(was, now, ok)
    checks["after restore: governor"] = check(before.governor, after.governor)
    return checks


def failed_words(checks: dict) -> str:
    words = []
    for name, item in checks.items():
        if not item["ok"]:
            note = f" ({item['note']})" if item.get("note") else ""
            words.append(f"{name} wanted {item['wanted']}, found {item['got']}{note}")
    return "; ".join(words)


def passed_words(checks: dict, prefix: str = "") -> str:
    return ", ".join(f"{name.removeprefix(prefix)} {item['got']}" for name, item in checks.items())


def db_backup(data: bytes) -> str:
    """config.txt as text for the record; its exact bytes in base64 when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        encoded = base64.encodebytes(data).decode("ascii")
        return f"# pifarm: config.txt was not UTF-8; its exact bytes in base64:\n{encoded}"


# ---- files -------------------------------------------------------------------------------
def governor_file(old: bytes | None, governor: str) -> bytes:
    """/etc/default/cpu_governor with CPU_DEFAULT_GOVERNOR set; other lines are kept."""
    lines = (old or b"").decode("utf-8", errors="replace").splitlines()
    kept = [line for line in lines if not line.strip().startswith("CPU_DEFAULT_GOVERNOR=")]
    return "\n".join([*kept, f"CPU_DEFAULT_GOVERNOR={governor}"]).encode() + b"\n"


def tryboot_path(config_path: str) -> str:
    return posixpath.join(posixpath.dirname(config_path), TRYBOOT_NAME)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_optional(session: ssh.Session, path: str) -> bytes | None:
    """A file's bytes, or None when it does not exist."""
    result = session.run(["sh", "-c", _READ_OPTIONAL, "pifarm-read", path], COMMAND_TIMEOUT_S)
    if not result.ok:
        raise StepError(f"reading {path} failed: {result.error_text() or result.exit_status}")
    head, _, body = result.stdout.partition(b"\n")
    return body if head == b"present" else None


def file_sha256(session: ssh.Session, path: str) -> str | None:
    """sha256 of a file on the board; None when it does not exist."""
    result = session.run(
        ["sh", "-c", '[ -e "$1" ] || exit 0; sha256sum < "$1"', "pifarm-sum", path],
        COMMAND_TIMEOUT_S,
        sudo=True,
    )
    if not result.ok:
        raise StepError(f"checking {path} failed: {result.error_text() or result.exit_status}")
    digest = result.text.split()
    return digest[0] if digest else None


def prune_backups(session: ssh.Session, path: str, keep: int, just_made: str) -> list[str]:
    """Remove the oldest of pifarm's backups of path until `keep` are left; returns what went."""
    directory, name = posixpath.split(path)
    result = session.run(
        ["sh", "-c", _PRUNE_BACKUPS, "pifarm-prune", directory, name, str(keep), just_made],
        COMMAND_TIMEOUT_S,
        sudo=True,
    )
    if not result.ok:
        raise StepError(
            f"removing old backups of {path} failed: {result.error_text() or result.exit_status}"
        )
    return result.text.splitlines()


def remove(session: ssh.Session, path: str) -> None:
    result = session.run(["rm", "-f", "--", path], COMMAND_TIMEOUT_S, sudo=True)
    if not result.ok:
        raise StepError(f"removing {path} failed: {result.error_text() or result.exit_status}")


def remove_temp_files(session: ssh.Session, path: str) -> None:
    """Temp files an atomic write left when its session was killed (never the file itself)."""
    directory = posixpath.dirname(path)
    # find takes no "--" before its starting points (GNU find's manual: it "does not really
    # work"), so one starting with "-" would be an expression: "-delete" deletes the working
    # directory, as root. Board paths are checked by the probe; this is the last line.
    if not directory.startswith("/"):
        raise StepError(f"pifarm will not clean up next to {path!r}: it is not an absolute path")
    session.run(
        ["find", directory, "-maxdepth", "1", "-name", ".pifarm-tmp.*", "-type", "f", "-delete"],
        COMMAND_TIMEOUT_S,
        sudo=True,
    )


def set_governor_live(session: ssh.Session, governor: str) -> None:
    """yaml: governor.sysfs; lasts until the next boot."""
    result = session.run(
        ["sh", "-c", _SET_GOVERNOR, "pifarm-governor", governor], COMMAND_TIMEOUT_S, sudo=True
    )
    if not result.ok:
        raise StepError(f"the board refused the {governor} governor: {result.error_text()}")


def reboot(session: ssh.Session, *, tryboot: bool) -> None:
    """Ask for a reboot; the connection dropping under us is the reboot happening.

    yaml: tryboot.trigger: `reboot '0 tryboot'` (partition and flag in one argument). The
    command goes by name, not path, so that the PATH of sudo decides (as in a shell).
    """
    argv = ["reboot", "0 tryboot"] if tryboot else ["reboot"]
    try:
        result = session.run(argv, COMMAND_TIMEOUT_S, sudo=True)
    except (ssh.ConnectionLost, ssh.CommandKilled, ssh.CommandTimeout):
        return
    if not result.ok:
        raise StepError(f"the board refused to reboot: {result.error_text() or result.exit_status}")


class NotBack(Exception):
    def __init__(self, last_error: str, same_boot: bool):
        super().__init__(last_error)
        self.last_error = last_error
        self.same_boot = same_boot  # it answered, but had not rebooted


def wait_until_up(
    connect: Callable[[float], ssh.Session],
    *,
    deadline_s: float,
    poll_s: float,
    old_boot_id: str | None = None,
    tick: Callable[[], None] = lambda: None,
) -> tuple[ssh.Session, str]:
    """(open session, boot id) once the board answers with a boot id other than old_boot_id.

    connect(timeout) opens a session with that connect deadline. Raises NotBack at the
    deadline, and ssh.HostKeyMismatch at once.
    """
    deadline = time.monotonic() + deadline_s
    last_error, same_boot = "no answer yet", False
    while True:
        tick()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NotBack(last_error, same_boot)
        session = None
        try:
            session = connect(max(1.0, remaining))
            boot_id = _boot_id(session)
            if old_boot_id is None or boot_id != old_boot_id:
                return session, boot_id
            same_boot, last_error = True, "it still runs the boot from before the reboot"
        except NOT_UP_YET as exc:
            last_error, same_boot = str(exc), False
        except StepError as exc:
            last_error = str(exc)
        if session is not None:
            session.close()
        time.sleep(max(0.0, min(poll_s, deadline - time.monotonic())))


def _boot_id(session: ssh.Session) -> str:
    result = session.run(["cat", "--", "/proc/sys/kernel/random/boot_id"], COMMAND_TIMEOUT_S)
    boot_id = result.text.strip()
    if not result.ok or not boot_id:
        raise StepError("the board did not report its boot id")
    return boot_id
