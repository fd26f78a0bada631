"""benchmarks.effective: what a run ran with, from its probe, in a fingerprint and in words."""

from benchmarks import effective
from devices.configtxt import blocks

OWN = "dtparam=audio=on\n"


def test_the_state_reads_the_digest_the_block_and_the_firmware_s_clocks():
    config = blocks.apply_block(OWN.encode(), "arm_freq=900\n", "fast v1").decode()
    state = effective.state(
        {
            "config_txt": config,
            "governor": "ondemand",
            "kernel_release": "6.6.51",
            "kernel_bits": 32,
            "userland_bits": 32,
            "firmware_version": {"version": "c72ad6b"},
            "firmware_config": {"arm_freq": "900", "core_freq": "250", "hdmi_group": "0"},
        }
    )
    assert state["managed"] == {"arm_freq": "900"}
    assert state["firmware"] == {"arm_freq": "900", "core_freq": "250"}
    assert len(state["config_sha256"]) == 64
    assert effective.words(state) == (
        "arm_freq 900, core_freq 250, governor ondemand, 32-bit userland; config.txt "
        f"{state['config_sha256'][:8]} (pifarm's block: arm_freq=900)"
    )


def test_two_boards_of_one_config_txt_under_two_userlands_ran_two_things():
    state = {"config_sha256": "a" * 64, "governor": "ondemand", "kernel": "6.6", "kernel_bits": 64}
    assert effective.fingerprint({**state, "userland_bits": 32}) != effective.fingerprint(
        {**state, "userland_bits": 64}
    )
    assert effective.fingerprint({**state, "config_sha256": None}) == ""
    assert "config.txt not read" in effective.words({})
