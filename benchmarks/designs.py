"""What a comparison's test takes as its units, from the boards its trials ran on (pure).

Trials of one board share that board's own level (its silicon, its SD card, its cooling), so
they are not independent samples of what a change does: with a board-to-board spread of 2 %
and no true difference, trials of two sides on two boards taken as independent were called
better or worse about half of the time. So the board is the unit:

- TRIALS: one board ran both sides (or the boards are not known): its trials are the units,
  and the conclusion is about that board.
- BLOCKS: several boards ran both sides: each is a block, compared within itself, so that its
  own level cancels. A side's mean is its boards' means averaged (each board once), and its
  variance the trials' spread within boards, pooled over the boards (a two-way analysis of
  side and board, with each side's own spread); with one board it is exactly TRIALS. It
  takes the change to be alike on every board: the conclusion is about these boards.
- BOARDS: no board ran both sides, and each side ran on two or more: each board's mean is one
  value, so the boards' own spread is in the test.
- CONFOUNDED: no board ran both sides, and one side ran on a single board: its boards' own
  difference cannot be told from the change, and no test is made.

Boards only one side ran on, when others ran both, are left out of the test (not of the
groups' descriptions) and named.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from benchmarks.summaries import Summary

TRIALS, BLOCKS, BOARDS, CONFOUNDED = "trials", "blocks", "boards", "confounded"


@dataclass(frozen=True)
class Design:
    units: str = TRIALS
    baseline_boards: tuple[str, ...] = ()  # by name; empty when not known
    values_boards: tuple[str, ...] = ()
    # The relative SD of the boards' means within a side, pooled over the sides that ran on
    # two or more boards (None if none did): how much boards differ on their own.
    board_spread: float | None = None

    @property
    def shared(self) -> tuple[str, ...]:
        """The boards that ran both sides: the blocks (or the one board) of the test."""
        return tuple(sorted(set(self.baseline_boards) & set(self.values_boards)))

    @property
    def left_out(self) -> tuple[str, ...]:
        """Boards only one side ran on, left out of the test as others ran both."""
        if not self.shared:
            return ()
        return tuple(sorted(set(self.baseline_boards) ^ set(self.values_boards)))


class Estimate(NamedTuple):
    """A side's mean as the test reads it, its squared standard error and that one's df."""

    mean: float
    variance: float
    df: int


def design_of(before: Mapping[str, Summary] | None, after: Mapping[str, Summary] | None) -> Design:
    """before, after: each side's trials summed up board by board (by board name), or None
    when the boards are not known."""
    if before is None or after is None:
        return Design()
    baseline, values = tuple(sorted(before)), tuple(sorted(after))
    shared = set(baseline) & set(values)
    if len(shared) == 1:
        units = TRIALS
    elif shared:
        units = BLOCKS
    elif min(len(baseline), len(values)) >= 2:
        units = BOARDS
    else:
        units = CONFOUNDED
    spread = _board_spread([_board_means(before), _board_means(after)])
    return Design(units, baseline, values, spread)


def strata(
    design: Design, before: Mapping[str, Summary], after: Mapping[str, Summary]
) -> list[tuple[Summary, Summary]]:
    """The (before, after) units of each block the test compares within: each shared board's
    trials, all trials as one, or the boards' means as one. before, after: by board name, or
    all trials under one name when the boards are not known."""
    if design.units == BOARDS:
        return [(Summary.of(_board_means(before)), Summary.of(_board_means(after)))]
    if not design.shared:
        return [(Summary.pooled(before.values()), Summary.pooled(after.values()))]
    return [(before[board], after[board]) for board in design.shared]


def estimate(blocks: list[Summary]) -> Estimate:
    """One side's mean over its blocks (each block once), and the variance of that mean from
    the spread within blocks, pooled (NaN with no block of 2 or more values)."""
    count = len(blocks)
    df = sum(block.n - 1 for block in blocks)
    squares = math.fsum(block.m2 for block in blocks)
    inverse_sizes = sum(1 / block.n for block in blocks)
    variance = squares / df * inverse_sizes / count**2 if df else math.nan
    return Estimate(math.fsum(block.mean for block in blocks) / count, variance, df)


def order_p(pairs: list[tuple[Summary, Summary]]) -> float | None:
    """The exact two-sided p of a permutation test within blocks, when every block's units of a
    side are all alike: the observed split is the most extreme of the prod C(n + m, n) splits of
    the blocks that differ, so p = 2 / that (1 when none differ; None when blocks differ in
    opposite directions, where the order alone says nothing simple)."""
    directions, splits = set(), 1
    for before, after in pairs:
        direction = (after.min > before.min) - (after.min < before.min)
        if direction:
            directions.add(direction)
            splits *= math.comb(before.n + after.n, before.n)
    if len(directions) > 1:
        return None
    return min(1.0, 2 / splits) if directions else 1.0


def _board_means(by_board: Mapping[str, Summary]) -> list[float]:
    """Each board's mean, in order of name."""
    return [by_board[board].mean for board in sorted(by_board)]


def _board_spread(sides: list[list[float]]) -> float | None:
    relative, df = 0.0, 0
    for means in sides:
        if len(means) < 2:
            continue
        side = Summary.of(means)
        if side.mean > 0:
            relative += side.m2 / side.mean**2  # its relative variance, times its df
            df += side.n - 1
    return math.sqrt(relative / df) if df else None
