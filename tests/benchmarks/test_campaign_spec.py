"""A campaign's spec is refused, with the reason in words and a message of bounded size, for
every value the engine could not run or store."""

import pytest

from benchmarks import specs
from benchmarks.catalog.cpu import SHA1SUM
from benchmarks.catalog.spec import Param, ParamError
from benchmarks.models import Campaign
from devices import presets
from devices.models import FactSnapshot, Preset
from tests.benchmarks.factories import unusable_custom_benchmark
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
        ({"quiet": {"load_below": float("nan")}}, "quiet.load_below must be a number"),
        ({"quiet": {"deadline_s": float("inf")}}, "quiet.deadline_s must be a number"),
        ({"quiet": {"deadline_s": 1e12}}, "quiet.deadline_s must be a number from 0 to 600"),
        ({"repetitions": {"min": 2, "max": 5, "budget_s": float("nan")}}, "budget_s is a number"),
        ({"benchmarks": [{"name": "sha1sum", "params": [1]}]}, "params of 'sha1sum' must be"),
        ({"benchmarks": [{"name": "sha1sum", "params": "abc"}]}, "params of 'sha1sum' must be"),
        ({"benchmarks": ["sha1sum", "sha1sum"]}, "sha1sum is listed twice"),
        ({"rerun_suspect": "no"}, "rerun_suspect must be true"),
        ({"name": "\ud800"}, "a lone surrogate"),
    ],
)
def test_a_spec_the_engine_cannot_run_is_refused_in_words(board, changes, words):
    with pytest.raises(specs.SpecError, match=words.replace("(", r"\(")):
        specs.check(spec(board, **changes))
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("a\x00b", "U+0000"),
        ("two\nlines", "U+000A"),
        ("a\x85b", "U+0085"),  # C1: NEXT LINE
        ("a\u2028b", "U+2028 LINE SEPARATOR"),
        ("a\u2029b", "U+2029 PARAGRAPH SEPARATOR"),
        ("\u202egnp.exe", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("evil\u2066 name", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("mark\u200f", "U+200F RIGHT-TO-LEFT MARK"),
        ("zero\u200bwidth", "U+200B ZERO WIDTH SPACE"),
    ],
)
def test_a_name_with_a_character_pages_cannot_show_as_written_is_refused(board, name, named):
    """Controls (C0 and C1), format characters (bidi overrides, zero-width) and line and
    paragraph separators: a page or a terminal would show the name as something else."""
    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, name=name))
    assert str(refused.value).startswith("name holds a control or invisible character")
    assert named in str(refused.value)
    assert not Campaign.objects.exists()


def test_a_name_in_any_script_with_symbols_is_accepted(board):
    name = "Prüfung – Pi 4 ✓ 日本語 عربي"
    assert specs.check(spec(board, name=name)).spec["name"] == name


def test_a_custom_benchmark_saved_with_a_default_it_cannot_take_is_refused_by_name(board):
    unusable_custom_benchmark("longdef")
    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, benchmarks=["longdef"]))
    assert str(refused.value) == (
        "longdef cannot be used until an admin fixes it in Admin › Custom benchmarks: p: the "
        "default is 300 characters long; a parameter holds at most 200"
    )


def test_a_refused_value_is_shown_cut_short(board):
    huge = "9" * 1_000_000
    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, benchmarks=[{"name": "sha1sum", "params": {"size": huge}}]))
    assert len(str(refused.value)) < 300


# ---- presets against the boards they would be applied to ------------------------------------


def probed_as(board, revision: str) -> None:
    """The board's latest probe decoded this revision code (what the spec check reads)."""
    FactSnapshot.objects.create(board=board, revision=revision, facts={"revision_code": revision})


def preset(name: str, families: list[str], **options) -> str:
    presets.new_version(Preset.objects.create(name=name, families=families), options=options)
    return f"{name}@1"


def test_a_pi_4_preset_is_refused_for_a_pi_3_it_does_not_suit(board):
    probed_as(board, "a02082")  # a Pi 3B
    mild = preset("Pi 4 mild", ["pi4_r14"], arm_freq="1700")

    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, presets=[mild]))

    words = str(refused.value)
    assert "Pi 4 mild@1" in words and "bench-1" in words and "Pi 3B" in words
    assert "arm_freq=1700" in words
    assert not Campaign.objects.exists()


def test_a_preset_for_any_board_is_refused_where_an_option_is_an_error(board):
    probed_as(board, "900032")  # a Pi 1B+: 1700 MHz is more than twice anything it runs
    anywhere = preset("fast anywhere", [], arm_freq="1700")

    with pytest.raises(specs.SpecError, match="fast anywhere@1 cannot be applied to bench-1"):
        specs.check(spec(board, presets=[anywhere]))


def test_a_preset_is_accepted_for_a_board_of_its_family(board):
    probed_as(board, "c03114")  # a Pi 4B rev 1.4
    mild = preset("Pi 4 mild", ["pi4_r14"], arm_freq="1700")

    checked = specs.check(spec(board, presets=[mild, "as-is"]))

    assert checked.spec["presets"] == ["Pi 4 mild@1", "as-is"]


def test_a_preset_is_accepted_for_a_board_never_probed_its_application_checks_it(board):
    mild = preset("Pi 4 mild", ["pi4_r14"], arm_freq="1700")

    checked = specs.check(spec(board, presets=[mild]))

    assert checked.spec["presets"] == ["Pi 4 mild@1"]


# Boards are read first: the presets and benchmarks are refused after that one query only.
@pytest.mark.parametrize(("key", "queries"), [("boards", 0), ("presets", 1), ("benchmarks", 1)])
def test_a_list_longer_than_any_bench_is_refused_before_it_is_looked_up(
    board, key, queries, django_assert_num_queries
):
    names = [f"bench-{i}" for i in range(150_000)]
    with django_assert_num_queries(queries), pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, **{key: names}))
    assert str(refused.value) == f"{key} lists 150,000; at most {specs.MAX_LISTED} are allowed"


def test_a_sweep_counts_the_entries_listed_before_it():
    vary = {"size": ["1M", "2M"]}  # and its own 16M: three entries
    assert len(specs.swept(SHA1SUM, {"size": "16M"}, vary, listed=497)) == 3
    with pytest.raises(specs.SpecError) as refused:
        specs.swept(SHA1SUM, {"size": "16M"}, vary, listed=498)
    assert str(refused.value) == f"benchmarks lists 501; at most {specs.MAX_LISTED} are allowed"


def test_a_sweep_runs_a_value_given_again_in_other_words_once():
    vary = {"size": ["16384K", "32M", "32768K", "16M"]}  # and its own 16M
    entries = specs.swept(SHA1SUM, {"size": "16M"}, vary)
    assert [entry["params"]["size"] for entry in entries] == ["16M", "32M"]


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        ("int", "1_0"),
        ("int", "٣"),
        ("int", "１２"),
        ("float", "1_0.5"),
        ("float", "٣.5"),
        ("size", "٣M"),
        ("size", "1_0M"),
    ],
)
def test_numbers_are_ascii_digits_only(kind, raw):
    """Python's int() and float() read underscores and other scripts' digits."""
    with pytest.raises(ParamError, match="is not a"):
        Param("count", kind, default="1M" if kind == "size" else 1).clean(raw)


# ---- numbers no parser may overflow on (a red-team review found each one a 500) -------------

HUGE = 10**400  # a JSON integer of 401 digits: float() of it raises OverflowError


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"quiet": {"load_below": HUGE}}, "quiet.load_below"),
        ({"quiet": {"deadline_s": -HUGE}}, "quiet.deadline_s"),
        ({"repetitions": {"min": 2, "max": 5, "target_pct": HUGE}}, "repetitions.target_pct"),
        ({"repetitions": {"min": 2, "max": 5, "resolve_pct": HUGE}}, "repetitions.resolve_pct"),
        ({"repetitions": {"min": 2, "max": 5, "budget_s": HUGE}}, "repetitions.budget_s"),
        ({"repetitions": HUGE}, "repetitions"),
        ({"min_trial_s": HUGE}, "min_trial_s"),
        ({"seed": HUGE}, "seed"),
        ({"benchmarks": [{"name": "sha1sum", "params": {"min_seconds": HUGE}}]}, "benchmarks"),
        ({"benchmarks": [{"name": "openssl-speed", "params": {"seconds": 1e308 * 10}}]}, ""),
    ],
)
def test_a_number_too_large_for_a_float_is_refused_naming_its_field(board, changes, field):
    with pytest.raises(specs.SpecError) as refused:
        specs.check(spec(board, **changes))
    assert refused.value.field == field or not field
    assert len(str(refused.value)) < 300


@pytest.mark.parametrize("number", ["²", "٣", "1_0", "9" * 5000, "-1", "1234567890"])
def test_a_preset_version_is_ascii_digits_of_a_sane_length(board, number):
    presets.new_version(Preset.objects.create(name="Stock"), options={})
    with pytest.raises(specs.SpecError, match="Stock") as refused:
        specs.check(spec(board, presets=[f"Stock@{number}"]))
    assert refused.value.field == "presets"
    assert len(str(refused.value)) < 300


def test_a_float_parameter_given_an_integer_too_large_for_a_float_is_refused():
    refused = "ratio: <an integer of 401 digits> is not a finite number"
    with pytest.raises(ParamError, match=refused):
        Param("ratio", "float", 0.5).clean(HUGE)


@pytest.mark.parametrize("raw", [["a", "b"], {"a": 1}, True, ("a",)])
def test_a_text_parameter_takes_text_or_a_number_not_a_pythons_spelling_of_something(raw):
    # A list given for a custom parameter was stored as "['a', 'b']" (a hostile review).
    with pytest.raises(ParamError, match="is not text"):
        Param("word", "text", "x").clean(raw)
    assert Param("word", "text", "x").clean(64) == "64"
    assert Param("word", "text", "x").clean("a, b") == "a, b"
