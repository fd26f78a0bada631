"""What a benchmark is: a small declaration (parameters, metrics, tools) plus two pure functions.

`plan(params, ctx)` says what to run where (on the board, on the peer), and `parse(outputs,
params)` turns what the measuring command printed into numbers. Neither touches the network or
the database: the engine (benchmarks.engine) runs the plan through the one SSH seam and the
controller's own shell, and keeps the raw output of every run so a parser can be re-checked.

Every value in a command is a separate argv element; scripts take their parameters as
positional arguments ("$1"), never pasted into their text. So a parameter holding shell
metacharacters arrives on the board as one literal word.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Where = Literal["board", "peer"]

# ASCII digits only: Python's int() also reads other scripts' digits ("٣" is 3) and
# underscores ("1_0" is 10), which nobody means in a size or a count.
_SIZE = re.compile(r"(\d+)\s*([KMG]?)i?B?", re.IGNORECASE | re.ASCII)
_WHOLE = re.compile(r"[+-]?\d+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_SIZE_FACTORS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


class _Bounded(reprlib.Repr):
    """A repr that reads no more of a value than it shows: a few items of a few levels, and an
    integer too long to print by its length. A spec of nested YAML aliases is a few hundred
    bytes whose whole repr is gigabytes; a 5,000-digit integer has no repr at all."""

    def __init__(self):
        super().__init__()
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 6
        self.maxstring = self.maxother = 80

    def repr_int(self, x, level):
        if x.bit_length() <= 256:  # 78 digits; past 4,300 repr() refuses
            return repr(x)
        digits = int(x.bit_length() * math.log10(2))  # the count, or one short of it
        digits += abs(x) >= 10**digits
        return f"<an integer of {digits:,} digits>"


def shown(value) -> str:
    """A refused value as an error message shows it: its repr, cut at 80 characters."""
    text = _Bounded().repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def shown_names(names, first: int = 5) -> str:
    """Refused names as an error message lists them: the first few, each shown, and a count."""
    names = list(names)
    more = f" and {len(names) - first:,} more" if len(names) > first else ""
    return ", ".join(shown(name) for name in names[:first]) + more


class ParamError(ValueError):
    """A parameter value is refused; the message names the parameter and says why."""


class ParseError(ValueError):
    """The tool's output was not understood; the message says what was missing or wrong."""


def parse_size(text: str) -> int:
    """'64M' -> 67108864; sizes are binary (K = 1024), as truncate and dd read them."""
    match = _SIZE.fullmatch(str(text).strip())
    if not match:
        raise ValueError(f"{shown(text)} is not a size (a number with K, M or G, e.g. 64M)")
    return int(match.group(1)) * _SIZE_FACTORS[match.group(2).upper()]


@dataclass(frozen=True)
class Param:
    """One typed parameter. kind: int, float, bool, size, choice, multichoice, text."""

    name: str
    kind: str
    default: Any
    help: str = ""
    choices: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    # text only: what the value must match in full (a path, a cipher name...)
    pattern: str = ""

    def clean(self, raw: Any) -> Any:
        """The value as the plan uses it, or ParamError. None means the default."""
        if raw is None:
            raw = self.default
        try:
            value = self._convert(raw)
        except OverflowError:  # float() of an integer of hundreds of digits
            raise ParamError(f"{self.name}: {shown(raw)} is not a finite number") from None
        except ValueError as exc:
            if "Exceeds the limit" in str(exc):  # int() of over 4,300 digits, in Python's words
                raise ParamError(f"{self.name}: a number of more than 4,300 digits") from None
            raise ParamError(f"{self.name}: {exc}") from None
        except TypeError as exc:
            raise ParamError(f"{self.name}: {exc}") from None
        number = parse_size(value) if self.kind == "size" else value
        if self.min is not None and isinstance(number, int | float) and number < self.min:
            raise ParamError(f"{self.name}: {shown(raw)} is below the minimum {self.min:g}")
        if self.max is not None and isinstance(number, int | float) and number > self.max:
            raise ParamError(f"{self.name}: {shown(raw)} is above the maximum {self.max:g}")
        return value

    def same_as(self, value: Any) -> Any:
        """What tells two clean values apart: sizes by their bytes ("16M" is "16384K")."""
        return parse_size(value) if self.kind == "size" else value

    def _convert(self, raw: Any) -> Any:
        if self.kind == "int":
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError(f"{shown(raw)} is not a whole number")
            if isinstance(raw, str) and not _WHOLE.fullmatch(raw.strip()):
                raise ValueError(f"{shown(raw)} is not a whole number")
            return int(raw.strip()) if isinstance(raw, str) else int(raw)
        if self.kind == "float":
            if isinstance(raw, bool) or (
                isinstance(raw, str) and not _DECIMAL.fullmatch(raw.strip())
            ):
                raise ValueError(f"{shown(raw)} is not a number")
            value = float(raw)
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"{shown(raw)} is not a finite number")
            return value
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            words = {
                "true": True,
                "on": True,
                "yes": True,
                "1": True,
                "false": False,
                "off": False,
                "no": False,
                "0": False,
            }
            if str(raw).strip().lower() not in words:
                raise ValueError(f"{shown(raw)} is not on or off")
            return words[str(raw).strip().lower()]
        if self.kind == "size":
            text = str(raw).strip()
            parse_size(text)  # refused as given: an upper-cased echo is not what was typed
            return text.upper()
        if self.kind == "choice":
            if str(raw) not in self.choices:
                raise ValueError(f"{shown(raw)} is not one of {', '.join(self.choices)}")
            return str(raw)
        if self.kind == "multichoice":
            values = raw.split(",") if isinstance(raw, str) else list(raw)
            values = [str(value).strip() for value in values if str(value).strip()]
            unknown = [value for value in values if value not in self.choices]
            if unknown or not values:
                raise ValueError(
                    f"{', '.join(unknown) or 'nothing'} is not among {', '.join(self.choices)}"
                )
            return values
        if self.kind == "text":
            # Text, or a number as a spec file writes it; a list's or a true's Python spelling
            # ("['a', 'b']", "True") is no one's text.
            if isinstance(raw, bool) or not isinstance(raw, str | int | float):
                raise ValueError(f"{shown(raw)} is not text (quote it in a spec file)")
            text = str(raw)
            if "\x00" in text:  # no command line can carry it: refuse it here, in words
                raise ValueError("a NUL character cannot be a parameter's value")
            if self.pattern and not re.fullmatch(self.pattern, text):
                raise ValueError(f"{shown(text)} is not allowed here ({self.help or self.pattern})")
            return text
        raise ValueError(f"unknown parameter kind {self.kind!r}")


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool
    label: str = ""
    # The tool may leave it out (iperf3 has no retransmits where the sender's OS counts none):
    # a run without it keeps its other values, and its details say why this one is missing.
    optional: bool = False

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


def repeat_param() -> Param:
    """A fixed piece of work's length_param: the work runs again within the trial until this
    many seconds have passed, so that a small size still makes a trial that repeats well.
    0 (once) by default: a campaign raises it to the benchmark's minimum trial length."""
    return Param(
        "min_seconds",
        "int",
        0,
        "repeat the work within the trial until this many seconds have passed (0: once)",
        min=0,
        max=600,
    )


@dataclass(frozen=True)
class Command:
    """One command on one end. argv is passed as it is (every element quoted on the way).

    stdin feeds a program's source or a file's content; sudo runs it as root (sudo -n).
    """

    on: Where
    argv: tuple[str, ...]
    timeout_s: float = 30
    sudo: bool = False
    stdin: bytes | None = None
    name: str = ""  # collect commands: the key of their output in parse()'s outputs
    shown: str = ""  # what a run's log and reason call it, where its program does not say

    def __post_init__(self):
        object.__setattr__(self, "argv", tuple(str(arg) for arg in self.argv))

    @property
    def program(self) -> str:
        """The command in a word for a reason ("sha1sum exited with 1"): shown if given, else
        its program, past env and its assignments; a `sh -c SCRIPT NAME` is called by its
        NAME ($0), as ps shows it."""
        if self.shown:
            return self.shown
        words = list(self.argv)
        if words[:1] == ["env"]:
            words = words[1:]
            while words and "=" in words[0]:
                words = words[1:]
        if words[:2] == ["sh", "-c"] and len(words) > 3:
            return words[3]
        return words[0] if words else ""


@dataclass(frozen=True)
class Plan:
    """What one trial runs, in this order:

    setup: each must succeed, or the trial fails (nothing measured) and teardown runs;
    servers: started detached (iperf3 -s, openvpn) before measure, stopped after it, always;
    measure: the timed command, run detached on its end while the sampler records telemetry;
      its stdout is outputs["measure"];
    collect: read after measure (counters, the server's own report): outputs[command.name];
    teardown: every one runs, also after a failure, a timeout or a cancel; errors are logged.
    """

    measure: Command
    setup: tuple[Command, ...] = ()
    servers: tuple[Command, ...] = ()
    collect: tuple[Command, ...] = ()
    teardown: tuple[Command, ...] = ()
    # Seconds to let servers come up before measure starts.
    settle_s: float = 0.5


@dataclass(frozen=True)
class Context:
    """What a plan may know about where it runs. Paths are the engine's, per trial.

    workdir: a fresh directory for this trial on the board, on a RAM disk where the board has
    one (/dev/shm); peer_workdir the same on the peer. Addresses are as each end sees the other.
    tunnel: for tunnel benchmarks, inner addresses and a port only this trial uses (from
    10.213.100.0-10.213.199.255, the project's own range), and an interface name.
    peer_user: the user the peer's commands run as (the worker's own on the controller, the
    SSH user on a board); board_user: the board's SSH user, whose throwaway sshd scp fetches
    from.
    """

    workdir: str
    board_address: str = ""
    peer_address: str = ""
    peer_workdir: str = ""
    peer_is_controller: bool = False
    peer_user: str = ""
    board_user: str = ""
    userland_bits: int | None = None
    tunnel: Mapping[str, str] = field(default_factory=dict)
    port: int = 5201  # a TCP/UDP port free for this trial's servers


@dataclass(frozen=True)
class Parsed:
    """values: metric name -> number (every metric of the benchmark, or ParseError).
    details: anything else worth keeping (tool version, retransmits, the tool's CPU figures)."""

    values: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Benchmark:
    name: str  # a slug, the key in specs and URLs
    title: str
    description: str
    # Bump when the command or the parser changes: results of different versions are
    # marked as such when compared.
    version: int
    metrics: tuple[Metric, ...]
    plan: Callable[[dict, Context], Plan]
    parse: Callable[[Mapping[str, str], dict], Parsed]
    params: tuple[Param, ...] = ()
    tools: tuple[str, ...] = ()  # commands needed on the board; "7zz|7z": either will do
    peer_tools: tuple[str, ...] = ()  # and on the peer
    packages: tuple[str, ...] = ()  # the Debian packages that provide them
    needs_peer: bool = False
    repetitions: int = 3
    timeout_s: float = 120  # of the measuring command
    typical_s: float = 10  # a trial's usual length with default parameters, for estimates
    category: str = ""
    # How long a trial must measure to repeat well: below a few seconds, fixed costs (a
    # process's start, the clock's resolution, a simulated node's CPU quota period) make up
    # the noise (sbc-bench and the Phoronix Test Suite run a CPU test for seconds, too). A
    # campaign lengthens a shorter trial through length_param, a parameter in seconds: the
    # run time of a timed tool, or how long a fixed piece of work is repeated within the
    # trial. A trial that still measures less than noise_floor_s is suspect.
    min_trial_s: float = 3.0
    noise_floor_s: float = 1.0
    length_param: str = ""

    def lengthened(self, params: dict, min_trial_s: float | None = None) -> tuple[dict, str]:
        """params with length_param raised to the minimum trial length (the benchmark's own,
        or min_trial_s), and what was changed in words ("" if nothing was)."""
        minimum = self.min_trial_s if min_trial_s is None else min_trial_s
        asked = params.get(self.length_param)
        if not self.length_param or asked is None or asked >= minimum:
            return params, ""
        param = next(param for param in self.params if param.name == self.length_param)
        longer = math.ceil(minimum) if param.kind == "int" else float(minimum)
        if param.name == "min_seconds":
            words = f"{self.name}: its work is repeated within each trial until {longer:g} s"
        else:
            words = f"{self.name}: {self.length_param} {asked:g} raised to {longer:g} s"
        return {**params, self.length_param: longer}, f"{words}, its minimum trial length"

    def clean_params(self, raw: Mapping[str, Any] | None) -> dict:
        """Every parameter, validated, defaults filled in; ParamError for an unknown name."""
        raw = dict(raw or {})
        known = {param.name for param in self.params}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ParamError(
                f"{self.name} has no parameter {shown_names(unknown)} "
                f"(it has: {', '.join(sorted(known)) or 'none'})"
            )
        return {param.name: param.clean(raw.get(param.name)) for param in self.params}

    def too_short(self, measure_s: float) -> str:
        """Why a trial that measured for measure_s cannot be trusted to repeat; "" if it can."""
        if measure_s >= self.noise_floor_s:
            return ""
        return (
            f"the trial measured for {measure_s:.2f} s, under {self.name}'s noise floor of "
            f"{self.noise_floor_s:g} s: fixed costs make up much of its figure (run it longer)"
        )

    def metric(self, name: str) -> Metric:
        return next(metric for metric in self.metrics if metric.name == name)


class UnknownBenchmark(LookupError):
    """No benchmark of that name, or one that cannot be used (the message says which)."""
