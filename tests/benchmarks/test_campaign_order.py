"""A campaign's runs on a board come in counterbalanced rounds, never all of one preset and
then all of the next: a drift of the board weighs on every preset alike."""

import pytest

from benchmarks import campaigns, plans, specs
from benchmarks.models import Run
from devices import presets
from devices.models import Preset
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


@pytest.fixture
def boards(db):
    return [make_board(name="bench-1"), make_board(name="bench-2")]


@pytest.fixture
def fast(db):
    version = presets.new_version(Preset.objects.create(name="fast"), options={"arm_freq": "1500"})
    return f"{version.preset.name}@{version.number}"


def spec(boards, fast, **changes) -> dict:
    return {
        "name": "order",
        "boards": [board.name for board in boards],
        "presets": ["as-is", fast],
        "benchmarks": ["sha1sum", "openssl-speed"],
        "repetitions": 3,
        **changes,
    }


def lane_order(campaign, board) -> list[tuple[str, str, int]]:
    runs = Run.objects.filter(campaign=campaign, board=board).order_by("sequence")
    return [
        (
            str(run.preset_version.preset) if run.preset_version else "as is",
            run.benchmark,
            run.repetition,
        )
        for run in runs.select_related("preset_version__preset")
    ]


def presets_in_turn(order) -> list[str]:
    """The preset of each stretch of runs: one entry per change of preset."""
    turns = []
    for preset, _, _ in order:
        if not turns or turns[-1] != preset:
            turns.append(preset)
    return turns


def test_rounds_alternate_their_order_and_each_board_starts_with_another_preset(
    boards, fast, monkeypatch
):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    campaign = campaigns.start(spec(boards, fast))
    first, second = (lane_order(campaign, board) for board in boards)
    # A B | B A | A B on the first board; B A | A B | B A on the second.
    assert presets_in_turn(first) == ["as is", "fast", "as is", "fast"]
    assert presets_in_turn(second) == ["fast", "as is", "fast", "as is"]
    assert first[:4] == [
        ("as is", "sha1sum", 1),
        ("as is", "openssl-speed", 1),
        ("fast", "sha1sum", 1),
        ("fast", "openssl-speed", 1),
    ]
    assert [repetition for _, _, repetition in first] == [1] * 4 + [2] * 4 + [3] * 4
    # every trial of the matrix, once
    assert sorted(first) == sorted(
        (preset, benchmark, repetition)
        for preset in ("as is", "fast")
        for benchmark in ("sha1sum", "openssl-speed")
        for repetition in (1, 2, 3)
    )


def test_the_preset_rounds_reverse_every_other_round():
    assert plans.preset_rounds(3, 4) == [[0, 1, 2], [2, 1, 0], [0, 1, 2], [2, 1, 0]]
    assert plans.preset_rounds(2, 2, board_index=1) == [[1, 0], [0, 1]]
    assert plans.preset_rounds(1, 3) == [[0], [0], [0]]


def test_one_preset_keeps_the_order_the_spec_asks_for(boards, fast, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    campaign = campaigns.start(spec(boards[:1], fast, presets=[fast], order="grouped"))
    assert [
        (benchmark, repetition) for _, benchmark, repetition in lane_order(campaign, boards[0])
    ] == [
        ("sha1sum", 1),
        ("sha1sum", 2),
        ("sha1sum", 3),
        ("openssl-speed", 1),
        ("openssl-speed", 2),
        ("openssl-speed", 3),
    ]


def test_the_estimate_counts_an_application_at_each_change_and_one_to_leave(boards, fast):
    counted = plans._applications(specs.check(spec(boards[:1], fast)))
    # as is (nothing to do), fast, fast, as is (put back), as is, fast, then put back: 4
    assert counted == 4
    kept = plans._applications(specs.check(spec(boards[:1], fast, keep=True)))
    assert kept == 3
    assert plans._applications(specs.check(spec(boards[:1], fast, presets=["as-is"]))) == 0


def test_keep_is_a_yes_or_no(boards, fast):
    with pytest.raises(specs.SpecError, match="keep must be true"):
        specs.check(spec(boards, fast, keep="yes"))
    assert specs.check(spec(boards, fast)).spec["keep"] is False


def test_a_board_in_a_campaign_that_has_not_ended_is_warned_of(boards, fast, monkeypatch):
    monkeypatch.setattr("devices.work.queue", lambda lane: None)
    campaigns.start(spec(boards[:1], fast, name="first"))
    found = plans.warnings(specs.check(spec(boards, fast, name="second")))
    assert found[0].startswith("bench-1 is in “first”, which has not ended: their runs take turns")
    assert not any(warning.startswith("bench-2 is in") for warning in found)
