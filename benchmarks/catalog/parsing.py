"""Small helpers the parsers share: find a number in a tool's output, or say what is missing."""

import math
import re

from benchmarks.catalog.spec import ParseError

# No benchmark measures more than this of anything (a petabyte, 10^15 events); a figure past
# it is a tool's garbage, and squared in a comparison's statistics it would overflow a float.
LARGEST = 1e15


def number(pattern: str | re.Pattern, text: str, what: str) -> float:
    """The first group of pattern in text as a finite number, or ParseError naming `what`."""
    match = re.search(pattern, text)
    if not match:
        raise ParseError(f"no {what} in the output")
    return finite(match.group(1), what)


def finite(text: str, what: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        raise ParseError(f"{what} is {text!r}, not a number") from None
    if not math.isfinite(value):
        raise ParseError(f"{what} is {text!r}, not a finite number")
    return bounded(value, what)


def bounded(value: float, what: str) -> float:
    """value, or ParseError if its size is past LARGEST."""
    if abs(value) > LARGEST:
        raise ParseError(
            f"{what} is {value:g}, more than {LARGEST:g}: no benchmark measures that much"
        )
    return value


def positive(value: float, what: str) -> float:
    """Rates and durations: zero or less means the run did not measure anything."""
    if not value > 0:
        raise ParseError(f"{what} is {value:g}, which cannot be: the run measured nothing")
    return value


def first_line(text: str, pattern: str) -> str:
    """The first line matching pattern (a tool's version line), stripped, or ''."""
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(0).strip() if match else ""
