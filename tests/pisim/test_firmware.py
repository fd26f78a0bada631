"""config.txt as the simulated firmware reads it (pure functions, no root needed)."""

from pisim.firmware import Board, effective_config, governor_from, parse_int
from pisim.profiles import PROFILES

PI4 = PROFILES["pi4b-bookworm"]
PI3 = PROFILES["pi3b-legacy"]


def board(profile, tryboot=False, serial="10000000deadbeef"):
    return Board(profile.family, profile.model_filters, profile.board_type, serial, tryboot)


def ints(text, profile=PI4, **kw):
    return effective_config(text, board(profile, **kw), profile.mem_mb).ints


def test_stock_configs_give_the_family_defaults():
    assert ints(PI4.config_txt)["arm_freq"] == 1800  # arm_boost=1 on a 4B rev 1.4
    assert ints(PI3.config_txt, PI3)["arm_freq"] == 1200
    assert ints("", PI4)["arm_freq"] == 1500


def test_sections_match_only_their_board_and_later_lines_win():
    text = "arm_freq=1600\n[pi3]\narm_freq=1300\n[pi4]\narm_freq=2000\narm_freq=1900\n[all]\n"
    assert ints(text)["arm_freq"] == 1900
    assert ints(text, PI3)["arm_freq"] == 1300
    assert ints("[none]\narm_freq=2000\n")["arm_freq"] == 1500


def test_filters_of_different_types_and_together():
    text = "[pi4]\n[0xdeadbeef]\narm_freq=2000\n[all]\n[board-type=0x11]\ngpu_freq=600\n"
    assert ints(text)["arm_freq"] == 2000
    assert ints(text, serial="1000000000000001")["arm_freq"] == 1500
    assert ints(text)["v3d_freq"] == 600 and ints(text, PI3)["v3d_freq"] == 400


def test_gpu_freq_min_is_reported_as_set_like_gpu_freq():
    """The classic Pi 1 preset's gpu_freq_min=200 read back as the default 250 on a Pi 3
    node, and its application rolled back: gpu_freq_min sets the GPU minimums and is itself
    what get_config reports, as gpu_freq is (yaml: overclocking.options.gpu_freq)."""
    found = ints("gpu_freq=300\ngpu_freq_min=200\n", PI3)
    assert (found["gpu_freq"], found["gpu_freq_min"]) == (300, 200)
    assert found["core_freq_min"] == found["v3d_freq_min"] == 200
    assert ints("core_freq_min=300\ngpu_freq_min=200\n", PI3)["core_freq_min"] == 300


def test_tryboot_section_applies_only_to_a_trial_boot():
    text = "[tryboot]\narm_freq=1000\n"
    assert ints(text, tryboot=True)["arm_freq"] == 1000
    assert ints(text)["arm_freq"] == 1500


def test_malformed_and_long_lines_are_handled_like_the_firmware():
    assert ints("over_voltage = [-2,2]\n").get("over_voltage") is None
    assert ints("arm_freq=2000 # inline comments are not comments\n")["arm_freq"] == 2000
    assert ints("#" + "x" * 97 + "arm_freq=100\n")["arm_freq"] == 1500  # past 98 chars
    assert ints("temp_limit=90\n")["temp_limit"] == 85
    assert parse_int("0x1F") == 31 and parse_int("-3") == -3 and parse_int("abc") is None


def test_includes_and_strings():
    cfg = effective_config(
        "include extra.txt\ndtoverlay=a\ndtoverlay=b\n",
        board(PI4),
        4096,
        read_include=lambda n: "arm_freq=1700\n",
    )
    assert cfg.ints["arm_freq"] == 1700
    assert cfg.dtoverlays == ["a", "b"]
    assert cfg.strs["kernel"] == "kernel8.img"


def test_boot_governor_sources():
    assert governor_from(None, None, "ondemand") == "ondemand"
    assert (
        governor_from("quiet cpufreq.default_governor=powersave", None, "ondemand") == "powersave"
    )
    assert (
        governor_from(
            "cpufreq.default_governor=powersave", "CPU_DEFAULT_GOVERNOR=performance\n", "ondemand"
        )
        == "performance"
    )
