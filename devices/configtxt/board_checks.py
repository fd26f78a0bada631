"""Checks that depend on the board: where a line lands, what does nothing there, and the
combinations of settings in force (the warranty bit, minimums above maximums, Pi 4 core_freq).
Facts: shared/reference/raspberry-pi.yaml: overclocking (keys cited inline) and rules.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from devices.configtxt.boards import NO, BoardContext, applies, board_context
from devices.configtxt.effective import applying_lines, last_by_key
from devices.configtxt.findings import ERROR, WARNING, Finding, shown
from devices.configtxt.parsing import ConfigFile, Line, leading_int, value_of
from devices.configtxt.rules import ALL, PI4, RULES, Rule, far_above, rule_for

__all__ = ["board_findings", "combination_findings", "underclock_findings", "underclock_warnings"]

# raspberry-pi.yaml: overclocking.general "busy cores run at the *_freq maximums, idle ones at
# *_freq_min": a minimum above its maximum is a mistake.
_MIN_MAX = [(f"{name}_min", name) for name in ("arm_freq", "core_freq", "gpu_freq", "h264_freq")]
_MIN_MAX += [(f"{name}_min", name) for name in ("isp_freq", "v3d_freq", "hevc_freq")]
_MIN_MAX += [("sdram_freq_min", "sdram_freq"), ("over_voltage_min", "over_voltage")]

# The busy clocks, each held to the family default of the clock it sets (rules.py, from
# raspberry-pi.yaml: overclocking.options.<clock>.defaults): below it the preset slows the
# board down, whatever it is called. gpu_freq has no defaults of its own; it sets core_freq
# with the block clocks (yaml: gpu_freq.meaning), unless core_freq is set too. arm_freq_min is
# not here: it is the idle clock, which a busy benchmark does not run at (its own
# below_default warning says why it is unsupported).
_UNDERCLOCK_DEFAULTS = {name: name for name in ("arm_freq", "core_freq", "sdram_freq")}
_UNDERCLOCK_DEFAULTS["gpu_freq"] = "core_freq"


def board_findings(line: Line, board: BoardContext) -> list[Finding]:
    rule = rule_for(line.key) if line.kind == "setting" else None
    if rule is None:
        return []
    return [Finding(line.number, *found) for found in _messages(line, rule, board)]


def _messages(line: Line, rule: Rule, board: BoardContext) -> Iterator[tuple[str, str]]:
    name, family = line.name or "", board.family
    if applies(line.filters, board) == NO:
        if rule.overclock and not rule.stock:
            sections = "".join(f"[{shown(f)}]" for f in line.filters)
            yield (
                WARNING,
                f"{name} is under {sections}, which does not match this board ({family}): "
                "the firmware skips it (add [all] before it if it is meant for every board)",
            )
        return
    if rule.boards is not None and family not in rule.boards:
        yield WARNING, f"{name} does nothing on {family}: {rule.why_not}"
        return
    number = leading_int(value_of(line)) if rule.kind == "int" else None
    caution = rule.cautions.get(family) or rule.cautions.get(ALL)
    if caution and number:
        yield WARNING, caution
    yield from _limits(line, rule, family, number)


def _limits(line: Line, rule: Rule, family: str, number: int | None) -> Iterator[tuple[str, str]]:
    if number is None:
        return
    name = line.name or ""
    ceiling = far_above(name, family)  # by name: the cache stays as small as the table
    limit = rule.warn_above.get(family) or rule.warn_above.get(ALL)
    if ceiling is not None and number > ceiling:
        yield (
            ERROR,
            f"{name}={shown(str(number))} is far above anything a {family} runs "
            f"(more than {ceiling}, twice its highest documented or reported clock)",
        )
    elif limit and number > limit[0]:
        yield WARNING, f"{name}={number} is above {limit[0]}: {limit[1]}"
    default = rule.defaults.get(family)
    if rule.below_default and default is not None and number < default:
        yield (
            WARNING,
            f"{name}={number} is below the {family} default of {default}: {rule.below_default}",
        )


def combination_findings(
    config: ConfigFile, board: BoardContext, acknowledged: bool
) -> list[Finding]:
    definite = last_by_key(applying_lines(config, board))
    # Lines under boot-time filters ([tryboot], [gpio4=1], ...) might apply: the warranty bit
    # is permanent, so it is checked with and without them.
    possible = last_by_key(applying_lines(config, board, maybe=True))
    found = [*_warranty(definite, acknowledged), *_warranty(possible, acknowledged)]
    found += _min_above_max(definite)
    found += _core_freq_pi4(definite, board)
    return list(dict.fromkeys(found))


def underclock_findings(config: ConfigFile, board: BoardContext) -> list[Finding]:
    """A preset's busy clocks below the board's own defaults: warnings on their lines. Only
    presets are checked so: a board's own file may run its clocks as it likes."""
    definite = last_by_key(applying_lines(config, board))
    values = {key: value_of(line) for key, line in definite.items()}
    return [
        Finding(definite[name].number, WARNING, message)
        for name, message in _underclocks(values, board.family)
    ]


def underclock_warnings(
    settings: Mapping[str, object],
    board: str | BoardContext,
    running: Mapping[str, int] | None = None,
) -> list[str]:
    """A sentence for each busy clock in settings (a preset version's options, or the
    firmware's view of a run: name -> value) set below the board's own default, e.g.
    "arm_freq 900 is below this board's default of 1200 MHz: an underclock". board: a family
    key (pi3) or a revision code; ValueError for one pifarm does not know."""
    values = {key: str(value) for key, value in settings.items()}
    family = board_context(board).family
    return [message for _, message in _underclocks(values, family, running or {})]


def _underclocks(
    values: Mapping[str, str], family: str, running: Mapping[str, int] | None = None
) -> Iterator[tuple[str, str]]:
    """running: a board's own clocks at stock where they are not the family's default (a Pi 4
    rev 1.4 whose image sets arm_boost=1 runs at 1800 MHz, not 1500)."""
    for name, held_to in _UNDERCLOCK_DEFAULTS.items():
        number = leading_int(values[name]) if name in values else None
        rule = RULES[held_to]
        default = (running or {}).get(held_to, rule.defaults.get(family))
        if number is None or default is None or number >= default:
            continue
        if rule.boards is not None and family not in rule.boards:
            continue  # it does nothing there: board_findings says so
        if name == held_to:
            below = f"is below this board's default of {default} MHz"
        elif held_to not in values:
            below = f"sets the core clock below this board's default {held_to} of {default} MHz"
        else:
            continue  # core_freq is set too, and checked on its own
        yield name, f"{name} {number} {below}: an underclock"


def _number(settings: dict[str, Line], key: str) -> int | None:
    line = settings.get(key)
    return None if line is None else leading_int(value_of(line))


def _warranty(settings: dict[str, Line], acknowledged: bool) -> Iterator[Finding]:
    """raspberry-pi.yaml: overclocking.warranty_bit (rule, over_voltage_above_6)."""
    severity = WARNING if acknowledged else ERROR
    note = " (acknowledged)" if acknowledged else "; acknowledge it if that is intended"
    turbo = bool(_number(settings, "force_turbo"))
    raised = [
        line
        for key, line in settings.items()
        if key.startswith("over_voltage") and (leading_int(value_of(line)) or 0) > 0
    ]
    if turbo and raised:
        first = raised[0]
        yield Finding(
            settings["force_turbo"].number,
            severity,
            f"force_turbo=1 with {first.key}={value_of(first)} (line {first.number}) sets the "
            f"permanent warranty bit{note}",
        )
    over_voltage = _number(settings, "over_voltage") or 0
    if 6 < over_voltage <= 8 and not turbo:  # above 8 is a range error already
        yield Finding(
            settings["over_voltage"].number,
            severity,
            f"over_voltage={over_voltage}: values above 6 are only accepted with force_turbo=1, "
            f"which sets the permanent warranty bit{note}",
        )


def _min_above_max(settings: dict[str, Line]) -> Iterator[Finding]:
    for low_key, high_key in _MIN_MAX:
        low, high = _number(settings, low_key), _number(settings, high_key)
        if low is not None and high is not None and low > high:
            yield Finding(
                settings[low_key].number,
                WARNING,
                f"{low_key}={low} is above {high_key}={high} "
                f"(line {settings[high_key].number}): the idle value exceeds the busy one",
            )


def _core_freq_pi4(settings: dict[str, Line], board: BoardContext) -> Iterator[Finding]:
    """raspberry-pi.yaml: overclocking.options.core_freq.pi4_note "max 500, or 550 with
    hdmi_enable_4kp60"."""
    core = _number(settings, "core_freq")
    if board.family not in PI4 or core is None:
        return
    with_4kp60 = bool(_number(settings, "hdmi_enable_4kp60"))
    limit = 550 if with_4kp60 else 500
    if core > limit:
        hint = "" if with_4kp60 else " (550 with hdmi_enable_4kp60=1)"
        yield Finding(
            settings["core_freq"].number,
            ERROR,
            f"core_freq={core} is above the Pi 4 maximum of {limit}{hint}",
        )
