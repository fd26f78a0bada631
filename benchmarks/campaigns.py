"""A campaign from its spec: checked, expanded into runs, estimated, queued; cancel and retry.

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
import statistics
import time
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.template.defaultfilters import pluralize
from django.utils import timezone

from benchmarks import catalog, once
from benchmarks.catalog.spec import Benchmark, Param, ParamError, shown, shown_names
from benchmarks.models import CONTROLLER, Campaign, Lane, Run, hidden_character
from devices import configtxt, presets, work
from devices.configtxt.findings import ERROR
from devices.configtxt.rules import FAMILY_NAMES
from devices.models import Application, Board, Preset

AS_IS = "as-is"
MAX_RUNS = 20_000  # per campaign: beyond this it is surely a typo
MAX_REPETITIONS = 1_000
# A spec's boards, presets or benchmarks: more than a lab's whole bench, refused before any
# query (150,000 board names took 2.4 s to look up only to be refused).
MAX_LISTED = 500
GROUP_GAP = 100_000  # sequence numbers per preset group in a lane
REPETITION_GAP = 10  # between runs in a group: room for a suspect run's re-run right after
RETRY_BATCH = 500  # runs a retry copies in one transaction (a fraction of a second's lock)
# Between two batches: SQLite's busy handler polls a waiting writer's lock every 100 ms once it
# has waited a while, and would find batch after batch holding it.
RETRY_PAUSE_S = 0.1
# What a retry copies from the run it retries: the trial itself, where it runs.
_RETRIED_FIELDS = ("lane_id", "board_id", "preset_version_id", "benchmark", "definition_version",
                   "params", "repetition")  # fmt: skip
APPLY_ESTIMATE_S = 90  # one application (trial boot, verify) when the board has no history
RUN_OVERHEAD_S = 2  # connect, quiet check, sampler, clean-up
MAX_QUIET_WAIT_S = 600
DEFAULT_QUIET = {"load_below": 2.0, "cpu_below_pct": 25.0, "cool_below_c": None, "deadline_s": 30}
MAX_MIN_TRIAL_S = 600


class SpecError(ValueError):
    """The spec is refused; the message says what to change."""


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
    known = {"name", "boards", "presets", "benchmarks", "repetitions", "peer", "order", "seed",
             "quiet", "rerun_suspect", "apply_mode", "question", "keep", "min_trial_s"}  # fmt: skip
    unknown = sorted(set(spec) - known)
    if unknown:
        raise SpecError(
            f"unknown key {shown_names(unknown)} (the keys are: {', '.join(sorted(known))})"
        )
    name = _text(spec.get("name"), "name", 120)
    boards = _boards(spec.get("boards"))
    min_trial_s = _min_trial_s(spec.get("min_trial_s"))
    items = _items(spec.get("benchmarks"), min_trial_s)
    peer = _peer(spec.get("peer"), boards, items)
    versions = _versions(spec.get("presets", [AS_IS]))
    for board in boards:
        _refuse_unsuited(board, [version for version in versions if version])
    repetitions = _repetitions(spec.get("repetitions"), items)
    order = spec.get("order", Campaign.Order.GROUPED)
    if order not in Campaign.Order.values:
        raise SpecError(
            f"order must be one of {', '.join(Campaign.Order.values)}, not {shown(order)}"
        )
    seed = spec.get("seed", random.SystemRandom().randrange(1, 2**31))
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
        raise SpecError("seed must be a whole number from 0 to 2147483647")
    apply_mode = spec.get("apply_mode", Application.Mode.TRIAL)
    if apply_mode not in Application.Mode.values:
        raise SpecError(f"apply_mode must be trial or direct, not {shown(apply_mode)}")
    quiet = _quiet(spec.get("quiet", True))
    keep = spec.get("keep", False)
    if not isinstance(keep, bool):
        raise SpecError("keep must be true (leave the last preset on the boards) or false")
    total = len(boards) * len(versions) * len(items) * repetitions.minimum
    if total > MAX_RUNS:
        raise SpecError(
            f"this campaign would make {total:,} runs; at most {MAX_RUNS:,} are allowed"
        )
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
        "rerun_suspect": bool(spec.get("rerun_suspect", False)),
        "apply_mode": apply_mode,
        "keep": keep,
    }
    if min_trial_s is not None:
        accepted["min_trial_s"] = min_trial_s
    if spec.get("question") is not None:
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
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not 0 <= value <= MAX_MIN_TRIAL_S):  # fmt: skip
        raise SpecError(
            f"min_trial_s is a number of seconds from 0 (run the parameters as given) to "
            f"{MAX_MIN_TRIAL_S}, not {shown(value)}"
        )
    return float(value)


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
    values = {key: _distinct(declared.get(key), [params.get(key), *others])
              for key, others in vary.items()}  # fmt: skip
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
    from benchmarks import questions  # its templates build specs with this module

    if not isinstance(value, str) or value not in questions.QUESTIONS:  # a list is unhashable
        raise SpecError(
            f"question must be one of {', '.join(questions.QUESTIONS)}, not {shown(value)}"
        )
    refusal = questions.QUESTIONS[value].refusal(boards)
    if refusal:
        raise SpecError(refusal)
    return value


def _peer(value, boards: list[Board], items: list[Item]):
    needing = [item.benchmark.name for item in items if item.benchmark.needs_peer]
    if value in (None, ""):
        if needing:
            raise SpecError(f"{', '.join(needing)} needs a peer: give \"peer\": \"controller\" "
                            "or the name of another board")  # fmt: skip
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
            version = preset.versions.filter(number=int(number) if number.isdigit() else -1)
            version = version.first()
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


def _count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPETITIONS:
        raise SpecError(f"{what} must be a whole number from 1 to {MAX_REPETITIONS}")
    return value


def _repetitions(value, items: list[Item]) -> Repetitions:
    if value is None:
        count = max(item.benchmark.repetitions for item in items)
        return Repetitions(count, count, None, None)
    if not isinstance(value, dict):
        count = _count(value, "repetitions")
        return Repetitions(count, count, None, None)
    unknown = set(value) - {"min", "max", "target_pct", "resolve_pct", "budget_s"}
    if unknown:
        raise SpecError(f"adaptive repetitions take min, max, target_pct, resolve_pct and "
                        f"budget_s, not {', '.join(sorted(unknown))}")  # fmt: skip
    minimum = _count(value.get("min", 3), "repetitions min")
    maximum = _count(value.get("max", 10), "repetitions max")
    if minimum < 2 or maximum < minimum:
        raise SpecError("adaptive repetitions need 2 <= min <= max (a CI needs two trials)")
    resolve = value.get("resolve_pct")
    # target_pct's default only where nothing else says when to stop
    target = value.get("target_pct", 2.0 if resolve is None else None)
    budget = value.get("budget_s")
    if target is not None and (not _finite_number(target) or not 0 < target <= 100):
        raise SpecError("target_pct is the CI's half-width in % of the mean: from 0 to 100")
    if resolve is not None and (not _finite_number(resolve) or not 0 < resolve <= 100):
        raise SpecError("resolve_pct is the change, in % of the mean, to have the trials to see: "
                        "from 0 to 100")  # fmt: skip
    if budget is not None and (not _finite_number(budget) or budget <= 0):
        raise SpecError("budget_s is a number of seconds above 0")
    return Repetitions(
        minimum, maximum, None if target is None else float(target),
        float(budget) if budget else None, None if resolve is None else float(resolve),
    )  # fmt: skip


def _repetitions_spec(repetitions: Repetitions):
    if not repetitions.adaptive:
        return repetitions.minimum
    spec = {"min": repetitions.minimum, "max": repetitions.maximum,
            "target_pct": repetitions.target_pct, "budget_s": repetitions.budget_s}  # fmt: skip
    if repetitions.resolve_pct is not None:
        spec["resolve_pct"] = repetitions.resolve_pct
    return spec


def _quiet(value):
    if value is False:
        return False
    if value is True or value is None:
        return dict(DEFAULT_QUIET)
    if not isinstance(value, dict) or set(value) - set(DEFAULT_QUIET):
        raise SpecError(f"quiet is false, or an object with {', '.join(DEFAULT_QUIET)}")
    quiet = {**DEFAULT_QUIET, **value}
    for key, number in quiet.items():
        if number is None and key == "cool_below_c":
            continue
        if not _finite_number(number) or number < 0:
            raise SpecError(f"quiet {key} must be a number of 0 or more")
    if quiet["deadline_s"] > MAX_QUIET_WAIT_S:
        raise SpecError(f"quiet deadline_s is at most {MAX_QUIET_WAIT_S} s")
    return quiet


def _finite_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


# ---- expansion --------------------------------------------------------------------------


def group_order(checked: Checked, rng: random.Random) -> list[tuple[int, int]]:
    """(item index, repetition) in the order one preset group runs them, for a campaign of
    one preset (with several, each round is a group of one repetition: preset_rounds)."""
    pairs = [
        (i, r) for i in range(len(checked.items)) for r in range(1, checked.repetitions.minimum + 1)
    ]
    if checked.order == Campaign.Order.INTERLEAVED:
        return sorted(pairs, key=lambda pair: (pair[1], pair[0]))
    if checked.order == Campaign.Order.SHUFFLED:
        rng.shuffle(pairs)
    return pairs


def preset_rounds(count: int, repetitions: int, board_index: int = 0) -> list[list[int]]:
    """The order of a board's preset groups, counterbalanced: one round per repetition, each
    round running every preset once, and every other round reversed (A B | B A | A B), so that
    a drift of the board over time (warming up, filling up, wearing) weighs on every preset
    alike instead of on whichever ran last. Every other board starts reversed, so that across
    boards each preset runs first as often as the others. Where two rounds meet, the preset
    stays: k presets and n rounds cost 1 + n * (k - 1) applications, not k."""
    forward = list(range(count))
    rounds = []
    for number in range(repetitions):
        reverse = (number + board_index) % 2 == 1
        rounds.append(forward[::-1] if reverse else forward)
    return rounds


def expand(checked: Checked, campaign: Campaign, lanes: dict[int, Lane]) -> list[Run]:
    rng = random.Random(checked.seed)  # noqa: S311 - an experiment's order, not a secret
    runs = []
    for board_index, board in enumerate(checked.boards):
        for group, (version, pairs) in enumerate(_groups(checked, rng, board_index)):
            for position, (index, repetition) in enumerate(pairs):
                item = checked.items[index]
                runs.append(Run(
                    campaign=campaign, lane=lanes[board.pk], board=board,
                    sequence=group * GROUP_GAP + position * REPETITION_GAP,
                    preset_version=version, benchmark=item.benchmark.name,
                    definition_version=item.benchmark.version, params=item.params,
                    repetition=repetition,
                ))  # fmt: skip
    return runs


def _groups(checked: Checked, rng: random.Random, board_index: int):
    """(preset version, its (item index, repetition) pairs) for each group of a board's lane,
    in the order they run. One preset: one group in the spec's order. Several: one group per
    preset and round (preset_rounds), each running every benchmark once, in the spec's order
    or shuffled anew."""
    if len(checked.versions) == 1:
        return [(checked.versions[0], group_order(checked, rng))]
    groups = []
    rounds = preset_rounds(len(checked.versions), checked.repetitions.minimum, board_index)
    for repetition, presets_in_round in enumerate(rounds, start=1):
        for version_index in presets_in_round:
            pairs = [(index, repetition) for index in range(len(checked.items))]
            if checked.order == Campaign.Order.SHUFFLED:
                rng.shuffle(pairs)
            groups.append((checked.versions[version_index], pairs))
    return groups


def warnings(checked: Checked) -> list[str]:
    """What to know before starting, in words: a board whose "as is" is not its firmware's
    defaults (the baseline then is whatever it runs), and a preset that sets a clock below a
    board's own default (an "overclock" that is an underclock there)."""
    found = []
    for board in checked.boards:
        busy = Lane.objects.filter(board=board, state__in=Lane.UNFINISHED).select_related(
            "campaign"
        )
        for lane in busy:
            found.append(
                f"{board.name} is in “{lane.campaign.name}”, which has not ended: their runs "
                "take turns on it, so each campaign's “as is” and presets meet the other's "
                "changes. Start this one after it, for numbers of one campaign at a time."
            )
        if None in checked.versions:
            at_stock, words = presets.is_at_stock(board)
            if not at_stock:
                found.append(
                    f"{words} Its “as is” is what it runs now; add the stock preset to compare "
                    "with the firmware's defaults."
                )
        for version in checked.versions:
            if version is not None:
                found += [f"{version} on {board.name}: {words}"
                          for words in presets.underclocks_on(board, version)]  # fmt: skip
    return found


def estimate_s(checked: Checked) -> float:
    """Seconds the whole campaign should take: lanes run in parallel, so the longest lane."""
    per_board = []
    for board in checked.boards:
        applying = _apply_estimate(board) * _applications(checked)
        trials = (
            sum(_trial_estimate(item) + RUN_OVERHEAD_S for item in checked.items)
            * checked.repetitions.minimum
            * len(checked.versions)
        )
        per_board.append(applying + trials)
    return max(per_board)


def _applications(checked: Checked) -> int:
    """Applications a lane makes: one each time its preset changes (back to the state before
    the campaign, for "as is", included), and one at its end to leave the board as it was."""
    rounds = preset_rounds(len(checked.versions), checked.repetitions.minimum)
    before = object()  # the board's state before the campaign
    now, count = before, 0
    for index in [index for presets_in_round in rounds for index in presets_in_round]:
        wanted = checked.versions[index] or before
        count += wanted is not now
        now = wanted
    return count + (now is not before and not checked.spec.get("keep"))


def _trial_estimate(item: Item) -> float:
    """The median of the last runs of this benchmark definition, else its typical length."""
    recent = list(
        Run.objects.filter(
            benchmark=item.benchmark.name,
            definition_version=item.benchmark.version,
            params=item.params,
            state=Run.State.DONE,
        )
        .order_by("-finished")
        .values_list("measure_s", flat=True)[:20]
    )
    recent = [seconds for seconds in recent if seconds]
    return statistics.median(recent) if recent else item.benchmark.typical_s


def _apply_estimate(board: Board) -> float:
    recent = [
        (application.finished - application.started).total_seconds()
        for application in board.applications.filter(
            state=Application.State.VERIFIED, started__isnull=False, finished__isnull=False
        ).order_by("-finished")[:5]
    ]
    return statistics.median(recent) if recent else APPLY_ESTIMATE_S


def start(spec, user=None) -> Campaign:
    """Check, write the campaign with its lanes and runs, and queue every lane after commit."""
    checked = check(spec)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=checked.spec["name"], spec=checked.spec, order=checked.order,
            seed=checked.seed, created_by=user, estimated_s=estimate_s(checked),
        )  # fmt: skip
        peer = checked.peer
        lanes = {}
        for board in checked.boards:
            lanes[board.pk] = Lane.objects.create(
                campaign=campaign, board=board,
                peer_board=peer if isinstance(peer, Board) else None,
                peer_is_controller=peer == CONTROLLER,
            )  # fmt: skip
        Run.objects.bulk_create(expand(checked, campaign, lanes), batch_size=1000)
        for lane in lanes.values():
            work.queue(lane)
    return campaign


def start_once(spec, user) -> tuple[Campaign, bool]:
    """(start(spec), True), unless this user started this very spec (its seed included: the
    builder draws one with the form) a moment ago: then (that campaign, False)."""
    accepted = check(spec).spec
    return once.made_once(
        user, Campaign.objects.filter(created_by=user),
        lambda campaign: campaign.spec == accepted, lambda: start(spec, user),
    )  # fmt: skip


# ---- a person steps in ------------------------------------------------------------------


def cancel_run(run: Run, user=None) -> bool:
    """A queued run ends at once; a running one is stopped by its job (remote processes too).
    False when the run had ended, or was being stopped already: nothing changed."""
    who = f" by {user}" if user else ""
    now = timezone.now()
    if Run.objects.filter(pk=run.pk, state=Run.State.QUEUED).update(
        state=Run.State.CANCELLED, reason=f"cancelled{who} before it started", finished=now
    ):
        finish_if_done(run.campaign_id)
        return True
    running = Run.objects.filter(pk=run.pk, state=Run.State.RUNNING, cancel_requested=False)
    return bool(running.update(cancel_requested=True))


def cancel(campaign: Campaign, user=None) -> int | None:
    """Its queued runs end at once, its running ones are stopped by their jobs: how many runs
    that was. None when the campaign was not running any more (cancelled already, or finished):
    nothing changed (why_not_cancelled says why)."""
    who = f" by {user}" if user else ""
    now = timezone.now()
    with transaction.atomic():
        # First, so that of two cancels at once only one finds it running; and it locks the
        # campaign's row, under which adaptive trials are added (adaptive._add).
        if not Campaign.objects.filter(pk=campaign.pk, state=Campaign.State.RUNNING).update(
            state=Campaign.State.CANCELLED
        ):
            return None
        queued = campaign.runs.filter(state=Run.State.QUEUED).update(
            state=Run.State.CANCELLED, reason=f"the campaign was cancelled{who}", finished=now
        )
        # A run whose own cancel came first is being stopped already: not counted again.
        running = campaign.runs.filter(state=Run.State.RUNNING, cancel_requested=False).update(
            cancel_requested=True
        )
    finish_if_done(campaign.pk)
    return queued + running


def why_not_cancelled(campaign: Campaign) -> str:
    """What to tell whoever cancels a campaign that cancel() found no longer running."""
    stopping = campaign.runs.filter(state=Run.State.RUNNING).count()
    if stopping:
        return (
            f"{campaign.name} is already being cancelled: "
            f"{stopping} run{pluralize(stopping)} {pluralize(stopping, 'is,are')} still stopping."
        )
    state = Campaign.objects.values_list("state", flat=True).get(pk=campaign.pk)
    if state == Campaign.State.CANCELLED:
        return f"{campaign.name} was already cancelled and has ended: there is nothing to cancel."
    return f"{campaign.name} had already finished: there is nothing to cancel."


def why_run_not_cancelled(run: Run) -> str:
    """What to tell whoever cancels a run that cancel_run() left as it was."""
    run.refresh_from_db(fields=["state"])
    if run.state == Run.State.RUNNING:
        return f"{run} is already being stopped."
    return f"{run} has already ended ({run.get_state_display()}): there is nothing to cancel."


def retry_failed(campaign: Campaign) -> int:
    """A new queued run for each failed, cancelled or skipped one (kept as they are), at the
    end of its lane; lanes that had finished start again. 0 when none is left to retry:
    nothing changed, a finished campaign stays finished.

    RETRY_BATCH runs a transaction, each in a few statements (bulk_create): on SQLite a
    transaction holds the database's only write lock, and a retry of thousands of runs in one,
    a query or two per run, kept every other lane's writes waiting past the lock's timeout.
    Each batch re-reads its runs, so a retry cut short is finished by the next one."""
    again = [Run.State.FAILED, Run.State.CANCELLED, Run.State.SKIPPED]
    pending = list(
        campaign.runs.filter(state__in=again, retries__isnull=True)
        .order_by("lane", "sequence")
        .values_list("pk", flat=True)
    )
    copied = 0
    for start in range(0, len(pending), RETRY_BATCH):
        if start:
            time.sleep(RETRY_PAUSE_S)
        copied += _retry_batch(campaign, pending[start : start + RETRY_BATCH])
    return copied


def _retry_batch(campaign: Campaign, run_pks: list[int]) -> int:
    """Retry those of run_pks that no retry has copied yet (another post of the button may
    have); queue their lanes again if they had ended."""
    with transaction.atomic():
        # One batch at a time per campaign, so two retries at once cannot both copy a run.
        list(Campaign.objects.select_for_update().filter(pk=campaign.pk).values("pk"))
        failed = list(
            Run.objects.filter(pk__in=run_pks, retries__isnull=True)
            .order_by("lane", "sequence")
            .values("pk", *_RETRIED_FIELDS)
        )
        if not failed:
            return 0
        lanes = {run["lane_id"] for run in failed}
        last = dict(
            Run.objects.filter(lane__in=lanes)
            .values("lane")
            .annotate(last=Max("sequence"))
            .values_list("lane", "last")
        )
        retries = []
        for run in failed:
            last[run["lane_id"]] += REPETITION_GAP
            fields = {name: run[name] for name in _RETRIED_FIELDS}
            retries.append(Run(campaign=campaign, sequence=last[run["lane_id"]],
                               retry_of_id=run["pk"], **fields))  # fmt: skip
        Run.objects.bulk_create(retries)
        Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.RUNNING, finished=None)
        # A lane may have run the batch before and ended again: each batch looks anew.
        ended = list(
            Lane.objects.filter(pk__in=lanes)
            .exclude(state__in=Lane.UNFINISHED)
            .select_related("board")
        )
        Lane.objects.filter(pk__in=[lane.pk for lane in ended]).update(
            state=Lane.State.QUEUED, finished=None, reason="", job_id=""
        )
        for lane in ended:
            work.queue(lane)
    return len(failed)


def finish_if_done(campaign_id: int) -> None:
    """A campaign is finished once no run is queued or running."""
    if Run.objects.filter(campaign_id=campaign_id, state__in=Run.UNFINISHED).exists():
        return
    Campaign.objects.filter(pk=campaign_id, finished__isnull=True).update(finished=timezone.now())
    Campaign.objects.filter(pk=campaign_id, state=Campaign.State.RUNNING).update(
        state=Campaign.State.FINISHED
    )
