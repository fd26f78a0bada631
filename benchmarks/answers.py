"""The answer to a campaign's question (benchmarks.questions): one sentence with its confidence,
then, per metric, the comparison behind it.

The sentence follows the comparisons' verdicts (benchmarks.stats): a change is called one only
when its Holm-adjusted p (across the question's metrics) is below 0.05 and it is larger than the
minimum effect; anything else "showed no significant difference", except when both sides sat
at the link's ceiling: "cannot tell" then (benchmarks.limits). A comparison that leaving the
suspect trials out took away is named, with their reasons. Until every run has ended the
answer is "Not yet", and what the runs say so far is shown as provisional.
"""

import json
import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, replace

from django.db.models import Min, QuerySet
from django.urls import reverse
from django.utils.http import urlencode

from benchmarks import (
    catalog,
    charts,
    comparisons,
    effective,
    group_names,
    limits,
    network_link,
    progress,
    questions,
    simulated,
    stats,
)
from benchmarks.forms_comparisons import RUN_CODES_MAX
from benchmarks.models import CONTROLLER, Campaign, Measurement, Run
from benchmarks.results import value_text
from benchmarks.templatetags.campaign_tags import number
from devices import presets
from devices.models import Board, PresetVersion

A_LITTLE = 10  # % : a change below this is "a little"
CEILING = "at the ceiling"  # a row's outcome in the sentence: no difference, both at the ceiling
BOTH_AT_CEILING = "both at the link's ceiling"
CEILING_VERDICT = f"cannot tell: {BOTH_AT_CEILING}"  # the overview's verdict of such a row
LIMITS_RULE = {
    "at_ceiling": f"{limits.AT_CEILING * 100:.0f} %",
    "busy": f"{limits.BUSY_PCT:.0f} %",
    "half": f"{limits.HALF_CORE_PCT:.0f} %",
    "ratio": f"{limits.PEER_BUSIER_RATIO:g}",
}
MISSING_CIPHER = "is not available in this OpenVPN build"
TUNNEL_PROCESSES = ("openvpn", "sshd")


@dataclass
class Section:
    """One metric's comparison (or one factor's), with its charts and the builder's link."""

    title: str
    result: comparisons.Result
    figures: dict
    builder_query: dict  # the comparison builder's GET parameters that show it
    limited_by: dict[str, limits.Limit] = field(default_factory=dict)  # by group: what it hit

    @property
    def builder_url(self) -> str:
        """ "" when the comparison's runs are too many to name in the builder's address."""
        if not self.builder_query:
            return ""
        return f"{reverse('benchmarks:comparison_new')}?{urlencode(self.builder_query)}"


@dataclass
class Answer:
    question: questions.Question
    sentence: str
    provisional: bool  # some runs have not ended: so_far is what the others say
    ended: int
    total: int
    so_far: str = ""
    overview: comparisons.Overview | None = None
    sections: list[Section] = field(default_factory=list)
    cpu: list[dict] = field(default_factory=list)  # OpenVPN: CPU % of each process, as top
    link_mbit: int | None = None
    include_suspects: bool = False
    suspects: int = 0  # done runs the telemetry marked suspect
    # Overview rows judged "no difference" whose two sides both sat at the link's ceiling:
    # "cannot tell" instead, with these words.
    at_ceiling: list[comparisons.Row] = field(default_factory=list)
    ceiling_verdict: str = CEILING_VERDICT
    limits_rule: dict = field(default_factory=lambda: dict(LIMITS_RULE))  # for the page's hint
    # What ran, board by board: each preset (or "as is") with the configuration its runs
    # recorded (benchmarks.effective), and how the campaign ordered and left the boards.
    what_ran: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # a preset that underclocks a board
    simulated_note: str = ""  # benchmarks.simulated, when a board was simulated


def question_of(campaign: Campaign) -> questions.Question | None:
    """None unless the spec names a question's key: a spec is not always as check() left it
    (one saved by hand, or in the admin, may not even be an object)."""
    key = campaign.spec.get("question") if isinstance(campaign.spec, dict) else None
    return questions.QUESTIONS.get(key) if isinstance(key, str) else None


def answer(campaign: Campaign, include_suspects: bool = False) -> Answer:
    """Suspect trials are left out (and counted) unless included, as in a comparison."""
    question = question_of(campaign)
    if question is None:
        raise ValueError(f"{campaign.name} was not made from a question")
    state = progress.of(campaign)
    runs = comparisons.runs_selected([campaign.pk])
    found = Answer(question, "", campaign.finished is None, state.ended, state.total)
    found.link_mbit = _link_mbit(runs)
    found.include_suspects = include_suspects
    found.suspects = runs.filter(suspect=True).count()
    found.what_ran, found.warnings = _what_ran(campaign, runs)
    if runs.filter(snapshot__facts__simulated=True).exists():
        found.simulated_note = simulated.NOTE
    if question.recipe.factors:
        words = _fastest_setting(found, campaign, runs)
    else:
        words = _judged(found, campaign, runs)
    for index, section in enumerate(found.sections):  # ids of their own on the page
        section.figures = charts.figures(section.result, prefix=f"metric-{index}-")
    if found.provisional:
        found.sentence = f"Not yet: {state.ended} of {state.total} runs have ended."
        found.so_far = words
    else:
        found.sentence = words
    return found


def _what_ran(campaign: Campaign, runs: QuerySet) -> tuple[list[str], list[str]]:
    """Each board's presets with the configurations their runs ran, and the underclocks among
    them (a preset clock below the board's own default)."""
    ran = defaultdict(lambda: defaultdict(set))
    columns = ("board", "preset_version", "config_fingerprint")
    rows = runs.order_by().values(*columns).annotate(first=Min("id")).values_list(*columns, "first")
    first_runs = {}
    for board, version, fingerprint, first in rows:
        ran[board][version].add(fingerprint)
        first_runs[fingerprint] = min(first_runs.get(fingerprint, first), first)
    states = group_names.configurations(first_runs)
    words = {fp: effective.words(state) for fp, state in states.items()}
    versions = PresetVersion.objects.select_related("preset").in_bulk(
        {version for found in ran.values() for version in found} - {None}
    )
    boards = Board.objects.in_bulk(list(ran))
    lines, warnings = [], []
    for board in sorted(boards.values(), key=lambda board: board.name):
        for version_id, fingerprints in sorted(ran[board.pk].items(), key=lambda i: i[0] or 0):
            version = versions.get(version_id)
            label = str(version) if version else group_names.AS_IS
            configurations = sorted(words.get(fp) or "not recorded" for fp in fingerprints)
            lines.append(f"{board.name}, {label}: {' / '.join(configurations)}")
            if version is not None:
                warnings += [
                    f"{version} on {board.name}: {underclock}"
                    for underclock in presets.underclocks_on(board, version)
                ]
    for lane in campaign.lanes.select_related("board").exclude(left=""):
        lines.append(f"{lane.board.name} afterwards: {lane.left}")
    return lines, warnings


# ---- a factor against a baseline (the overclock, 64-bit) ----------------------------------


def _judged(found: Answer, campaign: Campaign, runs: QuerySet) -> str:
    recipe = found.question.recipe
    found.overview = comparisons.overview(
        runs, recipe.group_by, recipe.baseline, list(recipe.metrics), found.include_suspects
    )
    rows = found.overview.rows
    limited = {}  # by row: what each group's trials hit (network comparisons only)
    for row in rows:
        chosen = runs.filter(benchmark=row.benchmark, **_params_lookup(row.params))
        section = _section(
            found, row.label, chosen, campaign, row, recipe.group_by, recipe.baseline
        )
        if section:
            _judged_as_rows(section, [other for other in rows if _same_setting(other, row)])
            found.sections.append(section)
            if _network(section.result):
                limited[id(row)] = (section.result.baseline, section.limited_by)
            if row.comparison.outcome == stats.NO_DIFFERENCE and _both_at_ceiling(section, row):
                found.at_ceiling.append(row)
    dropped = []
    if found.suspects and not found.include_suspects:
        dropped = _left_out_by_suspects(runs, recipe)
    if not rows and found.suspects and not found.include_suspects:
        left_out = "; ".join(dropped) or (
            f"{found.suspects} suspect trial{'s' if found.suspects != 1 else ''} left out, and "
            "the others do not face each other"
        )
        return f"Cannot tell: {left_out}; include the suspect trials to see what they say."
    return _sentence(
        rows,
        recipe.treatment,
        found.link_mbit,
        dropped,
        found.at_ceiling,
        _limited_words(rows, found.at_ceiling, limited),
    )


def _both_at_ceiling(section: Section, row: comparisons.Row) -> bool:
    """Both sides of the row at the same link ceiling: no CPU could show a difference."""
    sides = [section.limited_by.get(key) for key in (section.result.baseline, row.group)]
    if not all(side is not None and side.kind == limits.LINK for side in sides):
        return False
    references = section.result.references
    return references is not None and (
        references.ceiling is not None
        or references.ceilings.get(section.result.baseline) == references.ceilings.get(row.group)
    )


def _left_out_by_suspects(runs: QuerySet, recipe: questions.Recipe) -> list[str]:
    """What leaving the suspect trials out took from the answer, in words: each benchmark
    setting whose comparison (a row of the overview with them) has no row without them, e.g.
    "lame: all 6 trials suspect (…); not compared". Never dropped silently."""
    metrics = list(recipe.metrics)
    every = comparisons.overview(runs, recipe.group_by, recipe.baseline, metrics, True)
    lost = defaultdict(set)  # (benchmark, its setting's parameters): the groups not compared
    for row in every.rows:
        setting = runs.filter(benchmark=row.benchmark, **_params_lookup(row.params))
        kept = comparisons.overview(
            setting, recipe.group_by, recipe.baseline, [(row.benchmark, row.metric)]
        )
        if not any(other.group == row.group for other in kept.rows):
            lost[row.benchmark, json.dumps(row.params, sort_keys=True)].add(row.group)
    words = []
    for (benchmark, params), groups in lost.items():
        setting = runs.filter(benchmark=benchmark, **_params_lookup(json.loads(params)))
        suspect = setting.filter(suspect=True)
        total, suspects = setting.count(), suspect.count()
        why = _suspect_summary(suspect.values_list("suspect_reasons", flat=True))
        name = _setting_words(benchmark, json.loads(params))
        if suspects == total:
            words.append(f"{name}: all {total} trials suspect ({why}); not compared")
        else:
            against = _listed(sorted(groups, key=comparisons.group_order))
            words.append(
                f"{name}: {suspects} of {total} trials suspect ({why}); {against} not compared "
                f"with {recipe.baseline}"
            )
    return words


def _setting_words(benchmark: str, params: dict) -> str:
    apart = ", ".join(f"{name} {value_text(value)}" for name, value in sorted(params.items()))
    return benchmark + (f" ({apart})" if apart else "")


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _suspect_summary(reason_lists) -> str:
    """The reasons of several suspect trials in a few words: the commonest two kinds (a reason
    with its numbers blanked), each number given as its range, e.g. "background CPU averaged
    29-45 % of the board (…)"."""
    kinds = defaultdict(list)
    for reasons in reason_lists:
        for reason in reasons or ():
            kinds[_NUMBER.sub("\0", reason)].append(reason)
    commonest = sorted(kinds.items(), key=lambda kind: -len(kind[1]))[:2]
    return "; ".join(_ranged(shape, reasons) for shape, reasons in commonest) or "no reason kept"


def _ranged(shape: str, reasons: list[str]) -> str:
    columns = zip(*(_NUMBER.findall(reason) for reason in reasons), strict=True)
    numbers = iter(
        f"{min(column, key=float)}-{max(column, key=float)}" if len(set(column)) > 1 else column[0]
        for column in columns
    )
    return re.sub("\0", lambda _: next(numbers), shape)


def _judged_as_rows(section: Section, rows: list[comparisons.Row]) -> None:
    """Give the section's groups the Holm-adjusted p of their summary rows (those of the
    section's benchmark, metric and parameters).

    compare() adjusts over the section's own groups only, so alone a metric's loss could be
    called one there while its row, adjusted across all the question's metrics, and the
    sentence said no difference. A group no row pairs with the baseline (no board model and
    preset version on both sides) keeps the section's own adjustment: the summary says
    nothing of it to contradict."""
    by_group = {row.group: row.comparison.p_adjusted for row in rows}
    section.result.comparisons = {
        group: replace(comparison, p_adjusted=by_group[group]) if group in by_group else comparison
        for group, comparison in section.result.comparisons.items()
    }


def _same_setting(row: comparisons.Row, other: comparisons.Row) -> bool:
    return (row.benchmark, row.metric, row.params) == (other.benchmark, other.metric, other.params)


def _params_lookup(params: dict) -> dict:
    return {f"params__{name}": value for name, value in params.items()}


def _sentence(
    rows: list[comparisons.Row],
    treatment: str,
    link_mbit: int | None,
    dropped: list[str] = (),
    at_ceiling: list[comparisons.Row] = (),
    limited: str = "",
) -> str:
    by_outcome = defaultdict(list)
    for row in rows:
        outcome = row.comparison.outcome
        capped = outcome == stats.NO_DIFFERENCE and _among(row, at_ceiling)
        by_outcome[CEILING if capped else outcome].append(row)
    wins, losses = by_outcome[stats.BETTER], by_outcome[stats.WORSE]
    same, unknown = by_outcome[stats.NO_DIFFERENCE], by_outcome[stats.CANNOT_TELL]
    small, capped = by_outcome[stats.BELOW_MIN_EFFECT], by_outcome[CEILING]
    confounded = [row for row in unknown if row.comparison.confounded]
    unknown = [row for row in unknown if not row.comparison.confounded]
    # "No" only where the interval rules out a change that counts; a difference not found
    # with an interval wide enough to hold one is too noisy to tell, not a "No".
    noisy = [row for row in same if not row.comparison.within_min_effect]
    same = [row for row in same if row.comparison.within_min_effect]
    if not rows:
        return "Cannot tell: no metric of the question was measured on both sides."
    if wins or losses:
        if wins and losses:
            lead = "Partly"
        elif wins:
            little = all(abs(row.comparison.percent_change or 0) < A_LITTLE for row in wins)
            lead = "Yes, a little" if little else "Yes"
        else:
            lead = "No, the opposite"
        changes = _listed([_change_words(row) for row in wins + losses])
        parts = [f"{lead}: {treatment} made {changes}"]
        if same:
            parts.append(f"{_listed([row.label for row in same])} showed no significant difference")
    elif same:
        parts = [
            f"No: {_listed([row.label for row in same])} showed no significant difference "
            f"with {treatment}"
        ]
    elif noisy:
        parts = [f"Cannot tell: {_noisy_words(noisy)}"]
        noisy = []
    elif small:
        parts = [f"No: {treatment} made {_small_words(small)}"]
        small = []
    elif capped:
        labels = _listed([row.label for row in capped])
        parts = [f"Cannot tell: {labels}: {BOTH_AT_CEILING}, where a faster CPU cannot show"]
    elif confounded:
        parts = [f"Cannot tell from these boards: {_confounded_words(confounded, treatment)}"]
        confounded = []
    else:
        parts = ["Cannot tell yet"]
    if small:
        parts.append(_small_words(small))
    if capped and (wins or losses or same or small):
        parts.append(f"{_listed([row.label for row in capped])}: cannot tell, {BOTH_AT_CEILING}")
    if confounded:
        parts.append(f"cannot tell for {_confounded_words(confounded, treatment)}")
    if noisy:
        parts.append(_noisy_words(noisy))
    if unknown:
        parts.append(f"{_listed([row.label for row in unknown])}: too few trials to tell")
    decided = wins or losses or same or small
    on_link = f" (on a {link_mbit} Mbit/s link)" if link_mbit and decided else ""
    limited = limited if decided else ""
    return "; ".join(parts) + on_link + limited + "".join(f"; {words}" for words in dropped) + "."


def _among(row: comparisons.Row, rows: list[comparisons.Row]) -> bool:
    """row is one of rows itself (rows of equal fields are still different comparisons)."""
    return any(row is other for other in rows)


# What each kind of limit (benchmarks.limits) is called in the answer's sentence; the page's
# "What limited it" gives the figures.
LIMIT_NAMES = {
    limits.LINK: "the link",
    limits.BOTH: "each end's CPU",
    limits.PEER: "the peer's CPU",
    limits.BOARD: "the board's CPU",
    limits.PEER_BUSIER: "perhaps the peer's CPU",
}


def _limited_words(
    rows: list[comparisons.Row],
    at_ceiling: list[comparisons.Row],
    limited: dict[int, tuple[str, dict[str, limits.Limit]]],
) -> str:
    """What limited each side of the network rows, in a clause for the sentence ("" where
    no limit is named; rows at the link's ceiling say so already). A throughput says little
    about a CPU unless the CPU, not the link or the peer, was what it hit, so an answer says
    which it was, e.g. "; the limit was the board's CPU on both sides, not the link". The
    rows it is for are named, unless it is for every row the sentence names."""
    phrases = {}
    for row in rows:
        skipped = row.comparison.outcome == stats.CANNOT_TELL or _among(row, at_ceiling)
        if id(row) not in limited or skipped:
            continue
        baseline, hit = limited[id(row)]
        sides = {group: hit.get(group) for group in (baseline, row.group)}
        kinds = {side.kind if side else None for side in sides.values()}
        if kinds == {None}:  # nothing to name (the page's "What limited it" says nothing either)
            continue
        if len(kinds) == 1:
            [kind] = kinds
            phrase = f"{LIMIT_NAMES[kind]} on both sides" + (
                ", not the link" if kind != limits.LINK else ""
            )
        else:
            phrase = ", ".join(
                f"{LIMIT_NAMES[side.kind]} for {group}" if side else f"none clear for {group}"
                for group, side in sides.items()
            )
        phrases.setdefault(phrase, []).append(row.label)
    if not phrases:
        return ""
    if len(phrases) == 1 and len(next(iter(phrases.values()))) == len(rows):
        return f"; the limit was {next(iter(phrases))}"
    return "; the limit was " + "; ".join(
        f"{phrase} ({_listed(labels)})" for phrase, labels in phrases.items()
    )


def _noisy_words(rows: list[comparisons.Row]) -> str:
    minimum = rows[0].comparison.min_effect * 100
    return (
        f"{_listed([row.label for row in rows])} showed no significant difference, but the "
        f"trials were too noisy to rule out a change of {minimum:g} % or more (see each "
        "interval): more trials would tell"
    )


def _small_words(rows: list[comparisons.Row]) -> str:
    minimum = rows[0].comparison.min_effect * 100
    changes = _listed([_change_words(row) for row in rows])
    return f"{changes}: significant, but under the {minimum:g} % that counts"


def _confounded_words(rows: list[comparisons.Row], treatment: str) -> str:
    """Rows whose sides ran on boards of their own, one a side: what was measured, and why it
    proves nothing (the board and the treatment changed together)."""
    design = rows[0].comparison.design
    where = (
        f"{', '.join(design.baseline_boards) or 'one board'} ran the baseline, "
        f"{', '.join(design.values_boards) or 'another'} {treatment}"
    )
    spread = design.board_spread
    spread_words = (
        f"boards differ by {spread * 100:.2g} % on their own"
        if spread is not None
        else "how much two boards differ on their own was not measured"
    )
    measured = _listed([_change_words(row, interval=False) for row in rows])
    return (
        f"{_listed([row.label for row in rows])}, as each side ran on its own board ({where}), "
        f"so the board and {treatment} changed together and {spread_words}. As measured, "
        f"{treatment} made {measured}"
    )


def _change_words(row: comparisons.Row, interval: bool = True) -> str:
    """ "iperf3 ... 3.1 % faster (95 % CI 1.2 to 5.0 %)": better is faster, whichever way the
    metric goes (a time lower, a rate higher). A baseline mean of 0 or below has no percent
    change: the difference in the metric's unit, then."""
    comparison = row.comparison
    sign = 1 if comparison.higher_is_better else -1
    if comparison.percent_change is None:
        return f"{row.label} {_difference_words(comparison)}"
    gain = sign * comparison.percent_change
    words = "faster" if gain > 0 else "slower"
    if not interval:
        return f"{row.label} {abs(gain):.1f} % {words}"
    if comparison.identical:
        shown = "every trial of a side alike"
    elif comparison.percent_ci is None:
        shown = "95 % CI unbounded"
    else:
        low, high = sorted(sign * end for end in comparison.percent_ci)  # of the gain
        low, high = (low, high) if gain > 0 else (-high, -low)
        shown = f"95 % CI {low:.1f} to {high:.1f} %"
    return f"{row.label} {abs(gain):.1f} % {words} ({shown})"


def _difference_words(comparison: stats.Comparison) -> str:
    """e.g. "+41 retransmits against a baseline mean of 0 (95 % CI +32 to +50)"."""
    unit = f" {comparison.unit}" if comparison.unit else ""
    words = f"{comparison.difference:+.3g}{unit} against a baseline mean of "
    words += f"{comparison.baseline.mean:.3g}"
    if comparison.difference_ci is not None:
        low, high = comparison.difference_ci
        words += f" (95 % CI {low:+.3g} to {high:+.3g})"
    return words


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


# ---- OpenVPN: the fastest setting ---------------------------------------------------------


def _fastest_setting(found: Answer, campaign: Campaign, runs: QuerySet) -> str:
    recipe = found.question.recipe
    benchmark, metric = recipe.metrics[0]
    chosen = runs.filter(benchmark=benchmark)
    for factor in recipe.factors:
        group_by = f"{comparisons.PARAM_PREFIX}{factor}"
        baseline = _first_value(found.question, benchmark, factor)
        found.sections.append(
            _section(
                found,
                f"{benchmark} {metric} by {factor}",
                chosen,
                campaign,
                None,
                group_by,
                baseline,
                metric,
            )
        )
    found.sections.append(
        _section(
            found,
            f"{benchmark} {metric} by preset",
            chosen,
            campaign,
            None,
            recipe.group_by,
            recipe.baseline,
            metric,
        )
    )
    found.sections = [section for section in found.sections if section]
    found.cpu = _cpu(chosen, recipe.factors[0])
    lacking = _missing_ciphers(campaign, benchmark)
    best = _best(chosen, metric, recipe.factors, found.include_suspects)
    if best is None:
        words = f"Cannot tell: no {benchmark} run has a {metric} yet"
    else:
        setting, description, unit, run_ids = best
        words = (
            f"Up to {number(description.mean)} {unit} ({_interval(description, unit)}, "
            f"{description.n} run{'s' if description.n != 1 else ''}) with {setting}"
        )
        if (hit := _runs_limit(run_ids, description.mean, unit)) is not None:
            words += f"; {hit.words}"
    if lacking:
        words += f"; this OpenVPN build lacked {_listed(lacking)}"
    if not found.include_suspects:
        words += "".join(f"; {left}" for left in _settings_all_suspect(chosen, recipe.factors))
    return words + "."


def _settings_all_suspect(runs: QuerySet, factors: tuple[str, ...]) -> list[str]:
    """Each setting (as _best names them) whose every trial is suspect, with why: left out of
    the best, it is said, not dropped silently."""
    trials = defaultdict(list)
    rows = runs.values_list(
        "params",
        "preset_version__preset__name",
        "preset_version__number",
        "suspect",
        "suspect_reasons",
    )
    for params, preset, version, suspect, reasons in rows:
        trials[_setting_of(params, preset, version, factors)].append((suspect, reasons))
    return [
        f"{setting}: all {len(found)} trials suspect "
        f"({_suspect_summary(reasons for _, reasons in found)}); not compared"
        for setting, found in trials.items()
        if all(suspect for suspect, _ in found)
    ]


def _setting_of(params: dict, preset, version, factors: tuple[str, ...]) -> str:
    """ "cipher AES-256-CBC, compression off, mtu 1500, as the board is" """
    setting = [f"{factor} {value_text(params.get(factor))}" for factor in factors]
    setting.append(f"{preset} v{version}" if preset else group_names.AS_IS)
    return ", ".join(setting)


def _first_value(question: questions.Question, benchmark: str, factor: str):
    sweep = next(sweep for sweep in question.sweeps if sweep.benchmark == benchmark)
    return value_text(sweep.params.get(factor, sweep.vary.get(factor, [""])[0]))


def _interval(description: stats.Description, unit: str) -> str:
    if description.ci_low is None:
        return "one trial: no interval"
    return f"95 % CI {number(description.ci_low)} to {number(description.ci_high)} {unit}"


def _best(runs: QuerySet, metric: str, factors: tuple[str, ...], include_suspects: bool):
    """(the setting in words, its description, the unit, its runs' ids) of the highest mean,
    or None."""
    values, run_ids = defaultdict(list), defaultdict(list)
    if not include_suspects:
        runs = runs.filter(suspect=False)
    rows = Measurement.objects.filter(run__in=runs, metric=metric).values_list(
        "value",
        "unit",
        "run__params",
        "run__preset_version__preset__name",
        "run__preset_version__number",
        "run_id",
    )
    units = set()
    for value, unit, params, preset, version, run_id in rows:
        units.add(unit)
        setting = _setting_of(params, preset, version, factors)
        values[setting].append(value)
        run_ids[setting].append(run_id)
    if not values:
        return None
    described = {setting: stats.describe(found) for setting, found in values.items()}
    setting = max(described, key=lambda key: described[key].mean)
    return setting, described[setting], "; ".join(sorted(units)), run_ids[setting]


def _runs_limit(run_ids: list[int], mean: float, unit: str) -> limits.Limit | None:
    """The limit the runs' mean hit (benchmarks.limits), against the goodput ceiling their
    trials recorded (runner: link_use) when they all recorded the same one."""
    uses = Run.objects.filter(pk__in=run_ids).values_list("environment__link_use", flat=True)
    ceilings = {use.get("ceiling_mbit") for use in uses if isinstance(use, dict)}
    ceiling = None
    if len(ceilings) == 1 and unit in network_link.UNITS_IN_MBIT:
        ceiling_mbit = network_link.recorded(ceilings.pop())
        ceiling = ceiling_mbit / network_link.UNITS_IN_MBIT[unit] if ceiling_mbit else None
    return limits.limit(mean, unit, ceiling, _ends(run_ids))


def _missing_ciphers(campaign: Campaign, benchmark: str) -> list[str]:
    """The ciphers whose runs ended saying the build has no such cipher."""
    reasons = campaign.runs.filter(
        benchmark=benchmark,
        state__in=[Run.State.FAILED, Run.State.SKIPPED],
        reason__contains=MISSING_CIPHER,
    ).values_list("params", flat=True)
    return sorted({params.get("cipher", "") for params in reasons} - {""})


def _cpu(runs: QuerySet, factor: str) -> list[dict]:
    """Per value of factor, the mean CPU % of each tunnel process on the board and on the
    peer over the runs' telemetry (100 % = one core, as top shows it; None: not seen)."""
    seen = defaultdict(lambda: defaultdict(list))
    for params, environment in runs.values_list("params", "environment"):
        group = value_text(params.get(factor))
        for end, key in (("board", "telemetry"), ("peer", "peer_telemetry")):
            procs = (environment.get(key) or {}).get("procs_mean_pct") or {}
            for name in TUNNEL_PROCESSES:
                if procs.get(name) is not None:
                    seen[group][f"{end}_{name}"].append(procs[name])
    columns = [f"{end}_{name}" for end in ("board", "peer") for name in TUNNEL_PROCESSES]
    return [
        {"group": group}
        | {
            column: statistics.fmean(seen[group][column]) if seen[group][column] else None
            for column in columns
        }
        for group in sorted(seen, key=comparisons.group_order)
    ]


# ---- shared -------------------------------------------------------------------------------


def _section(
    found: Answer, title, runs, campaign, row, group_by, baseline, metric=None
) -> Section | None:
    """The comparison of one metric (a row's, or the one given) of runs, grouped by group_by."""
    benchmark = row.benchmark if row else runs.values_list("benchmark", flat=True).first()
    metric = row.metric if row else metric
    suspects = found.include_suspects
    try:
        result = comparisons.compare(runs, benchmark, metric, group_by, baseline, suspects)
    except comparisons.ComparisonError:
        return None
    query = {"metric": f"{benchmark}:{metric}", "group_by": group_by, "baseline": result.baseline}
    if suspects:
        query["include_suspects"] = "on"
    if row and row.params:  # the builder cannot filter parameters: the row's runs by code
        codes = [str(code) for code in runs.values_list("code", flat=True)[: RUN_CODES_MAX + 1]]
        # More than the builder takes by code (its address is capped): no link, a hint.
        query = {} if len(codes) > RUN_CODES_MAX else query | {"runs": " ".join(codes)}
    else:
        query["campaigns"] = str(campaign.code)
    return Section(title, result, {}, query, _group_limits(result))


def _network(result: comparisons.Result) -> bool:
    """A network comparison whose link was read: what limited it can be named."""
    try:
        category = catalog.lookup(result.benchmark).category
    except catalog.UnknownBenchmark:
        return False
    return category in network_link.NETWORK_CATEGORIES and result.references is not None


def _group_limits(result: comparisons.Result) -> dict[str, limits.Limit]:
    """The limit each group of a network comparison hit (benchmarks.limits), by group key."""
    if not _network(result):
        return {}
    found = {}
    for group in result.groups:
        references = result.references
        ceiling = references.ceiling
        if ceiling is None:
            ceiling = references.ceilings.get(group.key)
        hit = limits.limit(group.description.mean, result.unit, ceiling, _ends(group.run_ids))
        if hit is not None:
            found[group.key] = hit
    return found


def _ends(run_ids: list[int]) -> limits.Ends | None:
    """The mean CPU of each process on the board and on the peer, and of each of the board's
    cores, over the runs' telemetry summaries; None when no run has one."""
    rows = Run.objects.filter(pk__in=run_ids).values_list("environment", "board__name", "peer")
    board, peer, cores = defaultdict(list), defaultdict(list), []
    boards, peers = set(), set()
    for environment, board_name, peer_name in rows:
        own = _summary(environment, "telemetry")
        if not own:
            continue
        for summary, into in ((own, board), (_summary(environment, "peer_telemetry"), peer)):
            procs = summary.get("procs_mean_pct")
            for name, pct in procs.items() if isinstance(procs, dict) else ():
                if _is_number(pct):
                    into[name].append(pct)
        each = own.get("cores_busy_mean_pct")
        if isinstance(each, list) and each and all(_is_number(pct) for pct in each):
            cores.append(each)
        boards.add(board_name)
        if peer_name:
            peers.add("the controller" if peer_name == CONTROLLER else peer_name)
    if not boards:
        return None
    core_means = ()
    if cores and len({len(each) for each in cores}) == 1:
        core_means = tuple(statistics.fmean(column) for column in zip(*cores, strict=True))
    return limits.Ends(
        {name: statistics.fmean(pcts) for name, pcts in board.items()},
        {name: statistics.fmean(pcts) for name, pcts in peer.items()},
        core_means,
        board=_listed(sorted(boards)),
        peer=_listed(sorted(peers)) if peers else "the peer",
    )


def _summary(environment, key: str) -> dict:
    """A run's telemetry summary (validity.summarize), {} when it has none (or not a dict:
    a run's JSON may hold a hand's edit)."""
    found = environment.get(key) if isinstance(environment, dict) else None
    return found if isinstance(found, dict) else {}


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _link_mbit(runs: QuerySet) -> int | None:
    """The line rate the network runs' boards reported at run time (benchmarks.network_link), when
    they all reported the same one."""
    reported = runs.filter(environment__link__mbit__isnull=False).order_by()
    found = reported.values_list("environment__link__mbit", flat=True).distinct()
    speeds = {network_link.recorded(speed) for speed in found}
    return speeds.pop() if len(speeds) == 1 else None
