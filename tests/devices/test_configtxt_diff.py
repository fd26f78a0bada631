"""devices.configtxt diffs: unified for terminals, side by side for pages."""

import difflib
from pathlib import Path

import pytest

from devices.configtxt import Row, apply_block, diff, fold, side_by_side, unified_diff

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"


def test_unified_diff_of_two_versions():
    a = b"# preset\narm_freq=900\ncore_freq=300\n"
    b = b"# preset\narm_freq=1000\ncore_freq=300\nover_voltage=2\n"
    assert unified_diff(a, b, "v1", "v2") == (
        "--- v1\n+++ v2\n@@ -1,3 +1,4 @@\n # preset\n-arm_freq=900\n+arm_freq=1000\n"
        " core_freq=300\n+over_voltage=2\n"
    )


def test_identical_files_have_an_empty_diff():
    data = (FIXTURES / "bookworm.txt").read_bytes()
    assert unified_diff(data, data) == ""


def test_files_that_differ_only_in_line_endings_say_so():
    assert unified_diff(b"a=1\n", b"a=1\r\n", "a", "b") == "a and b differ only in line endings\n"
    assert unified_diff(b"a=1\n", b"a=1", "a", "b") == "a and b differ only in line endings\n"


def test_undecodable_bytes_show_as_replacement_characters():
    assert "+# caf\ufffd" in unified_diff(b"", b"# caf\xe9\n")


def test_side_by_side_rows():
    a = b"a=1\nb=2\nc=3\nd=4\n"
    b = b"a=1\nb=20\nc=3\ne=5\nf=6\n"
    assert side_by_side(a, b) == [
        Row(1, "a=1", 1, "a=1", "same"),
        Row(2, "b=2", 2, "b=20", "changed"),
        Row(3, "c=3", 3, "c=3", "same"),
        Row(4, "d=4", 4, "e=5", "changed"),
        Row(None, None, 5, "f=6", "added"),
    ]


def test_side_by_side_removed_lines_and_empty_files():
    assert side_by_side(b"a=1\nb=2\n", b"a=1\n") == [
        Row(1, "a=1", 1, "a=1", "same"),
        Row(2, "b=2", None, None, "removed"),
    ]
    assert side_by_side(b"", b"") == []


def test_side_by_side_of_bullseye_and_bookworm_keeps_every_line_once():
    a = (FIXTURES / "bullseye.txt").read_bytes()
    b = (FIXTURES / "bookworm.txt").read_bytes()
    rows = side_by_side(a, b)
    assert [row.left_no for row in rows if row.left_no] == list(range(1, 81))
    assert [row.right_no for row in rows if row.right_no] == list(range(1, 52))
    comment = "# Enable host mode on the 2711 built-in XHCI USB controller."
    assert Row(69, comment, 43, comment, "same") in rows


class CountingMatcher(difflib.SequenceMatcher):
    """The real matcher, noting how many lines each comparison was given."""

    sizes: list[tuple[int, int]] = []

    def __init__(self, isjunk=None, a="", b="", autojunk=True):
        CountingMatcher.sizes.append((len(a), len(b)))
        super().__init__(isjunk, a, b, autojunk)


@pytest.fixture
def matcher_sizes(monkeypatch):
    CountingMatcher.sizes = []
    monkeypatch.setattr(diff.difflib, "SequenceMatcher", CountingMatcher)
    return CountingMatcher.sizes


def every_line_once(rows: list[Row], a: bytes, b: bytes) -> bool:
    left = [row.left_no for row in rows if row.left_no]
    right = [row.right_no for row in rows if row.right_no]
    return left == list(range(1, a.count(b"\n") + 1)) and right == list(
        range(1, b.count(b"\n") + 1)
    )


def test_a_board_file_of_8000_identical_lines_is_compared_on_its_changed_part_only(
    matcher_sizes,
):
    board = b"dtparam=audio=on\n" * 8000
    after = apply_block(board, "arm_freq=1800\n", "fast v1")
    rows = side_by_side(board, after)
    assert every_line_once(rows, board, after)
    assert [row.kind for row in rows].count("added") == 5  # markers, [all] twice, arm_freq
    assert all(a <= diff.MATCH_LIMIT and b <= diff.MATCH_LIMIT for a, b in matcher_sizes)


def test_a_large_changed_part_is_shown_whole_without_matching_it(matcher_sizes):
    a = b"x=1\n" + b"dtparam=audio=on\n" * 8000
    b = b"dtparam=audio=on\n" * 8000 + b"y=1\n"
    rows = side_by_side(a, b)
    assert every_line_once(rows, a, b)
    assert matcher_sizes == []


def test_folding_keeps_changes_and_context_and_counts_what_it_hides():
    board = b"dtparam=audio=on\n" * 80_000
    rows = fold(side_by_side(board, apply_block(board, "arm_freq=1800\n", "v1")), context=3)
    assert rows[0] == Row(None, None, None, None, "skipped", hidden=79_997)
    assert [row.kind for row in rows[1:]] == ["same"] * 3 + ["added"] * 5
    small = side_by_side(b"a=1\n" * 400, b"a=1\n" * 400 + b"b=2\n")
    assert fold(small) == small  # a real config.txt is shown whole
    changed = [Row(i, f"a={i}", i, f"a={i + 1}", "changed") for i in range(1, 5001)]
    cut = fold(changed, max_rows=100)
    assert cut[:100] == changed[:100]
    assert cut[100:] == [Row(None, None, None, None, "cut", hidden=4900)]
