"""Read config.txt into lines that keep their exact text, so rendering gives the same bytes back.

Syntax facts: shared/reference/raspberry-pi.yaml: config_txt_syntax (lines, conditional_filters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ConfigFile",
    "Line",
    "filter_kind",
    "digit_count",
    "leading_int",
    "next_filters",
    "parse",
    "render",
    "split_lines",
    "strict_int",
    "value_of",
]

# Undecodable bytes become lone surrogates and go back unchanged: parse/render is the identity
# even for files that are not UTF-8.
_ERRORS = "surrogateescape"
_BOM = "\ufeff"

_SECTION = re.compile(r"\[([^\]]*)\](.*)")
_DIRECTIVE = re.compile(r"(include|initramfs)\s+(.*)")  # the two lines without '='
_KEY = re.compile(r"[A-Za-z0-9_]+(?::[0-9]+)?")  # name plus an optional HDMI port (hdmi_mode:1)

# raspberry-pi.yaml: config_txt_syntax.conditional_filters.models, plus [cm4s] from COND.
MODEL_FILTERS = frozenset(
    {"pi0", "pi0w", "pi02", "pi1", "pi2", "pi3", "pi3+", "pi4", "pi400", "cm4", "cm4s"}
    | {"pi5", "pi500", "cm5"}
)
_MODEL_LIKE = re.compile(r"(pi|cm)[0-9][0-9a-z+]*")
_SERIAL = re.compile(r"0x[0-9A-Fa-f]+")
_GPIO = re.compile(r"gpio[0-9]+=.*")
_EXPRESSION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=|&|<|>).*")
# raspberry-pi.yaml: config_txt_syntax.lines: "value integer (decimal or 0x hex)"
_INT = re.compile(r"[-+]?(0[xX][0-9A-Fa-f]+|[0-9]+)")
_INT_PREFIX = re.compile(r"\s*([-+]?)(0[xX][0-9A-Fa-f]+|[0-9]+)")
# Python refuses to convert more than 4,300 decimal digits, and no firmware value comes near a
# hundred: a longer run of digits is not read as a number at all (validation says why).
MAX_DIGITS = 100


@dataclass(frozen=True)
class Line:
    """One line of config.txt.

    kind is blank, comment, section, setting, include, initramfs or malformed. For a setting,
    key is the name as written (with any ":N" port) and value the text after the first '='
    with surrounding spaces removed; for a section, value is the filter text; for include and
    initramfs, key is the directive and value the rest of the line. filters are the conditional
    filters in force for this line (for a section line: after it).
    """

    number: int
    raw: str  # exactly as written, without the line ending
    ending: str  # "\n", "\r\n" or "" for a last line without one
    kind: str
    key: str | None = None
    value: str | None = None
    filters: tuple[str, ...] = ()
    problem: str = ""  # why a malformed line cannot be read

    @property
    def name(self) -> str | None:
        """The option name without an HDMI port suffix ("hdmi_mode" for "hdmi_mode:1")."""
        return self.key.split(":", 1)[0] if self.key else None

    @property
    def body(self) -> str:
        """The text without surrounding spaces (and without a byte-order mark on line 1)."""
        return _body(self.raw, self.number)


@dataclass(frozen=True)
class ConfigFile:
    lines: tuple[Line, ...]

    def settings(self) -> list[Line]:
        return [line for line in self.lines if line.kind == "setting"]


def parse(data: bytes | str) -> ConfigFile:
    """Parse any config.txt, however broken: every byte ends up in some line's raw text."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    text = data.decode("utf-8", _ERRORS)
    lines, filters = [], ()
    for number, (raw, ending) in enumerate(_split(text), start=1):
        # Each Line is built once: a board's file may have 60,000 lines (1 MiB).
        kind, key, value, problem = _classify(_body(raw, number))
        if kind == "section":
            filters = next_filters(filters, value or "")
        lines.append(Line(number, raw, ending, kind, key, value, filters, problem))
    return ConfigFile(tuple(lines))


def render(config: ConfigFile) -> bytes:
    return "".join(line.raw + line.ending for line in config.lines).encode("utf-8", _ERRORS)


def split_lines(data: bytes | str) -> list[str]:
    """Each line's text without its ending, as parse() would split it, without reading it."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return [raw for raw, _ in _split(data.decode("utf-8", _ERRORS))]


def _split(text: str):
    # Only "\n" ends a line (str.splitlines would also split on \x0b, \x1c, \u2028, ...).
    parts = text.split("\n")
    for part in parts[:-1]:
        yield (part[:-1], "\r\n") if part.endswith("\r") else (part, "\n")
    if parts[-1]:
        yield parts[-1], ""


def _body(raw: str, number: int) -> str:
    return (raw[1:] if number == 1 and raw.startswith(_BOM) else raw).strip()


_Parts = tuple[str, str | None, str | None, str]  # kind, key, value, problem


def _classify(body: str) -> _Parts:
    if not body:
        return "blank", None, None, ""
    if body.startswith("#"):
        return "comment", None, None, ""
    if body.startswith("["):
        return _section(body)
    directive = _DIRECTIVE.fullmatch(body)
    if directive:
        return directive[1], directive[1], directive[2].strip(), ""
    key, sep, value = body.partition("=")
    if not sep:
        return "malformed", None, None, "expected option=value"
    if not _KEY.fullmatch(key.strip()):
        return "malformed", None, None, "not an option name before '='"
    return "setting", key.strip(), value.strip(), ""


def _section(body: str) -> _Parts:
    match = _SECTION.fullmatch(body)
    rest = match[2].strip() if match else ""
    if match is None or (rest and not rest.startswith("#")):
        return "malformed", None, None, "a [filter] line holds only the filter"
    return "section", None, match[1].strip(), ""


def filter_kind(name: str) -> str:
    """The filter's type: filters of one type replace each other, types AND together (COND)."""
    if name in ("all", "none"):
        return name
    if name in MODEL_FILTERS or name.startswith("board-type=") or _MODEL_LIKE.fullmatch(name):
        # Inference: board-type is taken as the same type as the model filters (both say
        # which board), so [pi4] then [board-type=0x11] is not an AND.
        return "model"
    if name.startswith("EDID="):
        return "edid"
    if name.startswith("HDMI:"):
        return "hdmi"
    if name == "tryboot":
        return "tryboot"
    if _SERIAL.fullmatch(name):
        return "serial"
    if _GPIO.fullmatch(name):
        return "gpio"
    expression = _EXPRESSION.fullmatch(name)
    if expression:
        return f"var:{expression[1]}"
    return "unknown"


def next_filters(current: tuple[str, ...], name: str) -> tuple[str, ...]:
    """Filters in force after a [name] line (raspberry-pi.yaml: conditional_filters.rules)."""
    kind = filter_kind(name)
    if kind == "all":
        return ()
    # Inference: [none] stays in force until [all], whatever filters follow it.
    kept = tuple(f for f in current if filter_kind(f) != kind)
    return (*kept, name)


def strict_int(text: str) -> int | None:
    """The integer a value spells exactly (decimal or 0x hex), else None."""
    return leading_int(text) if _INT.fullmatch(text) else None


def leading_int(text: str | None) -> int | None:
    """What the firmware reads as an integer: it stops at the first non-digit
    (raspberry-pi.yaml: config_txt_syntax.limits.hazard). None if no digits come first."""
    match = _INT_PREFIX.match(text or "")
    if match is None or len(match[2]) > MAX_DIGITS:
        return None
    sign = -1 if match[1] == "-" else 1
    digits = match[2]
    return sign * (int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10))


def digit_count(text: str | None) -> int:
    """How many digits the integer at the start of text has (0 when there is none)."""
    match = _INT_PREFIX.match(text or "")
    return len(match[2]) if match else 0


def value_of(line: Line) -> str:
    """A setting's value without an inline comment: what the writer meant, and for an integer
    what the firmware reads too, as it stops at the first non-digit ("900 # fast" gives 900)."""
    return (line.value or "").split("#", 1)[0].strip()
