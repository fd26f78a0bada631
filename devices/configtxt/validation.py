"""Check a config.txt (or a preset's lines) for one board: each finding an error or a warning.

Errors are what the firmware cannot read or must not be given (bad syntax, values outside the
documented range, the warranty bit unacknowledged); warnings are true things worth knowing
(an option that does nothing on this board, a line the firmware may misread).
Syntax facts: shared/reference/raspberry-pi.yaml: config_txt_syntax.
"""

from __future__ import annotations

from collections.abc import Iterator

from devices.configtxt.blocks import WARRANTY_ACK, not_in_a_preset, settings_text
from devices.configtxt.board_checks import (
    board_findings,
    combination_findings,
    underclock_findings,
)
from devices.configtxt.boards import BoardContext, board_context
from devices.configtxt.findings import ERROR, WARNING, Finding, shown
from devices.configtxt.parsing import (
    MAX_DIGITS,
    MODEL_FILTERS,
    ConfigFile,
    Line,
    digit_count,
    filter_kind,
    parse,
    strict_int,
    value_of,
)
from devices.configtxt.rules import BOOT_OPTIONS, RULES, UNKNOWN_HINTS, Rule, rule_for

__all__ = ["Finding", "validate", "validate_each", "validate_preset", "validate_preset_text"]

MAX_LINE = 98  # raspberry-pi.yaml: config_txt_syntax.limits.line_length
# The limit: a real config.txt is a few KiB, so a bigger file is the wrong file.
MAX_BYTES = 64 * 1024
_BOM = b"\xef\xbb\xbf"
_LOWER = {name.lower(): name for name in RULES}


def validate(
    data: bytes | str, board: str | BoardContext, acknowledge_warranty: bool = False
) -> list[Finding]:
    """Findings in line order (file-wide ones first). board is a family or a revision code;
    an unknown one raises ValueError. The warranty bit is accepted when acknowledge_warranty
    is set or the file holds the WARRANTY_ACK line. A file over MAX_BYTES gets that one
    finding and nothing else: its lines are not even read."""
    return validate_each(data, [board], acknowledge_warranty)[0]


def validate_each(
    data: bytes | str,
    boards: list[str | BoardContext],
    acknowledge_warranty: bool = False,
    *,
    preset: bool = False,
    acknowledge_boot: bool = False,
) -> list[list[Finding]]:
    """validate() for each board, reading the file and checking what does not depend on the
    board once. With preset=True, lines a preset cannot hold ([filters], include, an option set
    twice) are errors, options that decide what boots are errors unless
    acknowledge_boot (a preset is about clocks, voltages and the governor), and clocks below
    the board's own defaults are underclock warnings."""
    contexts = [board_context(board) for board in boards]
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        too_big = Finding(None, ERROR, f"the file is {len(raw):,} bytes, over the 64 KiB limit")
        return [[too_big] for _ in contexts]
    config = parse(raw)
    acknowledged = acknowledge_warranty or any(
        line.kind == "comment" and line.body == WARRANTY_ACK for line in config.lines
    )
    common = list(_file_findings(raw, config.lines))
    for line in config.lines:
        common += _line_findings(line)
    if preset:
        common += [Finding(line.number, ERROR, why) for line, why in not_in_a_preset(config.lines)]
        common += _boot_options(config, acknowledge_boot)
    return [
        sorted(
            common
            + [found for line in config.lines for found in board_findings(line, context)]
            + combination_findings(config, context, acknowledged)
            + (underclock_findings(config, context) if preset else []),
            key=lambda finding: finding.line or 0,
        )
        for context in contexts
    ]


def validate_preset(
    settings: dict,
    board: str | BoardContext,
    acknowledge_warranty: bool = False,
    acknowledge_boot: bool = False,
) -> list[Finding]:
    """The same rules applied to a preset's own lines (line numbers of settings_text)."""
    text = settings_text(settings, acknowledge_warranty)
    return validate_preset_text(text, board, acknowledge_warranty, acknowledge_boot)


def validate_preset_text(
    text: bytes | str,
    board: str | BoardContext,
    acknowledge_warranty: bool = False,
    acknowledge_boot: bool = False,
) -> list[Finding]:
    """The same rules applied to a preset as typed (line numbers of the text), plus one of
    presets only: options that decide what boots are errors unless acknowledge_boot."""
    return validate_each(
        text, [board], acknowledge_warranty, preset=True, acknowledge_boot=acknowledge_boot
    )[0]


def _boot_options(config: ConfigFile, acknowledged: bool) -> Iterator[Finding]:
    for line in config.lines:
        if line.kind in ("setting", "initramfs") and line.name in BOOT_OPTIONS:
            if acknowledged:
                yield Finding(
                    line.number, WARNING, f"{line.name} decides what the board boots (acknowledged)"
                )
            else:
                yield Finding(
                    line.number,
                    ERROR,
                    f"{line.name} decides what the board boots, and a preset is about clocks, "
                    "voltages and the governor: only a staff user can acknowledge it",
                )


def _file_findings(raw: bytes, lines: tuple[Line, ...]) -> Iterator[Finding]:
    if raw.startswith(_BOM):
        # The firmware reads the mark as part of line 1, so a setting there is not recognised.
        harmful = lines[0].kind in ("setting", "section", "include", "initramfs")
        message = "the file starts with a byte-order mark, which the firmware reads as text"
        yield Finding(1, ERROR if harmful else WARNING, message)


def _line_findings(line: Line) -> list[Finding]:
    found = [Finding(line.number, severity, message) for severity, message in _text(line)]
    if line.kind == "malformed":
        message = f"cannot read this line ({line.problem}): {shown(line.body)}"
        return [*found, Finding(line.number, ERROR, message)]
    checks = {"section": _section, "setting": _setting, "include": _directive}
    checks["initramfs"] = _directive
    if line.kind in checks:
        found += [Finding(line.number, s, m) for s, m in _layout(line)]
        found += [Finding(line.number, s, m) for s, m in checks[line.kind](line)]
    return found


def _text(line: Line) -> Iterator[tuple[str, str]]:
    if any("\udc80" <= ch <= "\udcff" for ch in line.raw):
        yield ERROR, "the line is not valid UTF-8"
    if "\x00" in line.raw:
        yield ERROR, "the line holds a NUL byte"
    encoded = line.raw.encode("utf-8", "surrogateescape")
    length = len(encoded)
    if length <= MAX_LINE:
        return
    if encoded[MAX_LINE:].strip():
        # raspberry-pi.yaml: config_txt_syntax.limits.hazard: the tail can be read as a setting
        yield ERROR, f"the line is {length} characters long; the firmware reads only {MAX_LINE}"
    else:  # a blank tail reads as a blank line: harmless
        message = f"the line is {length} characters long; past the {MAX_LINE}th there are only "
        yield WARNING, message + "spaces, which the firmware ignores"


def _layout(line: Line) -> Iterator[tuple[str, str]]:
    text = line.raw.removeprefix("\ufeff") if line.number == 1 else line.raw
    if text[:1].isspace():
        yield WARNING, "the line starts with spaces: the firmware may not read it"
    if line.kind == "setting":
        key, _, value = line.body.partition("=")
        if key != key.rstrip() or value != value.lstrip():
            yield WARNING, "spaces around '=': the firmware may not read the line"
    comment = (line.value or "") if line.kind != "section" else line.body.partition("]")[2]
    if "#" in comment:
        yield WARNING, "inline comments are not supported: put the comment on its own line"


def _section(line: Line) -> Iterator[tuple[str, str]]:
    name = line.value or ""
    kind = filter_kind(name)
    if kind == "unknown":
        yield WARNING, f"[{shown(name)}] is not a documented filter: what follows may never apply"
    elif kind == "model" and name.startswith("board-type="):
        if strict_int(name.partition("=")[2].strip()) is None:
            yield WARNING, f"[{shown(name)}] needs a board type number such as 0x11"
    elif kind == "model" and name not in MODEL_FILTERS:
        known = ", ".join(sorted(MODEL_FILTERS))
        yield WARNING, f"[{shown(name)}] is not a known model filter ({known})"


def _setting(line: Line) -> Iterator[tuple[str, str]]:
    rule = rule_for(line.key)
    if line.name in ("include", "initramfs"):
        yield (
            WARNING,
            f"{line.name} takes a space, not '=': {line.name} <file> ...",
        )
    elif rule is None:
        yield WARNING, _unknown(line.name or "")
    elif rule.kind == "int":
        yield from _integer(line, rule)


def _unknown(name: str) -> str:
    if name in UNKNOWN_HINTS:
        return f"unknown option {name}: {UNKNOWN_HINTS[name]}"
    if name.lower() in _LOWER:
        known = _LOWER[name.lower()]
        return f"unknown option {name}: names are case-sensitive (did you mean {known}?)"
    return f"unknown option {shown(name)}: not a documented config.txt option"


def _integer(line: Line, rule: Rule) -> Iterator[tuple[str, str]]:
    key, value = shown(line.key or ""), value_of(line)
    number = strict_int(value)
    if number is None:
        if digit_count(value) > MAX_DIGITS:
            digits = digit_count(value)
            yield ERROR, f"{key}={shown(value)} has {digits:,} digits: no value is that long"
        elif not value:
            yield ERROR, f"{key} needs an integer value"
        elif value.startswith("["):
            yield ERROR, f"{key} takes one integer, not a range like {shown(value)}"
        else:
            yield ERROR, f"{key}={shown(value)} is not an integer"
    elif (rule.lo is not None and number < rule.lo) or (rule.hi is not None and number > rule.hi):
        message = f"{key}={shown(str(number))} is outside the documented range {_range(rule)}"
        if rule.boot_safe:
            yield WARNING, f"{message}: the display or sound may be wrong, the board still boots"
        else:
            yield ERROR, message


def _range(rule: Rule) -> str:
    if rule.lo is not None and rule.hi is not None:
        return f"{rule.lo}..{rule.hi}"
    return f"(at least {rule.lo})" if rule.lo is not None else f"(at most {rule.hi})"


def _directive(line: Line) -> Iterator[tuple[str, str]]:
    if line.kind == "include":
        yield (
            WARNING,
            (
                f"include {shown(line.value or '')}: pifarm does not read included files, "
                "so their settings are not checked"
            ),
        )
    elif len((line.value or "").split()) < 2:
        # boot.adoc: initramfs gives both the file and the address (or followkernel)
        yield (
            WARNING,
            "initramfs needs a file and an address (initramfs <file> followkernel)",
        )
