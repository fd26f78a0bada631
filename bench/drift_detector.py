"""How often does the drift detector (benchmarks/drift.py) cry wolf, and how soon does it see a
real change? Synthetic canary series, no board.

    .venv/bin/python bench/drift_detector.py [--series 1000] [--seed 1]

Each series is one board's canary metric (e.g. sha1sum MB/s, around 100): normal noise whose
relative spread is drawn per series from 0.3 to 2 %, one point in 50 a slow occasion (3 to 10 %
low, a background job), every value rounded to three significant figures as tools print them.
  false alarms   the share of stationary series of 100 points with any drift found
  delay          on series whose level steps down by 5 % after 50 points: how many points
                 after the step the drift is found (1: the first point after it), by noise;
                 a series with no finding within 50 points counts as missed
  slow slide     the level falls by 0.2 % a point from point 50: points until found
Targets: false alarms < 1 %; a 5 % step found within 5 points. Prints figures; asserts nothing.
"""

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import drift  # noqa: E402 - after the path: bench/ runs as a script

LEVEL = 100.0
POINTS = 100  # points a series holds: the false-alarm target is per 100
STEP_AT = 50
TARGET_FALSE_PCT = 1.0
TARGET_DELAY = 5


def rounded(value: float) -> float:
    return float(f"{value:.3g}")


def series(rng: random.Random, points: int, noise: float, level_at) -> list[float]:
    values = []
    for index in range(points):
        value = level_at(index) * (1 + rng.gauss(0, noise))
        if rng.random() < 1 / 50:
            value *= 1 - rng.uniform(0.03, 0.10)
        values.append(rounded(value))
    return values


def false_alarms(rng: random.Random, count: int, points: int) -> float:
    alarms = 0
    for _ in range(count):
        noise = rng.uniform(0.003, 0.02)
        if drift.first_drift(series(rng, points, noise, lambda index: LEVEL)):
            alarms += 1
    return 100 * alarms / count


def delays(rng: random.Random, count: int, noise: float, level_at) -> tuple[list[int], int]:
    """Points after the change until found, and how many were missed or found before it."""
    found, missed = [], 0
    for _ in range(count):
        drifted = drift.first_drift(series(rng, STEP_AT + 50, noise, level_at))
        if drifted is None or drifted.found_at < STEP_AT:
            missed += 1
        else:
            found.append(drifted.found_at - STEP_AT + 1)
    return found, missed


def step(index: int) -> float:
    return LEVEL * (0.95 if index >= STEP_AT else 1.0)


def slide(index: int) -> float:
    return LEVEL * (1 - 0.002 * max(0, index - STEP_AT + 1))


def describe(found: list[int], missed: int) -> str:
    if not found:
        return f"none found ({missed} missed or early)"
    quantiles = statistics.quantiles(found, n=10) if len(found) > 1 else [found[0]] * 9
    return (
        f"median {statistics.median(found):g}, 90th percentile {quantiles[8]:g}, "
        f"max {max(found)}; {missed} missed or found before the change"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    print(
        f"thresholds: warm-up {drift.WARM_UP}, lookback {drift.LOOKBACK}, spread floor "
        f"{drift.SPREAD_FLOOR:.1%}, jump z > {drift.JUMP_Z:g} {drift.JUMP_POINTS} in a row, "
        f"CUSUM k {drift.SLACK:g} h {drift.THRESHOLD:g} clip {drift.CLIP:g}"
    )
    pct = false_alarms(rng, args.series, POINTS)
    verdict = "met" if pct < TARGET_FALSE_PCT else "MISSED"
    print(
        f"false alarms: {pct:.1f} % of {args.series} stationary series of {POINTS} points "
        f"(target < {TARGET_FALSE_PCT:g} %: {verdict})"
    )
    for noise in (0.005, 0.01, 0.02):
        found, missed = delays(rng, args.series // 5, noise, step)
        within = sum(1 for points in found if points <= TARGET_DELAY)
        print(
            f"5 % step, noise {noise:.1%}: {describe(found, missed)}; "
            f"{100 * within / (args.series // 5):.1f} % found within {TARGET_DELAY} points"
        )
    found, missed = delays(rng, args.series // 5, 0.01, slide)
    print(f"0.2 %/point slide, noise 1.0%: {describe(found, missed)}")


if __name__ == "__main__":
    main()
