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

Modules: scripts (the sh scripts, sampler_argv), samples (Sample, parse_samples), validity
(suspect_reasons, summarize), quiet (wait_until_quiet).
"""

from .quiet import Quiet, wait_until_quiet
from .samples import Sample, parse_samples
from .scripts import (
    NETWORK_PROCESSES,
    QUIET_ROUND,
    SAMPLE_DONE,
    SAMPLER,
    followable,
    sampler_argv,
)
from .validity import UNDER_LOAD_CORES, summarize, suspect_reasons

__all__ = [
    "NETWORK_PROCESSES",
    "QUIET_ROUND",
    "SAMPLE_DONE",
    "SAMPLER",
    "UNDER_LOAD_CORES",
    "Quiet",
    "Sample",
    "followable",
    "parse_samples",
    "sampler_argv",
    "summarize",
    "suspect_reasons",
    "wait_until_quiet",
]
