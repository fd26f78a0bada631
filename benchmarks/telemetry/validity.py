"""Whether a trial's figure is the board's own: the reasons it is suspect, and a summary."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from devices import vcgencmd

from .samples import Sample

_KERNEL_NOW_BITS = 0xF  # get_throttled bits 0-3: "now"; 16-19 are sticky since boot
_ARM_TOLERANCE = 0.98  # measure_clock reads a little off the nominal value, both ways
UNDER_LOAD_CORES = 0.8  # "under load": at least this many cores' worth busy in the interval
# Background CPU is judged over at least this long: over a shorter trial the round trips that
# start and stop it, and the counters' own steps (a tick; a simulated board's 50 ms), are most
# of what the window holds.
BACKGROUND_WINDOW_S = 1.0


def _rated(samples: Sequence[Sample]) -> list[Sample]:
    return [sample for sample in samples if sample.cpu_busy_pct is not None]


def _time_mean(samples: Sequence[Sample], value: Callable[[Sample], float]) -> float | None:
    """The mean of value over the intervals, each weighted by its length (the last, cut short
    by the sampler's stop, weighs less)."""
    pairs = [
        (value(later), later.t - earlier.t)
        for earlier, later in zip(samples, samples[1:], strict=False)
        if later.cpu_busy_pct is not None
    ]
    total = math.fsum(seconds for _, seconds in pairs)
    if total <= 0:
        return None
    return math.fsum(number * seconds for number, seconds in pairs) / total


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


def trial_cpu_s(samples: Sequence[Sample]) -> float | None:
    """The CPU time of the measurement's whole process tree, when the sampler read it."""
    return next((s.trial_cpu_s for s in reversed(samples) if s.trial_cpu_s is not None), None)


def _background_mean(samples: Sequence[Sample], involved: set[str]) -> float | None:
    """The mean background CPU % of the board over the samples.

    With the measurement's tree CPU time (trial_cpu_s): the board's busy time less that, less
    the involved processes outside the measurement's session and the sampler, over the whole
    trial, all in CPU seconds: busy % and procs' % are of what the board's cores could do
    (core_capacity CPU seconds a second each: on a simulated Pi, its quota's), trial_cpu_s is
    CPU seconds as its processes' ticks count them. All of the measurement's work counts as
    its own, whatever its processes are named: the compiled program, the shells it runs
    through, the helpers it starts, a 32-bit userland's. Without it (an older sampler),
    interval by interval, by the names.
    """
    tree = trial_cpu_s(samples)
    if tree is None:
        return _time_mean(samples, lambda sample: _background_pct(sample, involved))
    busy = other = capacity = 0.0
    for earlier, later in zip(samples, samples[1:], strict=False):
        if later.cpu_busy_pct is None:
            continue
        # One core's CPU seconds in the interval (a sample without its capacity: a Pi's).
        core_s = (later.t - earlier.t) * (later.core_capacity or 1.0)
        outside = sum(pct for name, pct in later.procs.items() if name in involved)
        outside -= later.trial_procs_pct or 0.0
        busy += later.cpu_busy_pct / 100 * later.cpus * core_s
        other += (max(outside, 0.0) + (later.sampler_pct or 0.0)) / 100 * core_s
        capacity += later.cpus * core_s
    if capacity <= 0:
        return None
    return max(busy - tree - other, 0.0) / capacity * 100


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
    pairs = zip(samples, samples[1:], strict=False)
    rated_s = sum(later.t - earlier.t for earlier, later in pairs if later.cpu_busy_pct is not None)
    if rated_s < BACKGROUND_WINDOW_S:
        return None
    mean = _background_mean(samples, involved)
    if mean is None or mean <= limit:
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
      measurement's process tree, the involved processes and the sampler used, above
      background_cpu_max_pct (of all cores); not judged over less than BACKGROUND_WINDOW_S;
    - swap: the most swap in use less the baseline's, above swap_growth_kb.
    A value never read (no vcgencmd, no swap line) gives no reason either way; nor do CPU
    counters that did not move over less than BACKGROUND_WINDOW_S.
    """
    if not samples:
        return ["telemetry is missing: the sampler recorded nothing during the trial"]
    if len(samples) == 1:
        return [
            "telemetry is missing: the sampler recorded no interval of the trial, only its "
            "first reading"
        ]
    span_s = samples[-1].t - samples[0].t
    # No CPU figure over a trial shorter than BACKGROUND_WINDOW_S costs nothing: background CPU
    # is not judged over so short a trial anyway (a simulated board's counters move in 50 ms
    # steps, and a 0.2 s custom command may fall between them), and the other readings are.
    if not _rated(samples) and span_s >= BACKGROUND_WINDOW_S:
        return [
            f"the board's CPU time did not advance (or went back) over the trial's "
            f"{span_s:.1f} s, so background CPU could not be judged"
        ]
    reasons = (
        _throttle_reason(samples),
        _arm_reason(samples, expected_arm_mhz),
        _background_reason(samples, involved, background_cpu_max_pct),
        _swap_reason(samples, swap_growth_kb),
    )
    return [reason for reason in reasons if reason]


def _cores_mean(samples: Sequence[Sample]) -> list[float] | None:
    """Each core's busy %, over the intervals that read every core (longer ones weigh more)."""
    pairs = [
        (later.cores_busy_pct, later.t - earlier.t)
        for earlier, later in zip(samples, samples[1:], strict=False)
        if later.cores_busy_pct
    ]
    total = math.fsum(seconds for _, seconds in pairs)
    if total <= 0 or len({len(cores) for cores, _ in pairs}) != 1:
        return None
    return [
        math.fsum(cores[core] * seconds for cores, seconds in pairs) / total
        for core in range(len(pairs[0][0]))
    ]


def summarize(samples: Sequence[Sample]) -> dict[str, Any]:
    """The figures of a run's telemetry for the results table (None where nothing was read)."""
    loaded = [sample.arm_mhz for sample in _under_load(samples)]
    temps = [sample.temp_c for sample in samples if sample.temp_c is not None]
    throttles = [sample.throttled for sample in samples if sample.throttled is not None]
    names = sorted({name for sample in samples for name in sample.procs})
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
        "cpu_busy_mean_pct": _time_mean(samples, lambda sample: sample.cpu_busy_pct),
        "cores_busy_mean_pct": _cores_mean(samples),
        "trial_cpu_s": trial_cpu_s(samples),
        # A process absent from an interval used no CPU in it.
        "procs_mean_pct": {
            name: _time_mean(samples, lambda sample, name=name: sample.procs.get(name, 0.0))
            for name in names
        },
    }
