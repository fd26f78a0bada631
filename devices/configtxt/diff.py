"""Compare two config.txt versions: a unified diff for terminals, rows for a side-by-side page.

Board files are untrusted and up to 1 MiB, and difflib's matching is quadratic on repeated
lines (8,000 identical lines took seconds). pifarm only ever changes its one managed block, so
the common head and tail are taken off first (linear), and only a middle part of at most
MATCH_LIMIT lines a side is matched line by line; a larger one is shown as removed and added.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from devices.configtxt.parsing import split_lines

__all__ = ["MATCH_LIMIT", "Row", "fold", "side_by_side", "unified_diff"]

MATCH_LIMIT = 1000  # lines a side difflib may match: well under 0.1 s at worst


@dataclass(frozen=True)
class Row:
    left_no: int | None  # 1-based line numbers; None where the side has no line
    left: str | None
    right_no: int | None
    right: str | None
    kind: str  # "same", "changed", "added", "removed"; from fold(): "skipped" or "cut"
    hidden: int = 0  # for "skipped" and "cut": how many rows this one stands for


def _lines(data: bytes | str) -> list[str]:
    # For reading only: undecodable bytes show as U+FFFD (the files themselves are untouched).
    return [
        raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        for raw in split_lines(data)
    ]


def unified_diff(a: bytes | str, b: bytes | str, a_name: str = "a", b_name: str = "b") -> str:
    """A unified diff of the lines ("" when the files are the same). Files that differ only in
    line endings (CRLF, a missing final newline) get a one-line note instead."""
    diff = list(difflib.unified_diff(_lines(a), _lines(b), a_name, b_name, lineterm=""))
    if diff:
        return "\n".join(diff) + "\n"
    if _bytes(a) != _bytes(b):
        return f"{a_name} and {b_name} differ only in line endings\n"
    return ""


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


def side_by_side(a: bytes | str, b: bytes | str) -> list[Row]:
    """One row per line pair: equal lines side by side, a changed block paired line by line,
    lines only on one side as added (right) or removed (left)."""
    left, right = _lines(a), _lines(b)
    head = _common_head(left, right)
    tail = _common_head(left[head:][::-1], right[head:][::-1])
    stop_left, stop_right = len(left) - tail, len(right) - tail
    rows = _rows("equal", left, right, 0, head, 0)
    for opcode in _middle_opcodes(left[head:stop_left], right[head:stop_right]):
        tag, i1, i2, j1, j2 = opcode
        rows += _rows(tag, left, right, head + i1, head + i2, head + j1, head + j2)
    rows += _rows("equal", left, right, stop_left, len(left), stop_right)
    return rows


def _common_head(left: list[str], right: list[str]) -> int:
    count = 0
    for one, other in zip(left, right, strict=False):
        if one != other:
            break
        count += 1
    return count


def _middle_opcodes(left: list[str], right: list[str]) -> list[tuple]:
    if not left and not right:
        return []
    if len(left) > MATCH_LIMIT or len(right) > MATCH_LIMIT:
        return [("replace", 0, len(left), 0, len(right))]
    return difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes()


def _rows(tag, left, right, i1: int, i2: int, j1: int, j2: int | None = None) -> list[Row]:
    if tag == "equal":
        return [Row(i + 1, left[i], j + 1, right[j], "same") for i, j in _pairs(i1, i2, j1)]
    paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
    rows = [Row(i + 1, left[i], j + 1, right[j], "changed") for i, j in _pairs(i1, i1 + paired, j1)]
    rows += [Row(i + 1, left[i], None, None, "removed") for i in range(i1 + paired, i2)]
    rows += [Row(None, None, j + 1, right[j], "added") for j in range(j1 + paired, j2)]
    return rows


def _pairs(i1: int, i2: int, j1: int) -> zip:
    return zip(range(i1, i2), range(j1, j1 + (i2 - i1)), strict=True)


def fold(rows: list[Row], context: int = 3, max_rows: int = 500) -> list[Row]:
    """The rows a page shows: all of them up to max_rows (a real config.txt is shorter);
    beyond, runs of unchanged lines longer than twice context become one "skipped" row, and
    past max_rows one "cut" row counts the rest. A page stays small whatever a file holds."""
    if len(rows) <= max_rows:
        return rows
    shown: list[Row] = []
    run: list[Row] = []
    for row in [*rows, None]:
        if row is not None and row.kind == "same":
            run.append(row)
            continue
        shown += _folded_run(run, context, first=not shown, last=row is None)
        run = []
        if row is not None:
            shown.append(row)
    if len(shown) > max_rows:
        shown = [*shown[:max_rows], Row(None, None, None, None, "cut", len(shown) - max_rows)]
    return shown


def _folded_run(run: list[Row], context: int, first: bool, last: bool) -> list[Row]:
    """Unchanged rows with context kept next to the changes (none before the first change or
    after the last one)."""
    before = 0 if first else context
    after = 0 if last else context
    if len(run) <= before + after + 1:
        return run
    hidden = len(run) - before - after
    skipped = Row(None, None, None, None, "skipped", hidden)
    return [*run[:before], skipped, *run[len(run) - after :]]
