"""Compare two config.txt versions: a unified diff for terminals, rows for a side-by-side page."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from devices.configtxt.parsing import parse

__all__ = ["Row", "side_by_side", "unified_diff"]


@dataclass(frozen=True)
class Row:
    left_no: int | None  # 1-based line numbers; None where the side has no line
    left: str | None
    right_no: int | None
    right: str | None
    kind: str  # "same", "changed", "added" or "removed"


def _lines(data: bytes | str) -> list[str]:
    # For reading only: undecodable bytes show as U+FFFD (the files themselves are untouched).
    return [
        line.raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        for line in parse(data).lines
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
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [Row(i + 1, left[i], j + 1, right[j], "same") for i, j in _pairs(i1, i2, j1)]
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        changed = _pairs(i1, i1 + paired, j1)
        rows += [Row(i + 1, left[i], j + 1, right[j], "changed") for i, j in changed]
        rows += [Row(i + 1, left[i], None, None, "removed") for i in range(i1 + paired, i2)]
        rows += [Row(None, None, j + 1, right[j], "added") for j in range(j1 + paired, j2)]
    return rows


def _pairs(i1: int, i2: int, j1: int) -> zip:
    return zip(range(i1, i2), range(j1, j1 + (i2 - i1)), strict=True)
