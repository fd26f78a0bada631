"""What the firmware would apply for one board: sections resolved, the later line winning."""

from __future__ import annotations

from devices.configtxt.boards import MAYBE, YES, BoardContext, applies, board_context
from devices.configtxt.parsing import ConfigFile, Line, parse
from devices.configtxt.rules import rule_for

__all__ = ["applying_lines", "effective_settings", "last_by_key", "overclock_settings"]


def applying_lines(config: ConfigFile, board: BoardContext, *, maybe: bool = False) -> list[Line]:
    """Settings (and initramfs lines) whose filters match the board, in file order.

    With maybe=True, lines under filters only known at boot ([EDID=...], [gpio4=1], [tryboot],
    ...) count too: what could apply, for checks that must not miss a risk.
    """
    wanted = {YES, MAYBE} if maybe else {YES}
    return [
        line
        for line in config.lines
        if line.kind in ("setting", "initramfs") and applies(line.filters, board) in wanted
    ]


def last_by_key(lines: list[Line]) -> dict[str, Line]:
    """raspberry-pi.yaml: config_txt_syntax.lines "a repeated key: the later line wins"."""
    return {line.key: line for line in lines if line.key}


def effective_settings(data: bytes | str | ConfigFile, board: str | BoardContext) -> dict[str, str]:
    """Option -> value as the firmware would apply them on this board. Defaults are not
    included, nor lines under filters known only at boot (EDID, GPIO, serial, tryboot), nor
    the contents of included files. dtoverlay, dtparam and gpio lines add up: their values are
    joined with newlines in file order."""
    config = data if isinstance(data, ConfigFile) else parse(data)
    result: dict[str, str] = {}
    for line in applying_lines(config, board_context(board)):
        rule = rule_for(line.key)
        if rule is not None and rule.accumulates and line.key in result:
            result[line.key] += "\n" + (line.value or "")
        else:
            result.pop(line.key, None)  # keep dict order = order of the winning lines
            result[line.key] = line.value or ""
    return result


def overclock_settings(data: bytes | str, board: str | BoardContext) -> dict[str, str]:
    """The clock, voltage and thermal settings in force on this board: a preset "as found"."""
    settings = effective_settings(data, board)
    return {key: value for key, value in settings.items() if _is_overclock(key)}


def _is_overclock(key: str) -> bool:
    rule = rule_for(key)
    return rule is not None and rule.overclock
