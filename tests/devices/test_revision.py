"""devices.revision: board revision codes (pure; no Django, no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devices.revision import BoardRevision, RevisionError, decode_revision

# code -> (board_type, type_id, memory_mb, soc, manufacturer, board_revision, family)
# Values from revision-codes.adoc (raspberrypi/documentation) and raspberry-pi.yaml.
KNOWN = {
    # Pi 1, old-style sequential codes
    "0002": ("B", None, 256, "BCM2835", "Egoman", "1.0", "pi1"),
    "000e": ("B", None, 512, "BCM2835", "Sony UK", "2.0", "pi1"),
    "0010": ("B+", None, 512, "BCM2835", "Sony UK", "1.2", "pi1"),
    "0012": ("A+", None, 256, "BCM2835", "Sony UK", "1.1", "pi1"),
    "0013": ("B+", None, 512, "BCM2835", "Embest", "1.2", "pi1"),
    # Pi 1 B+ with a new-style code
    "900032": ("B+", 0x03, 512, "BCM2835", "Sony UK", "1.2", "pi1"),
    # Pi 2
    "a01041": ("2B", 0x04, 1024, "BCM2836", "Sony UK", "1.1", "pi2"),
    "a21041": ("2B", 0x04, 1024, "BCM2836", "Embest", "1.1", "pi2"),
    "a22042": ("2B", 0x04, 1024, "BCM2837", "Embest", "1.2", "pi2"),
    # Pi 3
    "a02082": ("3B", 0x08, 1024, "BCM2837", "Sony UK", "1.2", "pi3"),
    "a22082": ("3B", 0x08, 1024, "BCM2837", "Embest", "1.2", "pi3"),
    "a32082": ("3B", 0x08, 1024, "BCM2837", "Sony Japan", "1.2", "pi3"),
    "a020d3": ("3B+", 0x0D, 1024, "BCM2837", "Sony UK", "1.3", "pi3p"),
    "9020e0": ("3A+", 0x0E, 512, "BCM2837", "Sony UK", "1.0", "pi3p"),
    # Zero family
    "900092": ("Zero", 0x09, 512, "BCM2835", "Sony UK", "1.2", "pi0"),
    "9000c1": ("Zero W", 0x0C, 512, "BCM2835", "Sony UK", "1.1", "pi0"),
    "902120": ("Zero 2 W", 0x12, 512, "BCM2837", "Sony UK", "1.0", "pi02"),
    # Pi 4 family
    "a03111": ("4B", 0x11, 1024, "BCM2711", "Sony UK", "1.1", "pi4"),
    "b03111": ("4B", 0x11, 2048, "BCM2711", "Sony UK", "1.1", "pi4"),
    "c03111": ("4B", 0x11, 4096, "BCM2711", "Sony UK", "1.1", "pi4"),
    "c03112": ("4B", 0x11, 4096, "BCM2711", "Sony UK", "1.2", "pi4"),
    "c03114": ("4B", 0x11, 4096, "BCM2711", "Sony UK", "1.4", "pi4_r14"),
    "d03114": ("4B", 0x11, 8192, "BCM2711", "Sony UK", "1.4", "pi4_r14"),
    "c03130": ("400", 0x13, 4096, "BCM2711", "Sony UK", "1.0", "pi400"),
    "a03140": ("CM4", 0x14, 1024, "BCM2711", "Sony UK", "1.0", "pi4"),
    # Pi 5
    "c04170": ("5", 0x17, 4096, "BCM2712", "Sony UK", "1.0", "pi5"),
    "d04170": ("5", 0x17, 8192, "BCM2712", "Sony UK", "1.0", "pi5"),
    "e04171": ("5", 0x17, 16384, "BCM2712", "Sony UK", "1.1", "pi5"),
}


@pytest.mark.parametrize("code", sorted(KNOWN))
def test_known_codes_decode(code):
    board_type, type_id, memory_mb, soc, manufacturer, board_rev, family = KNOWN[code]
    rev = decode_revision(code)
    assert rev.code == code
    assert rev.new_style == (type_id is not None)
    assert rev.board_type == board_type
    assert rev.board_type_id == type_id
    assert rev.memory_mb == memory_mb
    assert rev.soc == soc
    assert rev.manufacturer == manufacturer
    assert rev.board_revision == board_rev
    assert rev.family == family
    assert not rev.warranty_voided
    assert not (rev.overvoltage_disallowed or rev.otp_program_disallowed)
    assert not rev.otp_read_disallowed


@pytest.mark.parametrize(
    "code, filters",
    [
        ("c03114", ("pi4", "board-type=0x11")),
        ("a020d3", ("pi3", "pi3+", "board-type=0xd")),
        ("9020e0", ("pi3", "pi3+", "board-type=0xe")),
        ("a02082", ("pi3", "board-type=0x8")),
        ("c03130", ("pi4", "pi400", "board-type=0x13")),
        ("a03140", ("pi4", "cm4", "board-type=0x14")),
        ("902120", ("pi0", "pi0w", "pi02", "board-type=0x12")),
        ("9000c1", ("pi0", "pi0w", "board-type=0xc")),
        ("900092", ("pi0", "board-type=0x9")),
        ("a01041", ("pi2", "board-type=0x4")),
        ("d04170", ("pi5", "board-type=0x17")),
        ("000e", ("pi1",)),  # old-style: no type field, so no [board-type=] filter
    ],
)
def test_config_filters(code, filters):
    assert decode_revision(code).config_filters == filters


@pytest.mark.parametrize("text", ["c03114", "0xc03114", "0XC03114", " C03114\n", "\tc03114 "])
def test_input_is_normalised(text):
    rev = decode_revision(text)
    assert rev.code == "c03114"
    assert rev.describe() == "Raspberry Pi 4 Model B rev 1.4, 4 GB, BCM2711, Sony UK"


def test_old_style_code_is_zero_padded():
    assert decode_revision("e").code == "000e"
    assert decode_revision("0x0010").board_type == "B+"


def test_describe_small_boards():
    assert decode_revision("000e").describe() == (
        "Raspberry Pi Model B rev 2.0, 512 MB, BCM2835, Sony UK"
    )
    assert decode_revision("902120").describe() == (
        "Raspberry Pi Zero 2 W rev 1.0, 512 MB, BCM2837, Sony UK"
    )
    assert decode_revision("c03130").describe().startswith("Raspberry Pi 400 rev 1.0, 4 GB")


def test_new_style_warranty_bit_25():
    rev = decode_revision(f"{0x02000000 | 0xA02082:x}")
    assert rev.code == "2a02082"
    assert rev.warranty_voided
    assert rev.board_type == "3B" and rev.memory_mb == 1024
    assert rev.describe().endswith("warranty voided")


def test_old_style_warranty_prefix():
    rev = decode_revision("1000002")
    assert rev.code == "1000002"
    assert rev.warranty_voided
    assert not rev.new_style
    assert rev.board_type == "B" and rev.memory_mb == 256


def test_otp_and_overvoltage_bits():
    rev = decode_revision(f"{(1 << 31) | (1 << 30) | (1 << 29) | 0xC03111:x}")
    assert rev.overvoltage_disallowed and rev.otp_program_disallowed and rev.otp_read_disallowed
    assert rev.board_type == "4B"


def test_memory_other_is_zero():
    rev = decode_revision(f"{0xF03111:x}")  # MMM = 7, "other"
    assert rev.memory_mb == 0
    assert "memory size unknown" in rev.describe()


@pytest.mark.parametrize(
    "garbage",
    ["", "   ", "zz", "0x", "ffffffffff", "-c03114", "c0_3114", "c03114 extra", "0x-1", "\n"],
)
def test_garbage_raises(garbage):
    with pytest.raises(RevisionError, match="revision code"):
        decode_revision(garbage)


@pytest.mark.parametrize(
    "code, fragment",
    [
        ("0000", "unknown old-style"),
        ("0001", "unknown old-style"),
        ("0016", "unknown old-style"),
        ("ffffffff", "unknown board type 0xff"),
        ("a02050", "unknown board type 0x05"),  # Alpha prototype: not a real board
        ("a0f082", "unknown processor 15"),
    ],
)
def test_unknown_codes_raise(code, fragment):
    with pytest.raises(RevisionError, match=fragment):
        decode_revision(code)


def test_non_string_raises_revision_error():
    with pytest.raises(RevisionError):
        decode_revision(0xC03114)  # type: ignore[arg-type]


def test_revision_error_is_value_error():
    assert issubclass(RevisionError, ValueError)


def test_board_revision_is_frozen():
    rev = decode_revision("c03114")
    assert isinstance(rev, BoardRevision)
    with pytest.raises(AttributeError):
        rev.code = "x"  # type: ignore[misc]


@given(st.text(max_size=20))
def test_any_text_decodes_or_raises_revision_error(text):
    try:
        rev = decode_revision(text)
    except RevisionError:
        return
    assert rev.code == text.strip().lower().removeprefix("0x").lstrip("0").zfill(4)


@given(st.integers(min_value=0, max_value=0xFFFFFFFF))
def test_any_32_bit_value_decodes_or_raises_revision_error(value):
    try:
        rev = decode_revision(f"{value:x}")
    except RevisionError:
        return
    families = {"pi0", "pi1", "pi2", "pi3", "pi3p", "pi4", "pi4_r14", "pi400", "pi02", "pi5"}
    assert rev.family in families
    assert rev.describe()
