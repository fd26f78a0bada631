"""devices.configtxt: a preset's lines and pifarm's one managed block in a board's config.txt."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devices.configtxt import (
    WARRANTY_ACK,
    apply_block,
    effective_settings,
    managed_settings,
    preset_options,
    remove_block,
    settings_text,
    validate,
)
from devices.configtxt.blocks import BEGIN_MARKER, END_MARKER

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"
BOOKWORM = (FIXTURES / "bookworm.txt").read_bytes()
BULLSEYE = (FIXTURES / "bullseye.txt").read_bytes()
PRESET = settings_text({"arm_freq": 900, "core_freq": 300, "sdram_freq": 450})


def test_settings_text_has_a_stable_order_whatever_the_dict_order():
    a = settings_text({"sdram_freq": 450, "zz_custom": "x", "arm_freq": 900, "force_turbo": 0})
    b = settings_text({"force_turbo": 0, "arm_freq": 900, "zz_custom": "x", "sdram_freq": 450})
    assert a == b == "arm_freq=900\nsdram_freq=450\nforce_turbo=0\nzz_custom=x\n"


def test_settings_text_takes_strings_as_the_models_store_them():
    assert settings_text({"arm_freq": "900", "arm_boost": True}) == "arm_freq=900\narm_boost=1\n"


def test_settings_text_says_when_the_warranty_bit_is_acknowledged():
    text = settings_text({"force_turbo": 1, "over_voltage": 6}, acknowledge_warranty=True)
    assert text.splitlines() == [WARRANTY_ACK, "over_voltage=6", "force_turbo=1"]


@pytest.mark.parametrize(
    "bad",
    [{"arm_freq": "900\nforce_turbo=1"}, {"bad key": 1}, {"arm_freq=1": 1}, {"x": 1.5}],
)
def test_settings_text_refuses_what_would_make_other_lines(bad):
    with pytest.raises(ValueError):
        settings_text(bad)


def test_the_block_goes_at_the_end_between_markers_opened_and_closed_with_all():
    applied = apply_block(BOOKWORM, PRESET, "dynamic v2")
    assert applied.startswith(BOOKWORM)
    assert applied[len(BOOKWORM) :].decode().splitlines() == [
        f"{BEGIN_MARKER} dynamic v2",
        "[all]",
        "arm_freq=900",
        "core_freq=300",
        "sdram_freq=450",
        "[all]",
        END_MARKER,
    ]


def test_applying_again_replaces_the_block():
    once = apply_block(BULLSEYE, PRESET, "v1")
    twice = apply_block(once, settings_text({"arm_freq": 1000}), "v2")
    assert twice.count(b"pifarm managed block") == 2  # one start marker, one end marker
    assert managed_settings(twice) == {"arm_freq": "1000"}
    assert remove_block(twice) == BULLSEYE


@pytest.mark.parametrize(
    "original",
    [BOOKWORM, BULLSEYE, b"", b"arm_freq=800", b"a=1\r\nb=2\r\n", b"[pi4]\narm_boost=1\n", b"\n"]
    + [b"\r", b"a=1\nb=2\r", b"a=1\r\nb=2\r", b"a=1\r\nb=2"],
)
def test_removing_the_block_gives_back_the_original_bytes(original):
    assert remove_block(apply_block(original, PRESET, "p")) == original


@pytest.mark.parametrize("original", [BOOKWORM, b"arm_freq=800", b"a=1\r\nb=2\r"])
def test_a_preset_of_no_lines_leaves_no_block_and_gives_back_the_original(original):
    # The stock preset: applying it is removing pifarm's block, not writing an empty one.
    assert apply_block(original, "", "stock v1") == original
    assert apply_block(apply_block(original, PRESET, "p"), "", "stock v1") == original
    assert apply_block(original, f"{WARRANTY_ACK}\n", "stock v1") == original


def test_a_file_without_final_newline_keeps_its_last_line_intact():
    applied = apply_block(b"arm_freq=800", PRESET, "p")
    assert applied.startswith(b"arm_freq=800\n# >>> pifarm")
    assert not applied.endswith(b"\n")


def test_the_block_follows_the_files_line_endings():
    applied = apply_block(b"a=1\r\n", PRESET, "p")
    assert applied.count(b"\r\n") == applied.count(b"\n") == 8


def test_lines_added_after_the_block_by_hand_survive_reapplying():
    applied = apply_block(BOOKWORM, PRESET, "p") + b"dtoverlay=disable-bt\n"
    again = apply_block(applied, PRESET, "p")
    assert again.startswith(BOOKWORM + b"dtoverlay=disable-bt\n")
    assert remove_block(again) == BOOKWORM + b"dtoverlay=disable-bt\n"


def test_the_block_escapes_a_section_the_file_left_open():
    applied = apply_block(b"[pi4]\narm_boost=1\n", PRESET, "p")
    assert effective_settings(applied, "pi1") == {
        "arm_freq": "900",
        "core_freq": "300",
        "sdram_freq": "450",
    }
    assert validate(applied, "pi1") == []


def test_a_stock_file_with_a_block_adds_only_the_presets_own_findings():
    preset = settings_text({"arm_freq_min": 500, "arm_freq": 900, "sdram_freq": 450})
    applied = apply_block(BULLSEYE, preset, "dynamic")
    findings = validate(applied, "pi1")
    assert [(f.severity, f.message.split("=")[0]) for f in findings] == [
        ("warning", "arm_freq_min")
    ]


def test_the_acknowledgment_travels_with_the_block():
    preset = settings_text({"force_turbo": 1, "over_voltage": 2}, acknowledge_warranty=True)
    applied = apply_block(BOOKWORM, preset, "turbo")
    assert [f.severity for f in validate(applied, "pi3")] == ["warning"]
    assert [
        f.severity
        for f in validate(remove_block(applied) + b"force_turbo=1\nover_voltage=2\n", "pi3")
    ] == ["error"]


def test_a_long_label_is_cut_to_fit_the_line_limit():
    applied = apply_block(b"", PRESET, "l\u00e4bel " * 40)
    assert max(len(line) for line in applied.splitlines()) <= 98
    assert validate(applied, "pi1") == []


@pytest.mark.parametrize(
    "damaged",
    [
        f"{BEGIN_MARKER} p\n[all]\narm_freq=900\n",
        f"x=1\n{END_MARKER}\n",
        f"{END_MARKER}\n{BEGIN_MARKER} p\n",
        f"{BEGIN_MARKER} a\n{END_MARKER}\n{BEGIN_MARKER} b\n{END_MARKER}\n",
    ],
)
def test_damaged_markers_raise_instead_of_guessing(damaged):
    with pytest.raises(ValueError, match="markers of pifarm's managed block"):
        remove_block(damaged.encode())
    with pytest.raises(ValueError):
        apply_block(damaged.encode(), PRESET, "p")


def test_preset_text_with_markers_or_filters_is_refused():
    with pytest.raises(ValueError, match="markers"):
        apply_block(b"", f"{END_MARKER}\n", "p")
    with pytest.raises(ValueError, match="filters"):
        apply_block(b"", "[pi4]\narm_freq=900\n", "p")


def test_managed_settings_of_a_file_without_a_block_is_empty():
    assert managed_settings(BOOKWORM) == {}


def test_preset_options_reads_typed_lines():
    text = "# dynamic\narm_freq=900\n\n[all]\ncore_freq = 300\n" + WARRANTY_ACK + "\n"
    assert preset_options(text) == {"arm_freq": "900", "core_freq": "300"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("arm_freq=900\narm_freq=1000\n", "line 2: arm_freq is already set on line 1"),
        ("[pi4]\narm_freq=900\n", "line 1: a preset applies to the whole board"),
        ("arm_freq\n", "line 1: expected option=value, got 'arm_freq'"),
        ("include x.txt\n", "line 1: include is not allowed in a preset"),
    ],
)
def test_preset_options_refuses_what_a_preset_cannot_hold(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        preset_options(text)


def test_preset_options_and_settings_text_round_trip():
    options = {"arm_freq": "900", "over_voltage": "-2", "dtparam": "audio=on"}
    assert preset_options(settings_text(options)) == options


original_files = st.binary(max_size=1500).filter(lambda data: b"pifarm managed" not in data)
labels = st.text(max_size=60)
presets = st.dictionaries(
    st.sampled_from(["arm_freq", "core_freq", "over_voltage", "gpu_mem", "my_option"]),
    st.one_of(st.integers(-20, 5000), st.from_regex(r"[a-z0-9,=.]{0,20}", fullmatch=True)),
    max_size=5,
)


@given(original_files, presets, labels)
def test_apply_then_remove_is_the_identity(original, preset, label):
    applied = apply_block(original, settings_text(preset), label)
    assert remove_block(applied) == original
    assert apply_block(applied, settings_text(preset), label) == applied
    assert managed_settings(applied) == {k: str(v).strip() for k, v in preset.items()}
