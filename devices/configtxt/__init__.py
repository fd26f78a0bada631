"""config.txt: parse, validate, render and diff. Pure functions: no Django, no I/O.

parse() keeps every line's exact text, so render(parse(data)) == data for any file pifarm has
not changed. validate() checks a file for one board; apply_block() and remove_block() keep
pifarm's settings in one managed block at the end of the board's own file.
Facts: shared/reference/raspberry-pi.yaml (cited by key in each module).
"""

from devices.configtxt.blocks import (
    WARRANTY_ACK,
    apply_block,
    managed_settings,
    preset_options,
    remove_block,
    settings_text,
    shown_settings_text,
)
from devices.configtxt.boards import BoardContext, board_context
from devices.configtxt.diff import Row, fold, side_by_side, unified_diff
from devices.configtxt.effective import effective_settings, overclock_settings
from devices.configtxt.findings import Finding
from devices.configtxt.parsing import ConfigFile, Line, parse, render
from devices.configtxt.validation import (
    validate,
    validate_each,
    validate_preset,
    validate_preset_text,
)

__all__ = [
    "WARRANTY_ACK",
    "BoardContext",
    "ConfigFile",
    "Finding",
    "Line",
    "Row",
    "apply_block",
    "board_context",
    "effective_settings",
    "fold",
    "managed_settings",
    "overclock_settings",
    "parse",
    "preset_options",
    "remove_block",
    "render",
    "settings_text",
    "shown_settings_text",
    "side_by_side",
    "unified_diff",
    "validate",
    "validate_each",
    "validate_preset",
    "validate_preset_text",
]
