"""Waiting, before a trial, until the board is quiet (and, if asked, cool)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .samples import parse_samples
from .scripts import QUIET_ROUND, QUIET_ROUND_TIMEOUT_S


@dataclass(frozen=True)
class Quiet:
    """The outcome of wait_until_quiet: the last round's figures and a sentence about it."""

    reached: bool
    waited_s: float
    load1: float | None
    cpu_busy_pct: float | None
    temp_c: float | None
    words: str


# The rounds' windows: a board already quiet is found so in a third of a second (its CPU
# counters tick 100 times a second a core, so 30 ticks on one core: a resolution of 3 %
# against a threshold of 25 %); a board that was not (right after the run's probe, say) is
# looked at again over half a second, then a second at a time, as the load that kept it busy
# may come and go.
WINDOWS_S = (0.3, 0.5)
WINDOW_S = 1.0


def _quiet_round(endpoint, window_s: float) -> tuple[float | None, float | None, float | None]:
    """(load1, CPU busy % over window_s, temperature) of the board, None where unreadable."""
    argv = ["sh", "-c", QUIET_ROUND, "pifarm-quiet", f"{window_s:g}"]
    result = endpoint.run(argv, QUIET_ROUND_TIMEOUT_S)
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
    each_round: Callable[[], None] = lambda: None,
) -> Quiet:
    """Check the board in rounds until it is quiet or deadline_s has passed: the first ones
    over WINDOWS_S, the others over WINDOW_S.

    Quiet: 1-minute load below load_below, CPU busy (100 - idle - iowait, of all cores) over
    the round's window below cpu_below_pct, and, if cool_below_c is given and the board has a
    temperature, below that. No round starts after the deadline, so the wait may overrun it
    by one round. SSH errors of the endpoint propagate. each_round runs before every round
    (the engine renews its board lock and looks for a cancel there).
    """
    started, windows = time.monotonic(), iter(WINDOWS_S)
    while True:
        each_round()
        window_s = next(windows, WINDOW_S)
        load1, busy, temp = _quiet_round(endpoint, window_s)
        if busy is None and window_s < WINDOW_S:
            # No tick counted in a short window (a simulated board's counters, written by its
            # PID 1 under the board's CPU quota, can lag on a loaded host): a full one.
            load1, busy, temp = _quiet_round(endpoint, WINDOW_S)
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
