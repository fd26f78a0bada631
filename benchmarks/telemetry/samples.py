"""The sampler's output -> samples: rates from consecutive raw readings, nothing trusted.

The text comes from a board and may be anything: every value is matched against its form
(bounded digits, so int() and float() cannot fail or overflow) and a value not in its form is
None; the vcgencmd answers go through devices.vcgencmd's parsers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from devices import vcgencmd

from .scripts import WITH_CHILDREN

_INT = re.compile(r"\d{1,20}")
_FLOAT = re.compile(r"\d{1,20}(?:\.\d{1,20})?")
_SHELL_TIME = re.compile(r"(\d{1,9})m(\d{1,9}(?:\.\d{1,9})?)s")  # `times`: 1m2.345678s
_TRIAL = "trial"  # a proc line's tag: in the measurement's session


@dataclass(frozen=True)
class Sample:
    """One reading. Rates cover the interval since the previous sample; the first sample of a
    run is the baseline (t = 0) and has no rates (None), no procs.

    CPU percentages (cpu_*) are of the whole board (100 % = every core busy); procs and
    sampler_pct are of one core (100 % = one core), like top: a process's ticks against what
    one core counted in /proc/stat over the interval (its total over all fields, per core).
    On a Pi that is the wall time in ticks; on a simulated Pi (pisim) it is what the node's
    CPU quota let one simulated core do, so the process's share is of a simulated core, as
    its busy % is. core_capacity: the CPU seconds one core so counted per second of the
    interval (1 on a Pi, give or take a tick; on a simulated Pi, the share of a host CPU one
    of its cores gets; None when not read): CPU seconds (trial_cpu_s) over it are the
    board's core-seconds. cpu_sys_pct counts all kernel
    time (system, irq, softirq); cpu_busy_pct is 100 - idle - iowait; cores_busy_pct, each
    core's. sampler_pct is the sampler's own cost (it and the vcgencmd it runs), kept out of
    "background" CPU. trial_procs_pct: the part of procs that ran in the measurement's own
    session. trial_cpu_s: the CPU time of the measurement's whole process tree, from the
    sample after it ended (it is only known then).
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
    cores_busy_pct: list[float] | None = None
    trial_procs_pct: float | None = None
    trial_cpu_s: float | None = None
    core_capacity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Compact and JSON-ready: rounded, without the values nobody could read."""
        rounded = {
            key: round(value, 2) if isinstance(value, float) else value
            for key, value in asdict(self).items()
            if value is not None and value != {}
        }
        if self.procs:
            rounded["procs"] = {name: round(pct, 1) for name, pct in self.procs.items()}
        if self.cores_busy_pct:
            rounded["cores_busy_pct"] = [round(pct, 1) for pct in self.cores_busy_pct]
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
    cores: list[tuple[int, ...]] = field(default_factory=list)  # the cpuN lines of /proc/stat
    trial_cpu_s: float | None = None
    # (name, pid) -> (utime + stime, uptime when read; None: at the block's uptime)
    procs: dict[tuple[str, str], tuple[int, float | None]] = field(default_factory=dict)
    in_trial: set[tuple[str, str]] = field(default_factory=set)  # procs of the trial's session

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
    elif key == "core" and words[:1] and words[0].startswith("cpu"):
        numbers = _ints(words[1:9])
        if numbers and len(numbers) >= 4:
            block.cores.append(numbers)
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
    elif key == "proc" and len(words) in (7, 8):
        # name pid uptime [tag] utime stime cutime cstime (no tag: a sampler of before the
        # session tag, as in the logs captured on real boards)
        numbers = _ints(words[-4:] if words[0] in WITH_CHILDREN else words[-4:-2])
        if numbers and _INT.fullmatch(words[1]):
            block.procs[(words[0], words[1])] = (sum(numbers), _float(words[2]))
            if len(words) == 8 and words[3] == _TRIAL:
                block.in_trial.add((words[0], words[1]))
    elif key == "trial_times" and len(words) == 2:
        times = [_SHELL_TIME.fullmatch(word) for word in words]
        if all(times):
            block.trial_cpu_s = sum(int(m.group(1)) * 60 + float(m.group(2)) for m in times)


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


def _core_hz(
    before: tuple[int, ...], after: tuple[int, ...], cpus: int, seconds: float
) -> float | None:
    """Ticks one core counted per second between two /proc/stat cpu lines (all its fields,
    per core), or None when they did not move forward."""
    width = min(len(before), len(after), 8)
    delta = [after[i] - before[i] for i in range(width)]
    if min(delta) < 0 or sum(delta) <= 0:
        return None
    return sum(delta) / cpus / seconds


def _proc_rates(
    before: _Block, after: _Block, core_hz: float, cpus: int
) -> tuple[dict[str, float], float | None]:
    """CPU % per name (100 % = one core: core_hz ticks a second), summed over its PIDs, each
    over its own interval; and the part of it in the measurement's session.

    A PID not in the previous block, or whose ticks went down (a reused PID), started after
    that block, so all its ticks belong to this interval. Capped at every core: a PID missed
    once by a failed read must not count its whole life.
    """
    rates: dict[str, float] = {}
    in_trial = 0.0
    for key, (ticks, read_at) in after.procs.items():
        now = read_at if read_at is not None else after.uptime
        earlier, earlier_at = before.procs.get(key, (None, None))
        if earlier is not None and ticks >= earlier:
            used, since = ticks - earlier, earlier_at if earlier_at is not None else before.uptime
        else:
            used, since = ticks, before.uptime
        seconds = now - since if now > since else after.uptime - before.uptime
        rate = min(100 * used / core_hz / seconds, 100.0 * cpus)
        rates[key[0]] = rates.get(key[0], 0.0) + rate
        if key in after.in_trial:
            in_trial += rate
    return rates, (in_trial if after.in_trial else None)


def _cores_busy(before: _Block, after: _Block) -> list[float] | None:
    """Each core's busy %, when both blocks read every core."""
    if not after.cores or len(before.cores) != len(after.cores):
        return None
    busy = [
        _cpu_rates(a, b)["cpu_busy_pct"] for a, b in zip(before.cores, after.cores, strict=True)
    ]
    return None if None in busy else busy


def _sample(first: _Block, before: _Block | None, block: _Block, clk: int, cpus: int) -> Sample:
    swap_used = None
    if block.swap_kb is not None:
        swap_used = max(block.swap_kb[0] - block.swap_kb[1], 0)
    rates: dict[str, Any] = {}
    if before is not None:
        seconds = block.uptime - before.uptime
        rates = _cpu_rates(before.stat, block.stat)
        core_hz = _core_hz(before.stat, block.stat, cpus, seconds)
        if core_hz is not None:
            rates["core_capacity"] = core_hz / clk
        core_hz = core_hz or clk  # unread: a core counts the wall time, as on a Pi
        rates["procs"], rates["trial_procs_pct"] = _proc_rates(before, block, core_hz, cpus)
        rates["cores_busy_pct"] = _cores_busy(before, block)
        if before.self_ticks is not None and block.self_ticks is not None:
            used = max(block.self_ticks - before.self_ticks, 0)
            rates["sampler_pct"] = 100 * used / core_hz / seconds
    return Sample(
        t=block.uptime - first.uptime,
        arm_mhz=block.arm_mhz(),
        temp_c=block.temp_c(),
        throttled=block.throttled,
        load1=block.load1,
        swap_used_kb=swap_used,
        cpus=cpus,
        trial_cpu_s=block.trial_cpu_s,
        **rates,
    )


def parse_samples(text: str) -> list[Sample]:
    """The sampler's output -> samples, the first the baseline (t = 0, no rates).

    Never raises on what a board printed: a block without its clock (/proc/uptime) or its CPU
    counters, or whose clock does not move forward, is skipped, as is a half-written last one;
    a single unreadable value is None. The measurement's CPU time is a total, not a rate: read
    in a skipped block (the last, taken a moment after the one before), it goes to the last
    sample.
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
        first = first if first is not None else block
        samples.append(_sample(first, before, block, clk, cpus))
        before = block
    trial_cpu_s = next((b.trial_cpu_s for b in reversed(blocks) if b.trial_cpu_s is not None), None)
    if samples and trial_cpu_s is not None and samples[-1].trial_cpu_s is None:
        samples[-1] = replace(samples[-1], trial_cpu_s=trial_cpu_s)
    return samples
