"""devices.configtxt parse/render: every line kept, sections tracked, same bytes back."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devices.configtxt import parse, render

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"
STOCK = ["bookworm.txt", "bullseye.txt", "dynamic_overclock_pi1.txt"]

# Pieces of real and broken config.txt lines, so generated files look like config files.
FRAGMENTS = [
    "arm_freq=900", "over_voltage = [-2,2]", "[pi4]", "[all]", "[none]", "[EDID=VSC-TD2220]",
    "[board-type=0x11]", "[gpio4=1]", "[tryboot]", "# comment", "", "   ", "force_turbo=1",
    "initramfs initrd.img followkernel", "include extra.txt", "dtoverlay=vc4-kms-v3d",
    "  arm_freq=1000 # fast", "hdmi_mode:1=16", "\x00", "\ufeffarm_freq=800", "[pi4", "=5",
    "sdram_freq=450", "x" * 120, "dtparam=audio=on", "over_voltage=8", "[pi3+]",
]  # fmt: skip
config_lines = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=110)), max_size=40)
endings = st.sampled_from(["\n", "\r\n", "\r", ""])


def kinds(text: str) -> list[tuple[str, str | None, str | None]]:
    return [(line.kind, line.key, line.value) for line in parse(text).lines]


@pytest.mark.parametrize("name", STOCK)
def test_stock_files_render_to_the_same_bytes(name):
    data = (FIXTURES / name).read_bytes()
    assert render(parse(data)) == data


def test_it_reads_the_kinds_of_line():
    text = (
        "# comment\n\ndtparam=audio=on\n[pi4]\ninitramfs initrd.img followkernel\n"
        "include extra.txt\nnonsense\n"
    )
    assert kinds(text) == [
        ("comment", None, None),
        ("blank", None, None),
        ("setting", "dtparam", "audio=on"),  # only the first '=' separates key and value
        ("section", None, "pi4"),
        ("initramfs", "initramfs", "initrd.img followkernel"),
        ("include", "include", "extra.txt"),
        ("malformed", None, None),
    ]


def test_line_numbers_and_raw_text_are_kept():
    lines = parse(b"a=1\r\n  arm_freq = 900 \nlast").lines
    assert [(line.number, line.raw, line.ending) for line in lines] == [
        (1, "a=1", "\r\n"),
        (2, "  arm_freq = 900 ", "\n"),
        (3, "last", ""),
    ]
    assert (lines[1].key, lines[1].value) == ("arm_freq", "900")


def test_hdmi_port_suffix_is_part_of_the_key_but_not_the_name():
    line = parse("hdmi_mode:1=16\n").lines[0]
    assert (line.key, line.name, line.value) == ("hdmi_mode:1", "hdmi_mode", "16")


def test_repeated_keys_and_unknown_keys_are_all_kept_in_order():
    assert [line.key for line in parse("a=1\nzzz=2\na=3\n").settings()] == ["a", "zzz", "a"]


def test_each_line_knows_the_filters_in_force():
    text = "x=0\n[pi4]\na=1\n[pi400]\nb=2\n[EDID=VSC-TD2220]\nc=3\n[all]\nd=4\n[none]\n[pi2]\ne=5\n"
    filters = {line.key: line.filters for line in parse(text).settings()}
    assert filters == {
        "x": (),
        "a": ("pi4",),
        "b": ("pi400",),  # same type: [pi400] replaces [pi4]
        "c": ("pi400", "EDID=VSC-TD2220"),  # different types combine
        "d": (),  # [all] clears every filter
        "e": ("none", "pi2"),  # [none] stays in force until [all]
    }


def test_a_section_line_carries_the_filters_after_it():
    section = parse("[pi4]\n").lines[0]
    assert (section.kind, section.value, section.filters) == ("section", "pi4", ("pi4",))


def test_non_utf8_and_nul_bytes_survive():
    data = b"arm_freq=900\n# caf\xe9 \x00\xff\n\xef\xbb\xbfx=1"
    assert render(parse(data)) == data


def test_a_byte_order_mark_does_not_hide_the_first_setting_from_the_parser():
    line = parse("\ufeffarm_freq=800\n").lines[0]
    assert (line.kind, line.key, line.raw) == ("setting", "arm_freq", "\ufeffarm_freq=800")


def test_only_newline_ends_a_line():
    # str.splitlines would also split on these; the firmware does not (inference).
    assert len(parse("a=1\x0bb=2\x1cc\u2028d\n").lines) == 1


def test_empty_input_has_no_lines():
    assert parse(b"").lines == ()
    assert render(parse(b"")) == b""


@given(st.binary(max_size=3000))
def test_no_bytes_crash_the_parser_and_rendering_gives_them_back(data):
    assert render(parse(data)) == data


@given(config_lines, endings)
def test_config_like_text_round_trips(lines, ending):
    text = ending.join(lines)
    assert render(parse(text)) == text.encode("utf-8", "surrogatepass")


@given(st.text(max_size=500))
def test_any_str_round_trips_as_its_utf8_bytes(text):
    assert render(parse(text)) == text.encode("utf-8", "surrogatepass")
