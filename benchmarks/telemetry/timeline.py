"""A run's stored telemetry (Sample.to_dict() of each end) as series over time, for charts.

Time is in seconds from the end's first sample, which the engine takes as the measurement
starts; a value never read stays None (a gap in a chart, never a zero). Throttled readings
keep their raw value and its bits in the words of raspberry-pi.yaml (devices.vcgencmd).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devices import vcgencmd

UNITS = {
    "t": "s",
    "arm_mhz": "MHz",
    "temp_c": "°C",
    "cpu_busy_pct": "% of all cores",
    "procs": "% of one core",
}


def timeline(samples: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """{"t", "arm_mhz", "temp_c", "cpu_busy_pct": lists of equal length, "throttled": the
    readings with their bits, "procs": {name: CPU % at each t (None where it did not run)}}."""
    samples = [sample for sample in samples if isinstance(sample, dict) and "t" in sample]
    names = sorted({name for sample in samples for name in sample.get("procs") or {}})
    return {
        "t": [sample["t"] for sample in samples],
        **{
            key: [sample.get(key) for sample in samples]
            for key in ("arm_mhz", "temp_c", "cpu_busy_pct")
        },
        "throttled": [
            _throttled(sample["t"], sample["throttled"])
            for sample in samples
            if isinstance(sample.get("throttled"), int)
        ],
        "procs": {name: [_proc_pct(sample, name) for sample in samples] for name in names},
    }


def _throttled(t: float, value: int) -> dict[str, Any]:
    try:
        flags = vcgencmd.decode_throttled(value)
    except vcgencmd.VcgencmdError:
        flags = []
    return {
        "t": t,
        "value": f"{value:#x}",
        "bits": [{"bit": flag.bit, "now": flag.now, "words": flag.words} for flag in flags],
    }


def _proc_pct(sample: dict[str, Any], name: str) -> float | None:
    """A process absent from a rated interval used no CPU in it (as summarize counts it); the
    baseline sample has no rates at all."""
    if sample.get("cpu_busy_pct") is None:
        return None
    return (sample.get("procs") or {}).get(name, 0.0)
