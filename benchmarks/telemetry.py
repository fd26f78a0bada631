"""Telemetry of a trial: a sampler on the board, the quiet-board wait, and trial validity.

The sampler is a POSIX sh script (dash, busybox sh) that prints raw counters about once per
interval; every rate (CPU %, a process's CPU %) is computed here from two consecutive readings,
so the arithmetic is plain Python and testable on captured output. Readings, in the words of
shared/reference/raspberry-pi.yaml: `vcgencmd measure_clock arm`, `measure_temp` and
`get_throttled` where vcgencmd exists, and always the sysfs fallbacks (scaling_cur_freq, which
is only what the kernel asked for, and thermal_zone0). A value that cannot be read is None,
never zero.

No Django, no database: the engine starts the sampler with `sampler_argv()`, reads its output,
and stores `[sample.to_dict() for sample in parse_samples(text)]` with the run.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from devices import vcgencmd

# Shared by the sampler and the quiet check. `names` holds the process names to follow (plain
# words, checked by sampler_argv). `set -f`: the unquoted expansions below split, never glob.
_FUNCTIONS = r"""
set -f
header() {
  clk=$(getconf CLK_TCK 2>/dev/null) || clk=
  case $clk in '' | *[!0-9]*) clk=100 ;; esac
  cpus=0
  while read -r key _; do
    case $key in cpu[0-9]*) cpus=$((cpus + 1)) ;; esac
  done < /proc/stat
  printf 'pifarm-sampler 1\nclk_tck %s\ncpus %s\n' "$clk" "$cpus"
}
# key file: the key, then the file's first line; nothing when the file cannot be read.
line_of() {
  v=
  read -r v 2>/dev/null < "$2" || [ -n "$v" ] || return 0
  printf '%s %s\n' "$1" "$v"
}
# label, then the fields of a /proc/PID/stat line after comm (state first): prints the label
# and utime stime cutime cstime (fields 14-17 of the line).
ticks() {
  [ $# -ge 16 ] || return 0
  label=$1
  shift 12
  printf '%s %s %s %s %s\n' "$label" "$1" "$2" "$3" "$4"
}
readings() {
  if [ -n "$vc" ]; then
    # At most three lines: a vcgencmd that floods cannot fill the log.
    { vcgencmd measure_clock arm; vcgencmd measure_temp; vcgencmd get_throttled; } 2>&1 |
      { n=0; while [ $n -lt 3 ] && IFS= read -r v; do echo "vc $v"; n=$((n + 1)); done; }
  fi
  line_of cur_freq_khz /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq
  line_of thermal_milli_c /sys/class/thermal/thermal_zone0/temp
  swap_total= swap_free=
  while read -r key value _; do
    case $key in SwapTotal:) swap_total=$value ;; SwapFree:) swap_free=$value ;; esac
  done < /proc/meminfo
  echo "swap_kb $swap_total $swap_free"
}
# comm may hold spaces and parentheses: it runs from the first '(' to the last ')'.
procs() {
  [ -n "$names" ] || return 0
  set +f
  set -- /proc/[0-9]*/stat
  set -f
  for f do
    line=
    read -r line 2>/dev/null < "$f" || continue
    case $line in *")"*) ;; *) continue ;; esac
    comm=${line#*[(]}
    comm=${comm%[)]*}
    for name in $names; do
      case $comm in
        "$name" | "$name"/* | "$name"-* | "$name":*)
          # The time of this very read: a loaded board can stall the loop for a while.
          up=
          read -r up _ 2>/dev/null < /proc/uptime
          ticks "proc $name ${line%% *} ${up:--}" ${line##*[)]}
          break ;;
      esac
    done
  done
}
counters() {
  line_of uptime /proc/uptime
  line_of stat /proc/stat
  line_of loadavg /proc/loadavg
  line=
  read -r line < "/proc/$$/stat" && ticks self ${line##*[)]}
  procs
}
vc=
command -v vcgencmd > /dev/null 2>&1 && vc=1
"""

# $1 seconds between samples; the names of the processes to follow come next. A TERM (the
# engine's stop, or the timeout) takes one last sample, so a trial shorter than the interval
# still has a reading after it.
SAMPLER = (
    r"""
interval=$1
shift
names=$*
"""
    + _FUNCTIONS
    + r"""
sample() { echo sample; readings; counters; echo end; }
trap 'sample; exit 0' TERM INT HUP
header
while :; do
  sample
  sleep "$interval"
done
"""
)

# One round of the quiet check: the readings, then the counters over a 1-second window.
QUIET_ROUND = (
    "names=\n"
    + _FUNCTIONS
    + r"""
header
echo sample; readings; counters; echo end
sleep 1
echo sample; counters; echo end
"""
)

QUIET_ROUND_TIMEOUT_S = 20  # a round takes a second and a bit (3 vcgencmd calls, one sleep)
_PROCESS_NAME = re.compile(r"[A-Za-z0-9._+-]{1,15}")  # comm keeps 15 characters
_INT = re.compile(r"\d{1,20}")
_FLOAT = re.compile(r"\d{1,20}(?:\.\d{1,20})?")
_KERNEL_NOW_BITS = 0xF  # get_throttled bits 0-3: "now"; 16-19 are sticky since boot
_ARM_TOLERANCE = 0.98  # measure_clock reads a little off the nominal value, both ways
UNDER_LOAD_CORES = 0.8  # "under load": at least this many cores' worth busy in the interval


def sampler_argv(interval_s: float, process_names: Iterable[str]) -> list[str]:
    """The sampler's argv for endpoint.start(dir, "sampler", argv, timeout)."""
    if not 0.1 <= float(interval_s) <= 60:
        raise ValueError(f"sampler interval {interval_s!r} s is not between 0.1 and 60 s")
    names = list(dict.fromkeys(process_names))
    bad = [name for name in names if not _PROCESS_NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"process names must be 1-15 of A-Z a-z 0-9 . _ + -, not {bad!r:.80}")
    return ["sh", "-c", SAMPLER, "pifarm-sampler", f"{float(interval_s):g}", *names]


@dataclass(frozen=True)
class Sample:
    """One reading. Rates cover the interval since the previous sample; the first sample of a
    run is the baseline (t = 0) and has no rates (None), no procs.

    CPU percentages (cpu_*) are of the whole board (100 % = every core busy); procs and
    sampler_pct are of one core (100 % = one core), like top. cpu_sys_pct counts all kernel
    time (system, irq, softirq); cpu_busy_pct is 100 - idle - iowait. sampler_pct is the
    sampler's own cost (it and the vcgencmd it runs), kept out of "background" CPU.
    """

    t: float
    arm_mhz: int | None = None
    temp_c: float | None = None
    throttled: int | None = None
    load1: float | None = None
    cpu_user_pct: float | None = None
    cpu_sys_pct: float | None = None
    cpu_busy_pct: float | None = None
    swap_used_kb: int | None = None
    procs: dict[str, float] = field(default_factory=dict)
    cpus: int = 1
    sampler_pct: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Compact and JSON-ready: rounded, without the values nobody could read."""
        rounded = {
            key: round(value, 2) if isinstance(value, float) else value
            for key, value in asdict(self).items()
            if value is not None and value != {}
        }
        if self.procs:
            rounded["procs"] = {name: round(pct, 1) for name, pct in self.procs.items()}
        return rounded

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sample:
        return cls(**data)


@dataclass
class _Block:
    """The raw counters of one sampler block ("sample" ... "end")."""

    uptime: float | None = None
    stat: tuple[int, ...] | None = None
    load1: float | None = None
    clock_hz: int | None = None
    vc_temp_c: float | None = None
    throttled: int | None = None
    cur_freq_khz: int | None = None
    thermal_milli_c: int | None = None
    swap_kb: tuple[int, int] | None = None
    self_ticks: int | None = None
    # (name, pid) -> (utime + stime, uptime when read; None: at the block's uptime)
    procs: dict[tuple[str, str], tuple[int, float | None]] = field(default_factory=dict)

    def arm_mhz(self) -> int | None:
        if self.clock_hz is not None:
            return round(self.clock_hz / 1e6)
        return round(self.cur_freq_khz / 1000) if self.cur_freq_khz is not None else None

    def temp_c(self) -> float | None:
        if self.vc_temp_c is not None:
            return self.vc_temp_c
        return self.thermal_milli_c / 1000 if self.thermal_milli_c is not None else None


def _ints(words: Sequence[str]) -> tuple[int, ...] | None:
    if not words or not all(_INT.fullmatch(word) for word in words):
        return None
    return tuple(int(word) for word in words)


def _float(word: str) -> float | None:
    return float(word) if _FLOAT.fullmatch(word) else None


def _read_vc(block: _Block, text: str) -> None:
    """A vcgencmd answer, told apart by its form (an error reply or junk is ignored)."""
    for parser, attribute in (
        (vcgencmd.parse_clock, "clock_hz"),
        (vcgencmd.parse_temp, "vc_temp_c"),
        (vcgencmd.parse_throttled, "throttled"),
    ):
        try:
            setattr(block, attribute, parser(text))
            return
        except vcgencmd.VcgencmdError:
            continue


def _read_line(block: _Block, key: str, words: list[str], rest: str) -> None:
    """One "key values" line of a block; a value not in its form leaves the field None."""
    if key == "vc":
        _read_vc(block, rest)
    elif key == "uptime" and words:
        block.uptime = _float(words[0])
    elif key == "stat" and words[:1] == ["cpu"]:
        numbers = _ints(words[1:9])
        block.stat = numbers if numbers and len(numbers) >= 4 else None
    elif key == "loadavg" and words:
        block.load1 = _float(words[0])
    elif key == "cur_freq_khz":
        block.cur_freq_khz = (_ints(words[:1]) or (None,))[0]
    elif key == "thermal_milli_c":
        block.thermal_milli_c = (_ints(words[:1]) or (None,))[0]
    elif key == "swap_kb":
        block.swap_kb = _ints(words) if len(words) == 2 else None
    elif key == "self":
        numbers = _ints(words)
        block.self_ticks = sum(numbers) if numbers and len(numbers) == 4 else None
    elif key == "proc" and len(words) == 7:
        numbers = _ints(words[3:5])
        if numbers and _INT.fullmatch(words[1]):
            block.procs[(words[0], words[1])] = (sum(numbers), _float(words[2]))


def _blocks(text: str) -> tuple[dict[str, int], list[_Block]]:
    """The header (clk_tck, cpus) and every complete block; an unfinished one is dropped."""
    header: dict[str, int] = {}
    blocks: list[_Block] = []
    block: _Block | None = None
    for line in text.splitlines():
        key, _, rest = line.strip().partition(" ")
        words = rest.split()
        if key == "sample":
            block = _Block()
        elif key == "end":
            if block is not None:
                blocks.append(block)
            block = None
        elif block is not None:
            _read_line(block, key, words, rest.strip())
        elif key in ("clk_tck", "cpus") and len(words) == 1 and _INT.fullmatch(words[0]):
            header[key] = int(words[0])
    return header, blocks


def _cpu_rates(before: tuple[int, ...], after: tuple[int, ...]) -> dict[str, float | None]:
    """/proc/stat cpu: user nice system idle iowait irq softirq steal (missing ones are 0)."""
    width = min(len(before), len(after))
    delta = [after[i] - before[i] for i in range(width)] + [0] * (8 - width)
    total = sum(delta[:8])
    if total <= 0 or min(delta) < 0:
        return {"cpu_user_pct": None, "cpu_sys_pct": None, "cpu_busy_pct": None}
    user, nice, system, idle, iowait, irq, softirq, _steal = delta[:8]
    return {
        "cpu_user_pct": 100 * (user + nice) / total,
        "cpu_sys_pct": 100 * (system + irq + softirq) / total,
        "cpu_busy_pct": 100 * (total - idle - iowait) / total,
    }


def _proc_rates(before: _Block, after: _Block, clk: int, cpus: int) -> dict[str, float]:
    """CPU % per name (100 % = one core), summed over its PIDs, each over its own interval.

    A PID not in the previous block, or whose ticks went down (a reused PID), started after
    that block, so all its ticks belong to this interval. Capped at every core: a PID missed
    once by a failed read must not count its whole life.
    """
    rates: dict[str, float] = {}
    for key, (ticks, read_at) in after.procs.items():
        now = read_at if read_at is not None else after.uptime
        earlier, earlier_at = before.procs.get(key, (None, None))
        if earlier is not None and ticks >= earlier:
            used, since = ticks - earlier, earlier_at if earlier_at is not None else before.uptime
        else:
            used, since = ticks, before.uptime
        seconds = now - since if now > since else after.uptime - before.uptime
        rate = min(100 * used / clk / seconds, 100.0 * cpus)
        rates[key[0]] = rates.get(key[0], 0.0) + rate
    return rates


def _sample(first: _Block, before: _Block | None, block: _Block, clk: int, cpus: int) -> Sample:
    swap_used = None
    if block.swap_kb is not None:
        swap_used = max(block.swap_kb[0] - block.swap_kb[1], 0)
    rates: dict[str, Any] = {}
    if before is not None:
        seconds = block.uptime - before.uptime
        rates = _cpu_rates(before.stat, block.stat)
        rates["procs"] = _proc_rates(before, block, clk, cpus)
        if before.self_ticks is not None and block.self_ticks is not None:
            used = max(block.self_ticks - before.self_ticks, 0)
            rates["sampler_pct"] = 100 * used / clk / seconds
    return Sample(
        t=round(block.uptime - first.uptime, 2),  # /proc/uptime has hundredths
        arm_mhz=block.arm_mhz(),
        temp_c=block.temp_c(),
        throttled=block.throttled,
        load1=block.load1,
        swap_used_kb=swap_used,
        cpus=cpus,
        **rates,
    )


def parse_samples(text: str) -> list[Sample]:
    """The sampler's output -> samples, the first the baseline (t = 0, no rates).

    Never raises on what a board printed: a block without its clock (/proc/uptime) or its CPU
    counters, or whose clock does not move forward, is skipped, as is a half-written last one;
    a single unreadable value is None.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    header, blocks = _blocks(str(text))
    clk = header.get("clk_tck") or 100
    cpus = header.get("cpus") or 1
    samples: list[Sample] = []
    first = before = None
    for block in blocks:
        if block.uptime is None or block.stat is None:
            continue
        if before is not None and not block.uptime > before.uptime:
            continue
        first = first or block
        samples.append(_sample(first, before, block, clk, cpus))
        before = block
    return samples


def _rated(samples: Sequence[Sample]) -> list[Sample]:
    return [sample for sample in samples if sample.cpu_busy_pct is not None]


def _under_load(samples: Sequence[Sample]) -> list[Sample]:
    """Samples whose Arm clock was read while the board was under load.

    Under load: at least UNDER_LOAD_CORES cores' worth of CPU busy, so that on a 4-core board a
    single-threaded benchmark (25 %) counts and an idle wait does not. The clock is read at one
    instant, between the interval a sample's rates cover and the next one, so both must be
    under load: a reading just after the benchmark ended (the governor already back at
    arm_freq_min) is not held against the preset. The last sample has no next interval.
    """

    def busy(sample: Sample) -> bool:
        return sample.cpu_busy_pct is not None and (
            sample.cpu_busy_pct * sample.cpus / 100 >= UNDER_LOAD_CORES
        )

    return [
        sample
        for sample, following in zip(samples, samples[1:], strict=False)
        if sample.arm_mhz is not None and busy(sample) and busy(following)
    ]


def _background_pct(sample: Sample, involved: set[str]) -> float:
    """Board CPU % (all cores = 100) not used by the involved processes nor the sampler."""
    own = sum(pct for name, pct in sample.procs.items() if name in involved)
    own += sample.sampler_pct or 0.0
    return max(sample.cpu_busy_pct - own / sample.cpus, 0.0)


def _throttle_reason(samples: Sequence[Sample]) -> str | None:
    """Bits 0-3 at any time, or sticky bits 16-19 that were not set at the baseline."""
    readings = [sample.throttled for sample in samples if sample.throttled is not None]
    if not readings:
        return None
    seen = 0
    for value in readings:
        seen |= value
    appeared = (seen & _KERNEL_NOW_BITS) | (seen & ~readings[0] & ~_KERNEL_NOW_BITS)
    if not appeared:
        return None
    return (
        f"throttled bits appeared during the trial: {appeared:#x} "
        f"({vcgencmd.throttle_summary(appeared)})"
    )


def _arm_reason(samples: Sequence[Sample], expected_arm_mhz: int | None) -> str | None:
    loaded = [sample.arm_mhz for sample in _under_load(samples)]
    if not expected_arm_mhz or not loaded:
        return None
    median = statistics.median(loaded)
    if median >= expected_arm_mhz * _ARM_TOLERANCE:
        return None
    preset = f"below the preset's arm_freq {expected_arm_mhz} MHz"
    if min(loaded) == max(loaded):
        return f"the Arm clock under load stayed at {loaded[0]} MHz, {preset}"
    return (
        f"the Arm clock under load was at a median of {median:.0f} MHz "
        f"({min(loaded)}-{max(loaded)} MHz over {len(loaded)} samples), {preset}"
    )


def _background_reason(samples: Sequence[Sample], involved: set[str], limit: float) -> str | None:
    rated = _rated(samples)
    if not rated:
        return None
    mean = statistics.fmean(_background_pct(sample, involved) for sample in rated)
    if mean <= limit:
        return None
    return (
        f"background CPU averaged {mean:.0f} % of the board (not the benchmark's processes; "
        f"the limit is {limit:g} %)"
    )


def _swap_reason(samples: Sequence[Sample], growth_kb: int) -> str | None:
    used = [sample.swap_used_kb for sample in samples if sample.swap_used_kb is not None]
    if len(used) < 2 or max(used) - used[0] <= growth_kb:
        return None
    return f"swap in use grew by {_megabytes(max(used) - used[0])}"


def _megabytes(kilobytes: int) -> str:
    return f"{kilobytes / 1024:.0f} MB" if kilobytes >= 10240 else f"{kilobytes / 1024:.1f} MB"


def suspect_reasons(
    samples: Sequence[Sample],
    *,
    expected_arm_mhz: int | None,
    involved: set[str],
    background_cpu_max_pct: float = 25.0,
    swap_growth_kb: int = 1024,
) -> list[str]:
    """Why a trial's figure may not be the board's own, one sentence each; [] if none.

    - throttling: a "now" bit (0-3) in any sample, or a sticky bit (16-19) that was clear in
      the baseline sample (raspberry-pi.yaml: get_throttled.note);
    - the Arm clock: the median measure_clock of the samples under load (see _under_load)
      more than 2 % below expected_arm_mhz (the applied preset's arm_freq; on a Pi 5 the
      caller caps it at 3000, measure_clock's limit);
    - background CPU: the mean, over the intervals, of the board's busy CPU less what the
      involved processes and the sampler used, above background_cpu_max_pct (of all cores);
    - swap: the most swap in use less the baseline's, above swap_growth_kb.
    A value never read (no vcgencmd, no swap line) gives no reason either way.
    """
    if not samples:
        return ["telemetry is missing: the sampler recorded nothing during the trial"]
    reasons = (
        _throttle_reason(samples),
        _arm_reason(samples, expected_arm_mhz),
        _background_reason(samples, involved, background_cpu_max_pct),
        _swap_reason(samples, swap_growth_kb),
    )
    return [reason for reason in reasons if reason]


def summarize(samples: Sequence[Sample]) -> dict[str, Any]:
    """The figures of a run's telemetry for the results table (None where nothing was read)."""
    loaded = [sample.arm_mhz for sample in _under_load(samples)]
    temps = [sample.temp_c for sample in samples if sample.temp_c is not None]
    throttles = [sample.throttled for sample in samples if sample.throttled is not None]
    rated = _rated(samples)
    per_name: dict[str, list[float]] = {}
    for sample in rated:
        for name, pct in sample.procs.items():
            per_name.setdefault(name, []).append(pct)
    seen = None
    for value in throttles:
        seen = (seen or 0) | value
    return {
        "n": len(samples),
        "duration_s": samples[-1].t if samples else 0.0,
        "arm_mhz_under_load": {
            "min": min(loaded),
            "median": statistics.median(loaded),
            "max": max(loaded),
        }
        if loaded
        else None,
        "temp_max_c": max(temps) if temps else None,
        "throttled_seen": seen,
        "cpu_busy_mean_pct": statistics.fmean(s.cpu_busy_pct for s in rated) if rated else None,
        # A process absent from an interval used no CPU in it.
        "procs_mean_pct": {
            name: math.fsum(values) / len(rated) for name, values in sorted(per_name.items())
        },
    }


@dataclass(frozen=True)
class Quiet:
    """The outcome of wait_until_quiet: the last round's figures and a sentence about it."""

    reached: bool
    waited_s: float
    load1: float | None
    cpu_busy_pct: float | None
    temp_c: float | None
    words: str


def _quiet_round(endpoint) -> tuple[float | None, float | None, float | None]:
    """(load1, CPU busy % over one second, temperature) of the board, None where unreadable."""
    result = endpoint.run(["sh", "-c", QUIET_ROUND, "pifarm-quiet"], QUIET_ROUND_TIMEOUT_S)
    samples = parse_samples(result.text)
    temps = [sample.temp_c for sample in samples if sample.temp_c is not None]
    last = samples[-1] if samples else None
    return (
        last.load1 if last else None,
        last.cpu_busy_pct if last else None,
        temps[0] if temps else None,
    )


def _loud(load1, busy, temp, load_below, cpu_below_pct, cool_below_c) -> list[str]:
    """What keeps the board from being quiet, in words; an unknown temperature does not."""
    problems = []
    if load1 is None or busy is None:
        problems.append("its load and CPU could not be read")
    else:
        if load1 >= load_below:
            problems.append(f"load {load1:.2f} (needs below {load_below:g})")
        if busy >= cpu_below_pct:
            problems.append(f"CPU {busy:.0f} % (needs below {cpu_below_pct:g} %)")
    if cool_below_c is not None and temp is not None and temp >= cool_below_c:
        problems.append(f"{temp:.1f} °C (needs below {cool_below_c:g} °C)")
    return problems


def wait_until_quiet(
    endpoint,
    *,
    load_below: float,
    cpu_below_pct: float,
    cool_below_c: float | None,
    deadline_s: float,
) -> Quiet:
    """Check the board in rounds of about a second until it is quiet or deadline_s has passed.

    Quiet: 1-minute load below load_below, CPU busy (100 - idle - iowait, of all cores) over
    the round's second below cpu_below_pct, and, if cool_below_c is given and the board has a
    temperature, below that. No round starts after the deadline, so the wait may overrun it
    by one round. SSH errors of the endpoint propagate.
    """
    started = time.monotonic()
    while True:
        load1, busy, temp = _quiet_round(endpoint)
        waited = time.monotonic() - started
        problems = _loud(load1, busy, temp, load_below, cpu_below_pct, cool_below_c)
        if not problems:
            state = f"load {load1:.2f}, CPU {busy:.0f} %"
            state += f", {temp:.1f} °C" if temp is not None else ", temperature unknown"
            words = f"quiet after {waited:.1f} s ({state})"
            return Quiet(True, waited, load1, busy, temp, words)
        if waited >= deadline_s:
            words = f"not quiet within {deadline_s:g} s: {', '.join(problems)}"
            return Quiet(False, waited, load1, busy, temp, words)
