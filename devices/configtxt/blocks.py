"""A preset's lines, and the one managed block pifarm keeps at the end of a board's config.txt.

The block sits between two marker comments and is opened and closed with [all], so it applies
to every board whatever section the file ended in, and lines after it are not caught in it.
Removing it gives back the file exactly as it was before pifarm touched it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from devices.configtxt.findings import shown
from devices.configtxt.parsing import ConfigFile, Line, parse, render
from devices.configtxt.rules import RULES

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "WARRANTY_ACK",
    "apply_block",
    "managed_settings",
    "preset_options",
    "remove_block",
    "settings_text",
    "shown_settings_text",
]

BEGIN_MARKER = "# >>> pifarm managed block: pifarm rewrites these lines >>>"
END_MARKER = "# <<< pifarm managed block <<<"
# A preset that knowingly sets the warranty bit carries this line; validate() accepts it then.
WARRANTY_ACK = "# pifarm: acknowledged: these settings set the permanent warranty bit"
_MAX_LINE = 98  # raspberry-pi.yaml: config_txt_syntax.limits.line_length
_KEY = re.compile(r"[A-Za-z0-9_]+(?::[0-9]+)?")
_ORDER = {name: index for index, name in enumerate(RULES)}


def settings_text(settings: dict[str, int | str], acknowledge_warranty: bool = False) -> str:
    """key=value lines in a stable order: the option table's order (arm_freq, arm_boost,
    gpu_freq, core_freq, ...), then unknown options alphabetically."""
    lines = [WARRANTY_ACK] if acknowledge_warranty else []
    for key in sorted(settings, key=lambda k: (_ORDER.get(k, len(_ORDER)), k)):
        lines.append(f"{_checked_key(key)}={_checked_value(key, settings[key])}")
    return "".join(line + "\n" for line in lines)


def shown_settings_text(settings: object, acknowledge_warranty: bool = False) -> str:
    """settings_text for reading on a page. What could never be written (a line break or NUL
    in a value, a bad name: only an older pifarm could have stored one) shows escaped, so a
    page always renders and the edit form offers it for fixing."""
    try:
        return settings_text(settings, acknowledge_warranty)  # type: ignore[arg-type]
    except (ValueError, TypeError, AttributeError):
        pass
    items = settings.items() if isinstance(settings, dict) else [("?", settings)]
    lines = [WARRANTY_ACK] if acknowledge_warranty else []
    lines += [f"{shown(str(key), 200)}={shown(str(value), 200)}" for key, value in items]
    return "".join(line + "\n" for line in lines)


def _checked_key(key: object) -> str:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"not a config.txt option name: {str(key)[:40]!r}")
    return key


def _checked_value(key: str, value: object) -> str:
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int | str):
        raise ValueError(f"{key}: a value is a number or text, not {type(value).__name__}")
    text = str(value).strip()
    if any(ch in text for ch in "\r\n\x00"):
        raise ValueError(f"{key}: a value cannot hold a line break or NUL byte")
    return text


def preset_options(text: str) -> dict[str, str]:
    """The options of a preset written as config.txt lines. Comments and blank lines are
    skipped; anything that is not a plain option=value line, or an option set twice, raises
    ValueError naming the line."""
    lines = parse(text).lines
    first = next(not_in_a_preset(lines), None)
    if first is not None:
        line, why = first
        raise ValueError(f"line {line.number}: {why}")
    return {line.key: line.value or "" for line in lines if line.kind == "setting"}


def not_in_a_preset(lines: Iterable[Line]) -> Iterator[tuple[Line, str]]:
    """Each line a preset cannot hold, with why: anything but a plain option=value line
    (comments, blank lines and [all] aside), or an option set a second time."""
    seen: dict[str, int] = {}
    for line in lines:
        if line.kind in ("blank", "comment") or (line.kind == "section" and line.value == "all"):
            continue
        if line.kind != "setting":
            yield line, _not_preset(line)
        elif line.key in seen:
            yield line, f"{line.key} is already set on line {seen[line.key]}"
        else:
            seen[line.key] = line.number


def _not_preset(line: Line) -> str:
    if line.kind == "section":
        return "a preset applies to the whole board: [filters] are not allowed"
    if line.kind in ("include", "initramfs"):
        return f"{line.kind} is not allowed in a preset"
    return f"expected option=value, got {line.body[:40]!r}"


def apply_block(original: bytes, settings_text: str, label: str) -> bytes:
    """original with the managed block (label in its first marker) at its end, replacing any
    block already there. Settings of no lines (the stock preset) leave no block at all: the
    file as it was before pifarm touched it, which is what "firmware defaults" means here."""
    base = remove_block(original)
    lines = _block_lines(settings_text)
    if not any(line.kind == "setting" for line in lines):
        return base
    eol = "\r\n" if _first_ending(base) == "\r\n" else "\n"
    body = [_marker_with(label), "[all]", *(line.raw for line in lines), "[all]", END_MARKER]
    newline_added = bool(base) and not base.endswith(b"\n")
    # When the original did not end in a newline, the block does not either: remove_block
    # knows from that to take back the newline added before the block.
    block = (eol if newline_added else "") + eol.join(body) + ("" if newline_added else eol)
    return base + block.encode("utf-8", "surrogateescape")


def _first_ending(data: bytes) -> str:
    first, newline, _ = data.partition(b"\n")
    return "\r\n" if newline and first.endswith(b"\r") else "\n"


def _marker_with(label: str) -> str:
    label = " ".join(label.split())  # one line, however the label was written
    marker = f"{BEGIN_MARKER} {label}".rstrip().encode("utf-8", "surrogateescape")
    if len(marker) > _MAX_LINE:  # the limit counts bytes; cut whole characters only
        marker = marker[: _MAX_LINE - 3].decode("utf-8", "ignore").encode() + b"..."
    return marker.decode("utf-8", "surrogateescape")


def _block_lines(text: str) -> list[Line]:
    lines = []
    for line in parse(text).lines:
        if line.kind == "blank":
            continue
        if _is_begin(line) or _is_end(line):
            raise ValueError(f"line {line.number}: a preset cannot hold pifarm's block markers")
        if line.kind == "section":
            raise ValueError(f"line {line.number}: [filters] are not allowed in a preset")
        lines.append(line)
    return lines


def remove_block(data: bytes) -> bytes:
    """data without the managed block: exactly the bytes before pifarm applied one. Raises
    ValueError when the markers are damaged (missing, doubled or out of order)."""
    if not _may_hold_block(data):
        return data
    lines = list(parse(data).lines)
    span = _block_span(lines)
    if span is None:
        return data
    start, stop = span
    before, after = lines[:start], lines[stop + 1 :]
    if before and not after and lines[stop].ending == "":
        before[-1] = _without_added_newline(before[-1], lines[start].ending)
    return render(ConfigFile(tuple(before + after)))


def _may_hold_block(data: bytes) -> bool:
    """A marker's text is in the file: without it there is no block, and no need to read
    every line of a big file."""
    return BEGIN_MARKER.encode() in data or END_MARKER.encode() in data


def _without_added_newline(last: Line, added: str) -> Line:
    """The original's last line, which had no line ending until apply_block added one (the
    block's own: the begin marker's). Only those characters go: a "\r" of the original stays."""
    text = last.raw + last.ending
    if not added or not text.endswith(added):
        return last  # edited by hand since: leave it
    return replace(last, raw=text[: -len(added)], ending="")


def _block_span(lines: list[Line]) -> tuple[int, int] | None:
    begins = [i for i, line in enumerate(lines) if _is_begin(line)]
    ends = [i for i, line in enumerate(lines) if _is_end(line)]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ValueError(
            f"config.txt has {len(begins)} start and {len(ends)} end markers of pifarm's "
            "managed block (expected one of each, in order): fix the file by hand"
        )
    return begins[0], ends[0]


def _is_begin(line: Line) -> bool:
    return line.kind == "comment" and line.body.startswith(BEGIN_MARKER)


def _is_end(line: Line) -> bool:
    return line.kind == "comment" and line.body == END_MARKER


def managed_settings(data: bytes) -> dict[str, str]:
    """What the managed block sets (the later line winning); {} when there is no block."""
    if not _may_hold_block(data):
        return {}
    lines = list(parse(data).lines)
    span = _block_span(lines)
    if span is None:
        return {}
    inside = lines[span[0] + 1 : span[1]]
    return {line.key: line.value or "" for line in inside if line.kind == "setting" and line.key}
