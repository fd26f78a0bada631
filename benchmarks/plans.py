"""A checked spec planned: its runs in a counterbalanced order, warnings, and an estimate.

Runs are grouped by preset on each board, in rounds (one per repetition) whose order reverses
every other round and starts reversed on every other board (A B | B A | A B), so that drift
over the campaign (heat, a filling disk) does not fall on one preset. Sequence numbers leave
room for a suspect run's re-run right after it and for retries at the lane's end.
"""

import random
import statistics

from benchmarks.models import Campaign, Lane, Run
from benchmarks.specs import Checked, Item
from devices import presets
from devices.models import Application, Board

GROUP_GAP = 100_000  # sequence numbers per preset group in a lane
REPETITION_GAP = 10  # between runs in a group: room for a suspect run's re-run right after
APPLY_ESTIMATE_S = 90  # one application (trial boot, verify) when the board has no history
RUN_OVERHEAD_S = 2  # connect, quiet check, sampler, clean-up


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
                runs.append(
                    Run(
                        campaign=campaign,
                        lane=lanes[board.pk],
                        board=board,
                        sequence=group * GROUP_GAP + position * REPETITION_GAP,
                        preset_version=version,
                        benchmark=item.benchmark.name,
                        definition_version=item.benchmark.version,
                        params=item.params,
                        repetition=repetition,
                    )
                )
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


def warnings(checked: Checked, started=None, starts_now: bool = True) -> list[str]:
    """What to know before starting, in words: a board in another campaign not ended yet, a
    board whose "as is" is not its firmware's defaults (the baseline then is whatever it runs),
    and a preset that sets a clock below a board's own default (an "overclock" that is an
    underclock there). started: the campaign the spec started already, not another one;
    starts_now False (a schedule's first start is later): what runs now is not said."""
    found = []
    for board in checked.boards:
        busy = Lane.objects.filter(board=board, state__in=Lane.UNFINISHED).select_related(
            "campaign"
        )
        if started is not None:
            busy = busy.exclude(campaign=started)
        for lane in busy if starts_now else ():
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
                found += [
                    f"{version} on {board.name}: {words}"
                    for words in presets.underclocks_on(board, version)
                ]
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
