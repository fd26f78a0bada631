"""devices.configtxt.validate: findings for one board, each true and with its line number."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devices.configtxt import (
    WARRANTY_ACK,
    Finding,
    board_context,
    validate,
    validate_preset,
    validate_preset_text,
)
from devices.configtxt.board_checks import underclock_warnings
from devices.configtxt.rules import FAMILIES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"
BOARDS = [*FAMILIES, "c03114", "a03140", "d04170", "000e", "902120"]
DYNAMIC_PI1 = {
    "arm_freq_min": 500, "arm_freq": 900, "core_freq_min": 200, "core_freq": 300,
    "gpu_freq_min": 200, "sdram_freq_min": 350, "sdram_freq": 450,
}  # fmt: skip


def errors(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.severity == "error"]


def found(text: str | bytes, board: str = "pi4") -> list[tuple[int | None, str, str]]:
    return [(f.line, f.severity, f.message) for f in validate(text, board)]


def test_dynamic_overclock_preset_on_a_pi1_has_no_errors_and_only_a_true_warning():
    findings = validate((FIXTURES / "dynamic_overclock_pi1.txt").read_bytes(), "pi1")
    # overclocking.adoc: an arm_freq_min below the default "is not currently supported".
    assert [(f.line, f.severity) for f in findings] == [(3, "warning")]
    assert "arm_freq_min=500 is below the pi1 default of 700" in findings[0].message


@pytest.mark.parametrize("board", ["pi1", "0002", "000e", "0010", "900032"])
def test_dynamic_overclock_preset_as_a_preset_on_pi1_boards(board):
    findings = validate_preset(DYNAMIC_PI1, board)
    assert errors(findings) == []
    assert [f.message.split("=")[0] for f in findings] == ["arm_freq_min"]


def test_dynamic_overclock_preset_on_a_pi4_warns_that_sdram_settings_do_nothing():
    messages = [f.message for f in validate_preset(DYNAMIC_PI1, "pi4")]
    assert any(m.startswith("sdram_freq does nothing on pi4") for m in messages)
    assert any(m.startswith("sdram_freq_min does nothing on pi4") for m in messages)


def test_a_range_instead_of_a_value_is_an_error():
    assert found("over_voltage = [-2,2]\n", "pi1") == [
        (1, "warning", "spaces around '=': the firmware may not read the line"),
        (1, "error", "over_voltage takes one integer, not a range like [-2,2]"),
    ]


@pytest.mark.parametrize("name", ["bookworm.txt", "bullseye.txt"])
@pytest.mark.parametrize("board", BOARDS)
def test_stock_files_have_no_findings_on_any_board(name, board):
    assert validate((FIXTURES / name).read_bytes(), board) == []


@pytest.mark.parametrize(
    "option",
    ["dtoverlay=vc4-kms-v3d", "dtparam=audio=on", "camera_auto_detect=1",
     "display_auto_detect=1", "auto_initramfs=1", "disable_overscan=1", "max_framebuffers=2",
     "arm_boost=1", "otg_mode=1", "gpu_mem=128", "enable_uart=1", "hdmi_group:1=2",
     "gpio=12=op,dh", "decode_MPG2=0x12345678", "dtoverlay="],
)  # fmt: skip
def test_legitimate_options_of_stock_and_common_files_do_not_warn(option):
    assert validate(option + "\n", "pi4") == []


def test_unknown_options_warn_with_a_hint_where_there_is_one():
    assert found("arm_frequency=900\nArm_freq=900\ngovernor=ondemand\n") == [
        (1, "warning", "unknown option arm_frequency: not a documented config.txt option"),
        (
            2,
            "warning",
            "unknown option Arm_freq: names are case-sensitive (did you mean arm_freq?)",
        ),
        (
            3,
            "warning",
            "unknown option governor: the CPU governor is not a config.txt option: it is set "
            "in Linux (cpufreq.default_governor= in cmdline.txt, or /etc/default/cpu_governor)",
        ),
    ]


def test_malformed_lines_are_errors():
    result = found("arm_freq\n[pi4\n=5\n")
    assert [(line, severity) for line, severity, _ in result] == [
        (1, "error"),
        (2, "error"),
        (3, "error"),
    ]
    assert result[0][2] == "cannot read this line (expected option=value): arm_freq"


def test_lines_over_98_characters_are_errors_even_comments():
    text = "# " + "x" * 97 + "\n" + "cmdline=" + "c" * 90 + "\n" + "#" + "y" * 97 + "\n"
    assert found(text) == [
        (1, "error", "the line is 99 characters long; the firmware reads only 98"),
    ]


def test_inline_comments_and_leading_spaces_warn():
    assert found("arm_freq=1000 # fast\n  arm_boost=1\n[all] # back\n") == [
        (1, "warning", "inline comments are not supported: put the comment on its own line"),
        (2, "warning", "the line starts with spaces: the firmware may not read it"),
        (3, "warning", "inline comments are not supported: put the comment on its own line"),
    ]


def test_an_inline_comment_does_not_make_an_integer_invalid():
    # The firmware stops reading an integer at the first non-digit.
    assert errors(validate("arm_freq=1000 # fast\n", "pi4")) == []


def test_bad_bytes_and_big_files_are_errors():
    assert found(b"# caf\xe9\nx\x00=1\n")[:2] == [
        (1, "error", "the line is not valid UTF-8"),
        (2, "error", "the line holds a NUL byte"),
    ]
    big = b"# filler line\n" * 5000
    assert found(big) == [(None, "error", "the file is 70,000 bytes, over the 64 KiB limit")]


def test_a_byte_order_mark_is_an_error_when_it_hides_a_setting():
    assert found("\ufeffarm_freq=800\n")[0][:2] == (1, "error")
    assert found("\ufeff# comment\n")[0][:2] == (1, "warning")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("over_voltage=9", "over_voltage=9 is outside the documented range -16..8"),
        ("force_turbo=2", "force_turbo=2 is outside the documented range 0..1"),
        ("initial_turbo=61", "initial_turbo=61 is outside the documented range 0..60"),
        ("gpu_mem=8", "gpu_mem=8 is outside the documented range (at least 16)"),
        ("arm_freq=fast", "arm_freq=fast is not an integer"),
        ("arm_freq=", "arm_freq needs an integer value"),
        ("enable_uart=on", "enable_uart=on is not an integer"),
    ],
)
def test_values_outside_the_range_or_not_integers_are_errors(line, message):
    assert found(line + "\n", "pi3") == [(1, "error", message)]


def test_hex_and_negative_integers_are_integers():
    assert validate("over_voltage=-2\nhdmi_ignore_edid=0xa5000080\n", "pi3") == []


@pytest.mark.parametrize(
    ("line", "board", "message"),
    [
        ("sdram_freq=3200", "pi4", "sdram_freq does nothing on pi4: the SDRAM frequency cannot"),
        ("over_voltage_sdram=2", "pi5", "over_voltage_sdram does nothing on pi5: SDRAM volt"),
        ("hevc_freq=550", "pi3", "hevc_freq does nothing on pi3: there is no HEVC block"),
        ("h264_freq=600", "pi5", "h264_freq does nothing on pi5: a Pi 5 has no H.264"),
        ("temp_soft_limit=65", "pi3", "temp_soft_limit does nothing on pi3: it exists only"),
        ("dvfs=3", "pi5", "dvfs does nothing on pi5: it exists only on Pi 4"),
        ("over_voltage_delta=50000", "pi3", "over_voltage_delta does nothing on pi3"),
    ],
)
def test_options_that_do_nothing_on_the_board_warn(line, board, message):
    result = found(line + "\n", board)
    assert [(n, severity) for n, severity, _ in result] == [(1, "warning")]
    assert result[0][2].startswith(message)


def test_the_same_options_do_not_warn_where_they_work():
    text = "sdram_freq=450\nover_voltage_sdram=2\ntemp_soft_limit=65\n"
    assert validate(text, "pi3p") == []
    assert validate("hevc_freq=550\ndvfs=3\nover_voltage_delta=50000\n", "pi4") == []


def test_a_setting_under_a_filter_that_does_not_match_is_reported():
    text = "[pi4]\narm_boost=1\narm_freq=900\n[all]\ncore_freq=300\n"
    assert found(text, "pi1") == [
        (
            3,
            "warning",
            "arm_freq is under [pi4], which does not match this board (pi1): the firmware "
            "skips it (add [all] before it if it is meant for every board)",
        ),
    ]
    assert validate(text, "pi4") == []


def test_board_type_filters_need_a_revision_code_to_be_exact():
    text = "[board-type=0x11]\narm_freq=1800\n"
    assert validate(text, "c03114") == []
    assert [m for _, _, m in found(text, "a03140")][0].startswith("arm_freq is under")  # CM4
    assert found("[board-type=0x11]\narm_freq=1800\n", "pi1")[0][0] == 2


def test_a_revision_code_matches_the_model_filters_of_its_board():
    text = "[pi400]\narm_freq=2000\n[cm4]\ncore_freq=400\n[all]\n"
    assert [line for line, _, _ in found(text, "c03130")] == [4]  # a 400 sees [pi400]
    assert [line for line, _, _ in found(text, "a03140")] == [2]  # a CM4 sees [cm4]


def test_warranty_bit_combinations_are_errors_unless_acknowledged():
    text = "force_turbo=1\nover_voltage=2\n"
    message = "force_turbo=1 with over_voltage=2 (line 2) sets the permanent warranty bit"
    assert found(text, "pi3") == [(1, "error", message + "; acknowledge it if that is intended")]
    assert [(f.severity, f.message) for f in validate(text, "pi3", True)] == [
        ("warning", message + " (acknowledged)")
    ]
    assert errors(validate(WARRANTY_ACK + "\n" + text, "pi3")) == []


def test_force_turbo_alone_or_over_voltage_alone_is_not_a_warranty_error():
    assert validate("force_turbo=1\nover_voltage=0\n", "pi3") == []
    assert validate("over_voltage=6\nforce_turbo=0\n", "pi3") == []


def test_any_over_voltage_option_with_force_turbo_sets_the_bit():
    assert found("over_voltage_sdram_p=1\nforce_turbo=1\n", "pi2")[0][1] == "error"


def test_over_voltage_above_6_needs_force_turbo_and_sets_the_bit():
    assert found("over_voltage=7\n", "pi2") == [
        (
            1,
            "error",
            "over_voltage=7: values above 6 are only accepted with force_turbo=1, which sets "
            "the permanent warranty bit; acknowledge it if that is intended",
        )
    ]
    assert found("over_voltage=8\nforce_turbo=1\n", "pi2")[0][1] == "error"


def test_warranty_check_counts_lines_that_only_may_apply():
    assert errors(validate("over_voltage=2\n[tryboot]\nforce_turbo=1\n", "pi3"))
    # ...but not lines in sections that cannot match this board
    assert not errors(validate("over_voltage=2\n[pi4]\nforce_turbo=1\n", "pi3"))


def test_the_later_line_wins_for_the_warranty_check():
    assert not errors(validate("force_turbo=1\nover_voltage=2\nforce_turbo=0\n", "pi3"))


def test_preset_acknowledgment_turns_the_error_into_a_warning():
    preset = {"force_turbo": 1, "over_voltage": 6, "arm_freq": 1000}
    assert errors(validate_preset(preset, "pi1")) != []
    assert errors(validate_preset(preset, "pi1", acknowledge_warranty=True)) == []
    assert errors(validate_preset_text("force_turbo=1\nover_voltage=6\n", "pi1", True)) == []


def test_pi4_core_freq_limit_depends_on_hdmi_enable_4kp60():
    assert found("core_freq=550\n", "pi4") == [
        (
            1,
            "error",
            "core_freq=550 is above the Pi 4 maximum of 500 (550 with hdmi_enable_4kp60=1)",
        )
    ]
    assert validate("hdmi_enable_4kp60=1\ncore_freq=550\n", "pi4") == []
    assert found("hdmi_enable_4kp60=1\ncore_freq=600\n", "pi400")[0][1] == "error"
    assert validate("core_freq=550\n", "pi3") == []


def test_observed_limits_and_clamps_warn():
    assert found("arm_freq=1700\n", "pi3")[0][2].startswith("arm_freq=1700 is above 1600")
    assert found("temp_limit=90\n", "pi4")[0][2] == (
        "temp_limit=90 is above 85: the firmware clamps it to 85"
    )


def test_board_specific_cautions_are_warnings():
    assert found("over_voltage=4\n", "pi4")[0][2].startswith("on Pi 4, setting over_voltage")
    assert found("over_voltage=4\n", "pi5")[0][2].startswith("over_voltage is deprecated on Pi 5")
    assert found("never_over_voltage=1\n", "pi3")[0][2].startswith("never_over_voltage=1 forbids")
    assert validate("over_voltage=4\n", "pi3") == []


def test_a_minimum_above_its_maximum_warns():
    assert found("arm_freq=900\narm_freq_min=1000\n", "pi3") == [
        (
            2,
            "warning",
            "arm_freq_min=1000 is above arm_freq=900 (line 1): the idle value exceeds the busy one",
        )
    ]


def test_include_and_initramfs_lines():
    assert found("include extra.txt\ninitramfs initrd.img followkernel\n") == [
        (
            1,
            "warning",
            "include extra.txt: pifarm does not read included files, so their settings "
            "are not checked",
        )
    ]
    assert found("initramfs initrd.img\ninitramfs=initrd.img\n")[0][0:2] == (1, "warning")
    assert found("initramfs=initrd.img\n")[0][2].startswith("initramfs takes a space, not '='")


def test_unknown_filters_warn():
    assert [m for _, _, m in found("[pi6]\n[foo bar]\n[board-type=x]\n")] == [
        "[pi6] is not a known model filter (cm4, cm4s, cm5, pi0, pi02, pi0w, pi1, pi2, pi3, "
        "pi3+, pi4, pi400, pi5, pi500)",
        "[foo bar] is not a documented filter: what follows may never apply",
        "[board-type=x] needs a board type number such as 0x11",
    ]


def test_findings_are_in_line_order_with_file_findings_first():
    text = b"zz=1\n" + b"# filler\n" * 8000 + b"over_voltage=99\n"
    lines = [f.line for f in validate(text, "pi3")]
    assert lines == sorted(lines, key=lambda n: n or 0) and lines[0] is None


def test_finding_prints_as_the_command_line_format():
    assert str(Finding(3, "error", "bad")) == "3: error: bad"
    assert str(Finding(None, "error", "big")) == "-: error: big"


@pytest.mark.parametrize("model", ["pi6", "5", "4b", "", "zzzzzz", "ffffff"])
def test_unknown_boards_raise_a_clear_value_error(model):
    with pytest.raises(ValueError, match="unknown board .* give a family .* or a revision code"):
        validate("arm_freq=900\n", model)


def test_board_context_for_families_and_codes():
    pi1 = board_context("pi1")
    assert (pi1.family, pi1.filters, pi1.board_type) == ("pi1", ("pi1",), 0x03)
    code = board_context("0xC03114")
    assert (code.family, code.filters, code.board_type) == ("pi4_r14", ("pi4",), 0x11)
    assert board_context("pi3+").family == "pi3p"
    assert board_context("a03140").filters == ("pi4", "cm4")
    assert board_context("000e").board_type is None


@settings(deadline=None, max_examples=150)
@given(st.binary(max_size=2000), st.sampled_from(BOARDS))
def test_no_input_crashes_validation_and_messages_are_printable(data, board):
    for finding in validate(data, board):
        assert finding.severity in ("error", "warning")
        assert finding.message.isprintable()
        finding.message.encode("utf-8")  # no lone surrogates from undecodable bytes


# Input that costs too much, or says more than it is: issue 6, item 4.


def test_a_file_over_the_size_limit_gets_one_finding_and_no_line_is_read():
    flood = b"".join(b"k%d=1\n" % i for i in range(100_000))  # 100,000 unknown options
    assert found(flood) == [
        (None, "error", f"the file is {len(flood):,} bytes, over the 64 KiB limit")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "arm_freq=" + "9" * 5000,
        "arm_freq=-" + "9" * 5000 + " # far",
        "over_voltage=" + "9" * 4301,
    ],
)
def test_an_integer_of_thousands_of_digits_is_an_error_not_a_crash(text):
    findings = validate(text, "c03114")
    assert any(f.severity == "error" and "digits" in f.message for f in findings)
    assert all(len(f.message) < 200 for f in findings)


def test_a_board_type_filter_of_thousands_of_digits_is_not_a_crash():
    findings = validate("[board-type=" + "1" * 5000 + "]\narm_freq=900\n", "c03114")
    assert "needs a board type number" in findings[1].message


def test_a_frequency_far_above_the_family_maximum_is_an_error():
    result = found("arm_freq=99999999999999999999999999999\n", "pi4")
    assert [(line, severity) for line, severity, _ in result] == [(1, "error")]
    assert "far above" in result[0][2]
    # an overclock a little above the reported limits still only warns
    assert [severity for _, severity, _ in found("arm_freq=2600\n", "pi4")] == ["warning"]
    # a minimum pinned to its maximum is an ordinary dynamic-clock setting
    assert errors(validate("arm_freq=2000\narm_freq_min=2000\n", "pi4")) == []


@pytest.mark.parametrize(
    "line",
    ["kernel=evil.img", "cmdline=other.txt", "os_prefix=x/", "start_file=start4x.elf",
     "fixup_file=fixup4x.dat", "device_tree=bcm.dtb", "initramfs=initrd.img", "boot_partition=2",
     "armstub=stub.bin", "ramfsfile=initrd", "arm_64bit=0", "kernel_address=0x80000"],
)  # fmt: skip
def test_options_that_decide_what_boots_are_errors_in_a_preset_unless_acknowledged(line):
    assert [f.severity for f in validate_preset_text(line, "pi4") if "boots" in f.message] == [
        "error"
    ]
    acknowledged = validate_preset_text(line, "pi4", acknowledge_boot=True)
    assert errors(acknowledged) == []
    assert any("boots" in f.message for f in acknowledged)


def test_boot_options_in_a_board_file_are_not_preset_findings():
    assert validate("kernel=kernel8.img\narm_64bit=1\n", "pi4") == []


@pytest.mark.parametrize(
    "line", ["hdmi_group=3", "hdmi_drive=7", "config_hdmi_boost=12", "sdtv_aspect=9"]
)
def test_an_out_of_range_display_value_cannot_stop_a_boot_so_it_only_warns(line):
    result = found(line + "\n")
    assert [severity for _, severity, _ in result] == ["warning"]
    assert "outside the documented range" in result[0][2]


def test_characters_past_the_98th_that_are_only_spaces_warn():
    assert found("arm_freq=900" + " " * 100 + "\n") == [
        (
            1,
            "warning",
            "the line is 112 characters long; past the 98th there are only spaces, "
            "which the firmware ignores",
        ),
    ]
    assert found("# " + "x" * 97 + " " * 5 + "\n")[0][1] == "error"


# raspberry-pi.yaml: overclocking.options.<clock>.defaults (pi3: arm 1200, core 400, sdram 450)
CLASSIC_ON_A_PI3 = {"arm_freq": "900", "core_freq": "300", "sdram_freq": "450"}
UNDERCLOCK_900 = "arm_freq 900 is below this board's default of 1200 MHz: an underclock"


def test_clocks_below_the_boards_own_defaults_are_underclocks():
    assert underclock_warnings(CLASSIC_ON_A_PI3, "pi3") == [
        UNDERCLOCK_900,
        "core_freq 300 is below this board's default of 400 MHz: an underclock",
    ]
    assert underclock_warnings(CLASSIC_ON_A_PI3, "a02082") == underclock_warnings(
        CLASSIC_ON_A_PI3, "pi3"
    )  # a revision code names its family
    assert underclock_warnings(CLASSIC_ON_A_PI3, "pi1") == []  # 700/250/400 there


def test_sdram_and_gpu_clocks_are_held_to_the_defaults_the_yaml_gives():
    assert underclock_warnings({"sdram_freq": 400}, "pi3") == [
        "sdram_freq 400 is below this board's default of 450 MHz: an underclock"
    ]
    assert underclock_warnings({"sdram_freq": 400}, "pi4") == []  # not settable on a Pi 4
    # gpu_freq has no defaults of its own; it sets core_freq with the block clocks
    assert underclock_warnings({"gpu_freq": 300}, "pi3") == [
        "gpu_freq 300 sets the core clock below this board's default core_freq of 400 MHz: "
        "an underclock"
    ]
    assert underclock_warnings({"gpu_freq": 300, "core_freq": 400}, "pi3") == []
    assert underclock_warnings({"arm_freq": 1200, "arm_freq_min": 300}, "pi3") == []


def test_a_presets_underclock_is_a_warning_on_its_line_for_the_board():
    findings = validate_preset_text("# slow\narm_freq=900\n", "pi3")
    assert [(f.line, f.severity, f.message) for f in findings] == [(2, "warning", UNDERCLOCK_900)]
    assert errors(validate_preset(CLASSIC_ON_A_PI3, "pi3")) == []
    assert validate_preset_text("arm_freq=900\n", "pi2") == []  # pi2's own default
    assert validate("arm_freq=900\n", "pi3") == []  # a board's own file runs as it likes
