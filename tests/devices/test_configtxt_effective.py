"""devices.configtxt.effective_settings: what the firmware would apply on one board."""

from pathlib import Path

from devices.configtxt import effective_settings, overclock_settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"
BULLSEYE = (FIXTURES / "bullseye.txt").read_bytes()


def test_the_later_line_wins():
    assert effective_settings("arm_freq=900\narm_freq=1000\n", "pi3") == {"arm_freq": "1000"}


def test_sections_are_resolved_for_the_board():
    text = "[pi4]\narm_freq=1800\n[pi3]\narm_freq=1300\n[pi3+]\narm_freq=1450\n[all]\ngpu_mem=64\n"
    assert effective_settings(text, "pi4") == {"arm_freq": "1800", "gpu_mem": "64"}
    assert effective_settings(text, "pi3") == {"arm_freq": "1300", "gpu_mem": "64"}
    # a 3B+ matches [pi3] and [pi3+]; the later line wins
    assert effective_settings(text, "a020d3") == {"arm_freq": "1450", "gpu_mem": "64"}


def test_lines_under_boot_time_filters_are_left_out():
    text = "arm_freq=900\n[tryboot]\narm_freq=1000\n[EDID=VSC-TD2220]\nhdmi_group=2\n[none]\nx=1\n"
    assert effective_settings(text, "pi3") == {"arm_freq": "900"}


def test_overlays_and_parameters_add_up():
    text = "dtparam=audio=on\ndtoverlay=vc4-kms-v3d\n[pi4]\ndtoverlay=disable-bt\n[all]\n"
    assert effective_settings(text, "pi4")["dtoverlay"] == "vc4-kms-v3d\ndisable-bt"
    assert effective_settings(text, "pi3")["dtoverlay"] == "vc4-kms-v3d"


def test_stock_bullseye_on_a_pi4_and_a_pi3():
    on_pi4 = effective_settings(BULLSEYE, "pi4")
    assert on_pi4["arm_boost"] == "1" and "otg_mode" not in on_pi4
    assert "arm_boost" not in effective_settings(BULLSEYE, "pi3")
    assert effective_settings(BULLSEYE, "a03140")["otg_mode"] == "1"  # CM4


def test_spaces_around_equals_are_read_leniently():
    # The firmware "may not" read such a line: counted, so nothing risky is missed.
    assert effective_settings("force_turbo = 1\n", "pi3") == {"force_turbo": "1"}


def test_overclock_settings_keeps_only_clock_voltage_and_thermal_options():
    text = BULLSEYE + b"arm_freq=1000\nover_voltage=2\ntemp_limit=75\ngpu_mem=128\n"
    assert overclock_settings(text, "pi4") == {
        "arm_boost": "1",
        "arm_freq": "1000",
        "over_voltage": "2",
        "temp_limit": "75",
    }
