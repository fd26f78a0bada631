"""A campaign's spec is refused, with the reason in words and a message of bounded size, for
every value the engine could not run or store."""

import pytest

from benchmarks import campaigns
from benchmarks.models import Campaign
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(db):
    board = make_board(name="bench-1")
    board.host_key = (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEVsAsmHAC2PZUVRWx3OKy0Q8Q6v7mGm2Vf3Yw1f1HgX"
    )
    board.save()
    return board


def spec(board, **changes) -> dict:
    return {"name": "x", "boards": [board.name], "benchmarks": ["sha1sum"], **changes}


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"quiet": {"load_below": float("nan")}}, "quiet load_below must be a number"),
        ({"quiet": {"deadline_s": float("inf")}}, "quiet deadline_s must be a number"),
        ({"quiet": {"deadline_s": 1e12}}, "quiet deadline_s is at most 600 s"),
        ({"repetitions": {"min": 2, "max": 5, "budget_s": float("nan")}}, "budget_s is a number"),
        ({"benchmarks": [{"name": "sha1sum", "params": [1]}]}, "params of 'sha1sum' must be"),
        ({"benchmarks": [{"name": "sha1sum", "params": "abc"}]}, "params of 'sha1sum' must be"),
        ({"benchmarks": ["sha1sum", "sha1sum"]}, "sha1sum is listed twice"),
        ({"name": "a\x00b"}, "control character"),
        ({"name": "two\nlines"}, "control character"),
    ],
)
def test_a_spec_the_engine_cannot_run_is_refused_in_words(board, changes, words):
    with pytest.raises(campaigns.SpecError, match=words.replace("(", r"\(")):
        campaigns.check(spec(board, **changes))
    assert not Campaign.objects.exists()


def test_a_refused_value_is_shown_cut_short(board):
    huge = "9" * 1_000_000
    with pytest.raises(campaigns.SpecError) as refused:
        campaigns.check(spec(board, benchmarks=[{"name": "sha1sum", "params": {"size": huge}}]))
    assert len(str(refused.value)) < 300
