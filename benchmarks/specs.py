"""A campaign's spec, checked: what the builder page, the API and `manage.py campaign start` give.

The spec is what the builder page posts and what `manage.py campaign start` reads:

    {"name": "...", "boards": ["sim-node1"], "presets": ["Pi 4 mild overclock@1", "as-is"],
     "benchmarks": [{"name": "sha1sum", "params": {"size": "64M"}}], "repetitions": 3,
     "peer": "controller"}

with optional "order" (grouped, interleaved, shuffled), "seed", "repetitions" as
{"min": 3, "max": 10, "target_pct": 2, "budget_s": 600} (adaptive; "resolve_pct" instead of
or with target_pct: until a group has the trials a change of that size needs at its noise),
"quiet"
({"load_below", "cpu_below_pct", "cool_below_c", "deadline_s"}, or false), "rerun_suspect",
"apply_mode" (trial or direct), "keep" (true: leave each board on the last preset applied; by
default it gets back the state it had before the campaign), "question" (the
benchmarks.questions template it was made from, whose answer page reads it), "min_trial_s"
(seconds: each trial is lengthened to at least this; by default to its benchmark's own minimum,
and 0 runs the parameters as given). Anything wrong is a SpecError naming it; nothing is
written.
"""

import itertools
import math
import random
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from benchmarks import catalog
from benchmarks.catalog.spec import Benchmark, Param, ParamError, shown, shown_names
from benchmarks.models import CONTROLLER, Campaign, hidden_character
from devices import configtxt, presets
from devices.configtxt.findings import ERROR
from devices.configtxt.rules import FAMILY_NAMES
from devices.models import Application, Board, Preset

AS_IS = "as-is"
MAX_RUNS = 20_000  # per campaign: beyond this it is surely a typo
MAX_REPETITIONS = 1_000


# A spec's boards, presets or benchmarks: more than a lab's whole bench, refused before any
# query (150,000 board names took 2.4 s to look up only to be refused).
MAX_LISTED = 500


MAX_QUIET_WAIT_S = 600
DEFAULT_QUIET = {"load_below": 2.0, "cpu_below_pct": 25.0, "cool_below_c": None, "deadline_s": 30}
# A load average, a percentage, a temperature (a Pi throttles at 85 °C) and the wait itself.
QUIET_LIMITS = {
    "load_below": 1000,
    "cpu_below_pct": 100,
    "cool_below_c": 150,
    "deadline_s": MAX_QUIET_WAIT_S,
}
MAX_BUDGET_S = 30 * 24 * 3600  # an adaptive campaign's time budget: a month
MAX_MIN_TRIAL_S = 600


def _encodable(text: str) -> bool:
    """Text the database can store: "\ud800" (JSON allows it escaped) is half a character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class SpecError(ValueError):
    """The spec is refused: the message says what to change, field which key it is about
    ("quiet.load_below"; "" for the spec as a whole)."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.field = field


@contextmanager
def _about(field: str):
    """A refusal raised inside names this field, unless it named a more precise one."""
    try:
        yield
    except SpecError as exc:
        exc.field = exc.field or field
        raise


# A spec is small: lists of names, a few objects, a handful of numbers. The deepest one an
# engine runs is 5 levels (benchmarks, one, its params, a multichoice value); one deeper or
# larger is refused before any of it is read further, by the API and `campaign start` alike.
MAX_DEPTH = 8
MAX_VALUES = 200_000  # every list item, object key and value: far above MAX_LISTED names
MAX_TEXT = 10_000  # characters of any one string


def check_shape(spec) -> None:
    """SpecError unless the spec is at most MAX_DEPTH deep, holds at most MAX_VALUES values and
    no string longer than MAX_TEXT; iterative, so no nesting reaches Python's recursion limit."""
    counted, pending = 0, [(spec, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise SpecError(f"the spec is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            children = value
        else:
            if isinstance(value, str) and len(value) > MAX_TEXT:
                raise SpecError(
                    f"the spec holds a text of {len(value):,} characters; at most {MAX_TEXT:,}"
                )
            if isinstance(value, str) and not _encodable(value):
                raise SpecError("the spec holds a lone surrogate (U+D800 to U+DFFF): not text")
            continue
        counted += len(children)
        if counted > MAX_VALUES:
            raise SpecError(f"the spec holds more than {MAX_VALUES:,} values")
        pending.extend((child, depth + 1) for child in children)


# The classic questions a spec may name, each with what it says of boards it cannot answer
# for ("" when it can): benchmarks.questions registers them when the app is ready.
QUESTION_REFUSALS: dict[str, Callable[[list[Board]], str]] = {}


@dataclass(frozen=True)
class Repetitions:
    minimum: int
    maximum: int
    target_pct: float | None  # both None: a fixed count (minimum == maximum)
    budget_s: float | None
    resolve_pct: float | None = None

    @property
    def adaptive(self) -> bool:
        return self.target_pct is not None or self.resolve_pct is not None


@dataclass(frozen=True)
class Item:
    benchmark: Benchmark
    params: dict  # what its runs run: the spec's, lengthened to the minimum trial length
    asked: dict  # what the spec gave, checked
    lengthened: str = ""  # what lengthening changed, in words


@dataclass(frozen=True)
class Checked:
    """A spec that passed every check, with the objects it names."""

    spec: dict
    boards: list[Board]
    peer: Board | str | None  # a board, CONTROLLER, or None
    versions: list  # PresetVersion or None (as the board is)
    items: list[Item]
    repetitions: Repetitions
    order: str
    seed: int


def check(spec) -> Checked:
    if not isinstance(spec, dict):
        raise SpecError("a campaign spec is a JSON object (or a YAML mapping)")
    check_shape(spec)
    known = {
        "name",
        "boards",
        "presets",
        "benchmarks",
        "repetitions",
        "peer",
        "order",
        "seed",
        "quiet",
        "rerun_suspect",
        "apply_mode",
        "question",
        "keep",
        "min_trial_s",
    }
    if "schedule" in spec:  # benchmarks.schedules splits it off before a start checks the rest
        raise SpecError(
            'a spec with a "schedule" makes a schedule, not one campaign: '
            "`manage.py campaign start FILE` or the builder's When makes it (docs/watching.md)",
            "schedule",
        )
    unknown = sorted(set(spec) - known)
    if unknown:
        raise SpecError(
            f"unknown key {shown_names(unknown)} (the keys are: {', '.join(sorted(known))})"
        )
    with _about("name"):
        name = _text(spec.get("name"), "name", 120)
    with _about("boards"):
        boards = _boards(spec.get("boards"))
    min_trial_s = _min_trial_s(spec.get("min_trial_s"))
    with _about("benchmarks"):
        items = _items(spec.get("benchmarks"), min_trial_s)
    with _about("peer"):
        peer = _peer(spec.get("peer"), boards, items)
    with _about("presets"):
        versions = _versions(spec.get("presets", [AS_IS]))
        for board in boards:
            _refuse_unsuited(board, [version for version in versions if version])
    with _about("repetitions"):
        repetitions = _repetitions(spec.get("repetitions"), items)
    order = spec.get("order", Campaign.Order.GROUPED)
    if order not in Campaign.Order.values:
        raise SpecError(
            f"order must be one of {', '.join(Campaign.Order.values)}, not {shown(order)}",
            "order",
        )
    seed = _number(
        spec.get("seed", random.SystemRandom().randrange(1, 2**31)),
        "seed",
        0,
        2**31 - 1,
        whole=True,
    )
    apply_mode = spec.get("apply_mode", Application.Mode.TRIAL)
    if apply_mode not in Application.Mode.values:
        raise SpecError(
            f"apply_mode must be trial or direct, not {shown(apply_mode)}", "apply_mode"
        )
    quiet = _quiet(spec.get("quiet", True))
    keep = spec.get("keep", False)
    if not isinstance(keep, bool):
        raise SpecError(
            "keep must be true (leave the last preset on the boards) or false, not "
            f"{shown(keep)}{_yaml_word_hint(keep)}",
            "keep",
        )
    total = len(boards) * len(versions) * len(items) * repetitions.minimum
    if total > MAX_RUNS:
        raise SpecError(
            f"this campaign would make {total:,} runs; at most {MAX_RUNS:,} are allowed",
            "repetitions",
        )
    rerun_suspect = spec.get("rerun_suspect", False)
    if not isinstance(rerun_suspect, bool):
        words = (
            "rerun_suspect must be true (run suspect trials again) or false, not "
            f"{shown(rerun_suspect)}{_yaml_word_hint(rerun_suspect)}"
        )
        raise SpecError(words, "rerun_suspect")
    accepted = {
        "name": name,
        "boards": [board.name for board in boards],
        "presets": [_preset_label(v) if v else AS_IS for v in versions],
        "benchmarks": [{"name": i.benchmark.name, "params": i.asked} for i in items],
        "repetitions": _repetitions_spec(repetitions),
        "peer": peer.name if isinstance(peer, Board) else peer,
        "order": order,
        "seed": seed,
        "quiet": quiet,
        "rerun_suspect": rerun_suspect,
        "apply_mode": apply_mode,
        "keep": keep,
    }
    if min_trial_s is not None:
        accepted["min_trial_s"] = min_trial_s
    if spec.get("question") is not None:
        with _about("question"):
            accepted["question"] = _question(spec["question"], boards)
    return Checked(accepted, boards, peer, versions, items, repetitions, order, seed)


def _text(value, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{what} is missing: give the campaign a name")
    if len(value) > limit:
        raise SpecError(f"{what} is longer than {limit} characters")
    if found := hidden_character(value):
        raise SpecError(f"{what} holds a control or invisible character ({found}); remove it")
    return value.strip()


def _names(value, what: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SpecError(f"{what} must be a list of names, with at least one")
    _refuse_long(len(value), what)
    if len(set(value)) != len(value):
        raise SpecError(f"{what} names one twice")
    return value


def _refuse_long(count: int, what: str) -> None:
    if count > MAX_LISTED:
        raise SpecError(f"{what} lists {count:,}; at most {MAX_LISTED} are allowed")


def _boards(value) -> list[Board]:
    names = _names(value, "boards")
    found = {board.name: board for board in Board.objects.in_service().filter(name__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        raise SpecError(f"no board in service is named {shown_names(missing)}")
    unconfirmed = [name for name in names if not found[name].host_key]
    if unconfirmed:
        raise SpecError(f"{shown_names(unconfirmed)} has no confirmed host key yet")
    return [found[name] for name in names]


def _items(value, min_trial_s: float | None = None) -> list[Item]:
    if not isinstance(value, list) or not value:
        raise SpecError("benchmarks must be a list with at least one benchmark")
    _refuse_long(len(value), "benchmarks")
    items = []
    for entry in value:
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise SpecError('each benchmark is {"name": ..., "params": {...}}')
        if not isinstance(entry.get("params", {}), dict | None):
            raise SpecError(f"the params of {entry['name'][:60]!r} must be an object")
        try:
            benchmark = catalog.lookup(entry["name"])
            params = benchmark.clean_params(entry.get("params"))
        except (catalog.UnknownBenchmark, ParamError) as exc:
            raise SpecError(str(exc)) from None
        if any(item.benchmark == benchmark and item.asked == params for item in items):
            raise SpecError(f"{benchmark.name} is listed twice with the same parameters")
        runs_with, words = benchmark.lengthened(params, min_trial_s)
        items.append(Item(benchmark, runs_with, params, words))
    return items


def _min_trial_s(value) -> float | None:
    if value is None:
        return None
    meaning = "is a number of seconds from 0 (run the parameters as given) to"
    return float(_number(value, "min_trial_s", 0, MAX_MIN_TRIAL_S, meaning=meaning))


def lengthened(spec: dict) -> list[str]:
    """What a campaign's lengthening to the minimum trial length changed, in words (the
    campaign page's note); its runs keep the parameters they ran with."""
    notes = []
    entries = spec.get("benchmarks") if isinstance(spec, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        try:
            benchmark = catalog.lookup(entry["name"])
            params = benchmark.clean_params(entry.get("params"))
            notes.append(benchmark.lengthened(params, _min_trial_s(spec.get("min_trial_s")))[1])
        except (catalog.UnknownBenchmark, ParamError, SpecError, TypeError, KeyError):
            continue  # a spec stored before a check existed, or a benchmark since changed
    return [note for note in notes if note]


def swept(benchmark: Benchmark, params: dict, vary: dict[str, list], listed: int = 0) -> list[dict]:
    """A benchmark's spec entries: params, and one entry for each combination of the values
    vary gives some of them (the params' own value first), e.g. both iperf3 directions. A
    value given again in other words (16384K after 16M) is the same runs: it is left out.

    Refused, as check() refuses a long list, when they and the `listed` entries before them
    are more than a spec lists: counted before any is built (a few fields of a few dozen
    values each make millions, gigabytes of them)."""
    declared = {param.name: param for param in benchmark.params}
    values = {
        key: _distinct(declared.get(key), [params.get(key), *others])
        for key, others in vary.items()
    }
    _refuse_long(listed + math.prod(map(len, values.values())), "benchmarks")
    return [
        {"name": benchmark.name, "params": {**params, **dict(zip(values, chosen, strict=True))}}
        for chosen in itertools.product(*values.values())
    ]


def _distinct(param: Param | None, values: list) -> list:
    """values in order but None, each once as param tells values apart (Param.same_as)."""
    seen, found = set(), []
    for value in values:
        same = value if param is None or value is None else param.same_as(value)
        if value is not None and same not in seen:
            seen.add(same)
            found.append(value)
    return found


def _question(value, boards: list[Board]) -> str:
    if not isinstance(value, str) or value not in QUESTION_REFUSALS:  # a list is unhashable
        raise SpecError(
            f"question must be one of {', '.join(QUESTION_REFUSALS)}, not {shown(value)}"
        )
    refusal = QUESTION_REFUSALS[value](boards)
    if refusal:
        raise SpecError(refusal)
    return value


def _peer(value, boards: list[Board], items: list[Item]):
    needing = [item.benchmark.name for item in items if item.benchmark.needs_peer]
    if value in (None, ""):
        if needing:
            raise SpecError(
                f'{", ".join(needing)} needs a peer: give "peer": "controller" '
                "or the name of another board"
            )
        return None
    if value == CONTROLLER:
        return CONTROLLER
    peer = Board.objects.in_service().exclude(host_key="").filter(name=value).first()
    if peer is None:
        raise SpecError(f'the peer {shown(value)} is neither "controller" nor a registered board')
    if peer in boards:
        raise SpecError(f"{peer.name} cannot be its own peer: leave it out of boards")
    other_queues = sorted({board.queue for board in boards} - {peer.queue})
    if other_queues:
        raise SpecError(
            f"the peer {peer.name} is served by the worker queue {peer.queue!r}, some boards by "
            f"{', '.join(other_queues)}: a worker must reach both ends"
        )
    return peer


def _versions(value) -> list:
    names = _names(value, "presets")
    versions = []
    for name in names:
        if name == AS_IS:
            versions.append(None)
            continue
        preset_name, _, number = name.rpartition("@") if "@" in name else (name, "", "")
        preset = Preset.objects.filter(name=preset_name).first()
        if preset is None:
            raise SpecError(f'there is no preset {shown(preset_name)} (write "{AS_IS}" for none)')
        if number:
            # ASCII digits, and few: str.isdigit() takes "²", and int() refuses 5,000 digits.
            known = number.isascii() and number.isdecimal() and len(number) <= 9
            version = preset.versions.filter(number=int(number)).first() if known else None
            if version is None:
                raise SpecError(f"{shown(preset_name)} has no version {shown(number)}")
        else:
            version = preset.latest
        if version in versions:  # "X" and "X@2" may name one version
            raise SpecError(f"{_preset_label(version)} is listed twice in presets")
        versions.append(version)
    return versions


def _preset_label(version) -> str:
    return f"{version.preset.name}@{version.number}"


def _refuse_unsuited(board: Board, versions: list) -> None:
    """A preset version the board cannot take is refused now, by the check its application
    would make on the board (devices.presets.findings_on_board), for the model the board's
    latest probe found. A board never probed, or whose model did not decode, is let through:
    its application probes it and runs that check before it changes anything.

    A preset is checked, when it is saved, for the families it is meant for, and its warnings
    there are accepted by saving it. On a board of another family nobody has seen them, so
    they refuse it too (a Pi 4 clock above a Pi 3's PLL limit only warns)."""
    snapshot = board.latest_snapshot
    if snapshot is None or not snapshot.revision:
        return
    for version in versions:
        label = _preset_label(version)
        try:
            findings = presets.findings_on_board(version, snapshot.revision)
            family = configtxt.board_context(snapshot.revision).family
        except ValueError as exc:
            raise SpecError(f"{label} cannot be checked for {board.name}: {exc}") from None
        where = f"{board.name}, a {FAMILY_NAMES[family]}"
        errors = [finding.message for finding in findings if finding.severity == ERROR]
        if errors:
            raise SpecError(f"{label} cannot be applied to {where}: {_first(errors)}")
        meant_for = version.preset.families
        if meant_for and family not in meant_for and findings:
            raise SpecError(
                f"{label} is meant for {', '.join(FAMILY_NAMES.get(f, f) for f in meant_for)}, "
                f"not for {where}: {_first([finding.message for finding in findings])}. Add "
                f"{FAMILY_NAMES[family]} to the preset's families to run it there anyway."
            )


def _first(messages: list[str], shown: int = 3) -> str:
    more = f" (and {len(messages) - shown} more)" if len(messages) > shown else ""
    return "; ".join(messages[:shown]) + more


def _count(value, field: str) -> int:
    return _number(value, field, 1, MAX_REPETITIONS, whole=True)


def _repetitions(value, items: list[Item]) -> Repetitions:
    if value is None:
        count = max(item.benchmark.repetitions for item in items)
        return Repetitions(count, count, None, None)
    if not isinstance(value, dict):
        count = _count(value, "repetitions")
        return Repetitions(count, count, None, None)
    unknown = set(value) - {"min", "max", "target_pct", "resolve_pct", "budget_s"}
    if unknown:
        raise SpecError(
            f"adaptive repetitions take min, max, target_pct, resolve_pct and "
            f"budget_s, not {', '.join(sorted(unknown))}"
        )
    minimum = _count(value.get("min", 3), "repetitions.min")
    maximum = _count(value.get("max", 10), "repetitions.max")
    if minimum < 2 or maximum < minimum:
        raise SpecError("adaptive repetitions need 2 <= min <= max (a CI needs two trials)")
    resolve = value.get("resolve_pct")
    # target_pct's default only where nothing else says when to stop
    target = value.get("target_pct", 2.0 if resolve is None else None)
    budget = value.get("budget_s")
    percent = {"above": True}
    if target is not None:
        meaning = "is the CI's half-width in % of the mean: above 0, up to"
        _number(target, "repetitions.target_pct", 0, 100, meaning=meaning, **percent)
    if resolve is not None:
        meaning = "is the change, in % of the mean, to have the trials to see: above 0, up to"
        _number(resolve, "repetitions.resolve_pct", 0, 100, meaning=meaning, **percent)
    if budget is not None:
        meaning = "is a number of seconds above 0, up to"
        _number(budget, "repetitions.budget_s", 0, MAX_BUDGET_S, meaning=meaning, above=True)
    return Repetitions(
        minimum,
        maximum,
        None if target is None else float(target),
        float(budget) if budget else None,
        None if resolve is None else float(resolve),
    )


def _repetitions_spec(repetitions: Repetitions):
    if not repetitions.adaptive:
        return repetitions.minimum
    spec = {
        "min": repetitions.minimum,
        "max": repetitions.maximum,
        "target_pct": repetitions.target_pct,
        "budget_s": repetitions.budget_s,
    }
    if repetitions.resolve_pct is not None:
        spec["resolve_pct"] = repetitions.resolve_pct
    return spec


# A YAML spec's yes, no, on and off are text (benchmarks.spec_files), as in YAML 1.2 and JSON.
_YAML_11_BOOLS = {"yes", "no", "on", "off"}


def _yaml_word_hint(value) -> str:
    if isinstance(value, str) and value.lower() in _YAML_11_BOOLS:
        return f" (in a spec, {value} is text: write true or false)"
    return ""


def _quiet(value):
    if value is False:
        return False
    if value is True or value is None:
        return dict(DEFAULT_QUIET)
    if not isinstance(value, dict) or set(value) - set(DEFAULT_QUIET):
        raise SpecError(
            f"quiet is true, false, or an object with {', '.join(DEFAULT_QUIET)}, not "
            f"{shown(value)}{_yaml_word_hint(value)}",
            "quiet",
        )
    quiet = {**DEFAULT_QUIET, **value}
    for key, number in quiet.items():
        if number is None and key == "cool_below_c":
            continue
        _number(number, f"quiet.{key}", 0, QUIET_LIMITS[key])
    return quiet


def _number(value, field: str, low, high, *, whole=False, above=False, meaning=""):
    """The one reader of a spec's numbers: a JSON or YAML number (not true or false, not
    text), finite, from low (above it, if above) to high. An integer is compared as one, so a
    401-digit one is refused here rather than overflowing float() later."""
    if isinstance(value, bool):
        fits = False
    elif isinstance(value, int):
        fits = True
    else:
        fits = not whole and isinstance(value, float) and math.isfinite(value)
    if fits and (value > low if above else value >= low) and value <= high:
        return value
    if not meaning:
        kind = "a whole number" if whole else "a number"
        meaning = f"must be {kind} {'above' if above else 'from'} {low:g}{',' if above else ''} to"
    raise SpecError(f"{field} {meaning} {high:g}, not {shown(value)}", field)
