"""devices.vcgencmd: parsers for real vcgencmd output (pure; no Django, no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devices.vcgencmd import (
    ThrottleFlag,
    VcgencmdError,
    decode_throttled,
    parse_clock,
    parse_get_config,
    parse_temp,
    parse_throttled,
    parse_version,
    parse_volts,
    throttle_summary,
)

NOT_REGISTERED = 'error=1 error_msg="Command not registered"\n'


@pytest.mark.parametrize(
    "line, hz",
    [
        ("frequency(48)=1500345728", 1500345728),  # Pi 4
        ("frequency(45)=1200000000\n", 1200000000),  # Pi 3
        ("frequency(0)=2400033792", 2400033792),  # Pi 5: the id is 0
        ("frequency(1)=250000000", 250000000),
        ("frequency(29)=0", 0),  # a clock that is off
    ],
)
def test_parse_clock(line, hz):
    assert parse_clock(line) == hz


@pytest.mark.parametrize(
    "line, celsius",
    [("temp=48.3'C", 48.3), ("temp=-1.0'C\n", -1.0), ("temp=85.0'C", 85.0), ("temp=47'C", 47.0)],
)
def test_parse_temp(line, celsius):
    assert parse_temp(line) == celsius


@pytest.mark.parametrize(
    "line, volts",
    [
        ("volt=0.8700V", 0.87),
        ("volt=1.2000V\n", 1.2),
        ("volt=1.35V", 1.35),
        ("     EXT5V_V volt(24)=5.05716000V", 5.05716),  # Pi 5 pmic_read_adc line
    ],
)
def test_parse_volts(line, volts):
    assert parse_volts(line) == pytest.approx(volts)


@pytest.mark.parametrize(
    "line, value",
    [("throttled=0x0", 0), ("throttled=0x50000\n", 0x50000), ("throttled=0x50005", 0x50005)],
)
def test_parse_throttled(line, value):
    assert parse_throttled(line) == value


def test_decode_throttled_50000():
    flags = decode_throttled(0x50000)
    assert flags == [
        ThrottleFlag(16, False, "under-voltage has occurred since boot"),
        ThrottleFlag(18, False, "throttling has occurred since boot"),
    ]


def test_decode_throttled_every_known_bit():
    flags = decode_throttled(0xF000F)
    assert [flag.bit for flag in flags] == [0, 1, 2, 3, 16, 17, 18, 19]
    assert [flag.now for flag in flags] == [True] * 4 + [False] * 4
    assert flags[0].words == "under-voltage detected now"
    assert flags[5].words == "Arm frequency capped has occurred since boot"
    assert flags[3].words == "soft temperature limit active now"


def test_decode_throttled_keeps_unknown_bits():
    flags = decode_throttled(1 << 20)
    assert flags == [ThrottleFlag(20, False, "unknown throttle flag bit 20")]


def test_throttle_summary():
    assert throttle_summary(0) == "OK"
    assert throttle_summary(0x50005) == (
        "under-voltage detected now; throttled now; "
        "under-voltage has occurred since boot; throttling has occurred since boot"
    )


@pytest.mark.parametrize("bad", [-1, 1 << 32, True, "0x5", None, 1.0])
def test_decode_throttled_rejects_non_values(bad):
    with pytest.raises(VcgencmdError):
        decode_throttled(bad)


@pytest.mark.parametrize(
    "parser",
    [parse_clock, parse_temp, parse_volts, parse_throttled, parse_get_config, parse_version],
)
def test_command_not_registered_is_an_error(parser):
    with pytest.raises(VcgencmdError, match="Command not registered"):
        parser(NOT_REGISTERED)


@pytest.mark.parametrize(
    "parser, garbage",
    [
        (parse_clock, "frequency(48)="),
        (parse_clock, "frequency=1500"),
        (parse_clock, "frequency(48)=1" + "0" * 5000),
        (parse_temp, "temp=48.3C"),
        (parse_temp, "temp=hot'C"),
        (parse_volts, "volt=0.87"),
        (parse_throttled, "throttled=50000"),
        (parse_throttled, "throttled=0x"),
        (parse_throttled, "throttled=0x123456789"),
        (parse_temp, ""),
        (parse_clock, "vc_gencmd_read_response returned -1"),
        (parse_temp, "VCHI initialization failed"),
        (parse_get_config, "ioctl_set_msg failed:-1"),
        (parse_get_config, ""),
        (parse_get_config, "arm_freq=1500\nthis is not a setting\n"),
        (parse_version, "Mar 17 2023 10:52:00\nCopyright (c) 2012 Broadcom\n"),
        (parse_temp, None),
        (parse_clock, 1500),
    ],
)
def test_garbage_raises_vcgencmd_error(parser, garbage):
    with pytest.raises(VcgencmdError):
        parser(garbage)


def test_error_messages_are_readable():
    with pytest.raises(VcgencmdError, match=r"measure_temp: unexpected output 'temp=hot'"):
        parse_temp("temp=hot")
    with pytest.raises(VcgencmdError, match="measure_clock: unexpected output 'empty output'"):
        parse_clock("  \n")


def test_bytes_are_accepted():
    assert parse_throttled(b"throttled=0x0\n") == 0


GET_CONFIG_INT = """arm_64bit=1
arm_boost=1
arm_freq=1500
audio_pwm_mode=514
config_hdmi_boost=5
core_freq=500
core_freq_min=200
init_uart_clock=0x2dc6c00
mask_gpu_interrupt1=0x10000
over_voltage_avs=-40000
total_mem=4096
hdmi_force_cec_address:0=65535
hdmi_force_cec_address:1=65535
hdmi_pixel_freq_limit:0=0x11e1a300

"""

GET_CONFIG_STR = """device_tree=-
overlay_prefix=overlays/
hdmi_cvt:0=
hdmi_cvt:1=
hdmi_edid_filename:0=
hdmi_timings:0=1920 0 88 44 148 1080 0 4 5 36 0 0 0 60 0 148500000 3
"""


def test_parse_get_config_int():
    values = parse_get_config(GET_CONFIG_INT)
    assert values["arm_freq"] == "1500"
    assert values["init_uart_clock"] == "0x2dc6c00"
    assert values["over_voltage_avs"] == "-40000"
    assert values["hdmi_force_cec_address:1"] == "65535"
    assert values["hdmi_pixel_freq_limit:0"] == "0x11e1a300"
    assert len(values) == 14


def test_parse_get_config_str_keeps_empty_values_and_spaces():
    values = parse_get_config(GET_CONFIG_STR)
    assert values["device_tree"] == "-"
    assert values["hdmi_cvt:0"] == ""
    assert values["hdmi_timings:0"].startswith("1920 0 88")


def test_parse_get_config_single():
    assert parse_get_config("arm_freq=1800\n") == {"arm_freq": "1800"}
    assert parse_get_config("core_freq=0") == {"core_freq": "0"}


def test_parse_version_pi4():
    text = (
        "Mar 17 2023 10:52:00 \nCopyright (c) 2012 Broadcom\n"
        "version 82f3750a65fadae9a38077e3c2e217ad158c8d54 (clean) (release) (start)\n"
    )
    info = parse_version(text)
    assert info["date"] == "Mar 17 2023 10:52:00"
    assert info["datetime"] == "2023-03-17T10:52:00"
    assert info["version"] == "82f3750a65fadae9a38077e3c2e217ad158c8d54"
    assert info["flags"] == ["clean", "release", "start"]
    assert info["copyright"] == "Copyright (c) 2012 Broadcom"


def test_parse_version_pi5():
    text = (
        "2024/11/12 16:10:44 \nCopyright (c) 2012 Broadcom\nversion b74d18ae (release) (embedded)\n"
    )
    info = parse_version(text)
    assert info["datetime"] == "2024-11-12T16:10:44"
    assert info["version"] == "b74d18ae"
    assert info["flags"] == ["release", "embedded"]


def test_parse_version_old_formats():
    single_digit_day = parse_version(
        "Oct  4 2016 18:59:20 \nCopyright (c) 2012 Broadcom\n"
        "version c844c61ad08f94946910d0d5e1be076df4c8c56d (clean) (release)\n"
    )
    assert single_digit_day["datetime"] == "2016-10-04T18:59:20"
    build_number = parse_version(
        "Oct  5 2012 23:28:10\nCopyright (c) 2012 Broadcom\nversion 342141 (release)\n"
    )
    assert build_number["version"] == "342141"
    assert build_number["flags"] == ["release"]


def test_parse_version_unknown_date_is_kept_raw():
    info = parse_version("sometime last week\nversion abc123\n")
    assert info["date"] == "sometime last week"
    assert info["datetime"] is None
    assert info["flags"] == []


PARSERS = [parse_clock, parse_temp, parse_volts, parse_throttled, parse_get_config, parse_version]


@pytest.mark.parametrize("parser", PARSERS)
@given(text=st.text(max_size=200))
def test_parsers_never_raise_anything_else(parser, text):
    try:
        parser(text)
    except VcgencmdError:
        pass


@given(value=st.integers(min_value=0, max_value=0xFFFFFFFF))
def test_throttled_round_trip(value):
    assert parse_throttled(f"throttled=0x{value:x}") == value
    flags = decode_throttled(value)
    assert sum(1 << flag.bit for flag in flags) == value
    assert (throttle_summary(value) == "OK") == (value == 0)
