"""The stock preset ("firmware defaults") and whether a board runs it, from what pifarm saw."""

import pytest
from django.utils import timezone

from devices import configtxt, presets
from devices.models import Application, FactSnapshot, Preset

from .factories import make_board

pytestmark = pytest.mark.django_db

# A Bookworm image's own lines (arm_boost=1 under [pi4] is stock: the image sets it).
OWN = "dtparam=audio=on\n[pi4]\narm_boost=1\n[all]\narm_64bit=1\n"


def probe(board, config_txt=OWN, governor="ondemand", family="pi4_r14", **facts):
    return FactSnapshot.objects.create(
        board=board,
        facts={
            "config_txt": config_txt,
            "config_path": "/boot/firmware/config.txt",
            "governor": governor,
            "revision": {"family": family},
            **facts,
        },
    )


def overclocked(original=OWN) -> str:
    return configtxt.apply_block(original.encode(), "arm_freq=1900\n", "fast v1").decode()


def applied(board, version, state=Application.State.VERIFIED) -> Application:
    return Application.objects.create(
        board=board, version=version, state=state, finished=timezone.now()
    )


def test_the_stock_preset_has_no_lines_and_the_kernels_default_governor():
    version = presets.stock_version()
    assert version.preset.name == "Stock (firmware defaults)"
    assert version.options == {}
    assert version.governor == "ondemand"
    assert presets.stock_version() == version  # made once


def test_an_edited_stock_preset_gets_its_stock_version_back():
    version = presets.stock_version()
    presets.new_version(version.preset, options={"arm_freq": "1000"}, governor="ondemand")
    again = presets.stock_version()
    assert again == version
    assert version.preset.latest != version


def test_the_stock_version_gives_back_the_boards_own_config_txt():
    version = presets.stock_version()
    assert configtxt.apply_block(overclocked().encode(), "", str(version)) == OWN.encode()


def test_a_board_with_its_own_config_txt_and_the_default_governor_is_at_stock():
    board = make_board()
    probe(board)
    at_stock, words = presets.is_at_stock(board)
    assert at_stock, words
    assert words.startswith("bench-1 is at stock: no overclock lines")


def test_pifarms_block_means_not_at_stock_and_says_what_it_sets():
    board = make_board()
    probe(board, config_txt=overclocked(), governor="performance")
    at_stock, words = presets.is_at_stock(board)
    assert not at_stock
    assert "pifarm's block sets arm_freq=1900" in words
    assert "the performance governor (stock: ondemand)" in words


def test_a_boards_own_overclock_lines_are_not_stock_and_restoring_stock_leaves_them():
    board = make_board()
    probe(board, config_txt=OWN + "over_voltage=2\narm_freq=1500\n")
    at_stock, words = presets.is_at_stock(board)
    assert not at_stock
    # arm_freq=1500 is the default of a Pi 4B rev 1.4 (yaml), so only over_voltage counts
    assert "its own config.txt sets over_voltage=2" in words
    assert "arm_freq" not in words
    assert "Restore stock leaves those" in words


def test_a_board_never_probed_is_not_known_to_be_at_stock():
    at_stock, words = presets.is_at_stock(make_board())
    assert not at_stock
    assert "has not been probed" in words


def test_an_application_verified_after_the_last_probe_counts():
    board = make_board()
    probe(board, config_txt=overclocked(), governor="performance")
    applied(board, presets.stock_version())
    at_stock, words = presets.is_at_stock(board)
    assert at_stock, words
    assert "Stock (firmware defaults) v1 applied since" in words

    preset = Preset.objects.create(name="fast")
    applied(board, presets.new_version(preset, options={"arm_freq": "1900"}))
    assert presets.is_at_stock(board) == (
        False,
        "bench-1 is not at stock: pifarm's block sets arm_freq=1900 "
        "(its last probe, with fast v1 applied since).",
    )


def test_a_rolled_back_application_changed_nothing():
    board = make_board()
    probe(board)
    preset = Preset.objects.create(name="fast")
    version = presets.new_version(preset, options={"arm_freq": "1900"})
    applied(board, version, Application.State.ROLLED_BACK)
    assert presets.is_at_stock(board)[0]


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (Application.State.QUEUED, "an application of Stock (firmware defaults) v1 is queued"),
        (Application.State.NEEDS_ATTENTION, "Stock (firmware defaults) v1 ended “needs attention”"),
    ],
)
def test_an_application_under_way_or_left_half_way_means_unknown(state, said):
    board = make_board()
    probe(board)
    applied(board, presets.stock_version(), state)
    at_stock, words = presets.is_at_stock(board)
    assert not at_stock
    assert words.startswith("bench-1 may not be at stock: ")
    assert said in words


def test_underclocks_are_said_for_the_board_its_latest_probe_found():
    preset = Preset.objects.create(name="classic")
    version = presets.new_version(preset, options={"arm_freq": "900", "core_freq": "300"})
    pi3, pi1, unprobed = make_board("pi3"), make_board("pi1"), make_board("new")
    FactSnapshot.objects.create(board=pi3, revision="a02082", facts={})
    FactSnapshot.objects.create(board=pi1, revision="900032", facts={})
    assert presets.underclocks_on(pi3, version) == [
        "arm_freq 900 is below this board's default of 1200 MHz: an underclock",
        "core_freq 300 is below this board's default of 400 MHz: an underclock",
    ]
    assert presets.underclocks_on(pi1, version) == []
    assert presets.underclocks_on(unprobed, version) == []  # its model is not known yet


def test_a_pi_4_rev_1_4_with_arm_boost_is_underclocked_below_1800(db):
    """Stock Raspberry Pi OS sets arm_boost=1: such a board runs 1800 MHz at stock, so a
    "mild overclock" of 1700 lowers its clock (the yaml: 1500, 1800 with arm_boost=1)."""
    board = make_board("pi4-boosted")
    snapshot = probe(board)  # OWN sets arm_boost=1 under [pi4]
    FactSnapshot.objects.filter(pk=snapshot.pk).update(revision="c03114")
    mild = presets.example_version(presets.EXAMPLE_PRESETS[1])  # arm_freq 1700
    assert presets.underclocks_on(board, mild) == [
        "arm_freq 1700 is below this board's default of 1800 MHz: an underclock"
    ]
    plain = make_board("pi4-plain")
    snapshot = probe(plain, config_txt="dtparam=audio=on\n")
    FactSnapshot.objects.filter(pk=snapshot.pk).update(revision="c03114")
    assert presets.underclocks_on(plain, mild) == []
