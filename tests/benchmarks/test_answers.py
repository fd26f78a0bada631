"""benchmarks.answers: one sentence that answers a campaign's question, from its runs."""

import pytest

from benchmarks import answers, stats
from benchmarks.models import Campaign, Run
from benchmarks.templatetags.campaign_tags import number
from devices import presets
from tests.benchmarks.factories import add_run, lane_on, trials

pytestmark = pytest.mark.django_db
STOCK = [94.0, 94.2, 93.8]
FASTER = [97.0, 97.3, 96.8]  # 3.2 % faster, tight
SLOWER = [85.0, 85.2, 84.9]
NOISY = [90.0, 99.0, 94.1]  # its mean is that of STOCK, give or take
DOWN, UP = {"direction": "peer-to-board"}, {"direction": "board-to-peer"}


def question_campaign(key: str, finished=True) -> Campaign:
    return Campaign.objects.create(
        name=key, spec={"question": key}, state="finished" if finished else "running"
    )


def finish(campaign):
    from django.utils import timezone

    campaign.finished = timezone.now()
    campaign.save()


def network_runs(campaign, download, upload, scp):
    """The network question's trials on one Pi 3: stock, then the classic overclock."""
    lane = lane_on(campaign, "pi3", model="Raspberry Pi 3 Model B Rev 1.2")
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    for preset, values in ((None, STOCK), (classic, None)):
        for params, chosen in ((DOWN, download), (UP, upload)):
            trials(lane, values or chosen, benchmark="iperf3-tcp", unit="Mbit/s",
                   params=params, preset_version=preset)  # fmt: skip
        trials(lane, [v / 10 for v in values or scp], benchmark="scp", params={},
               preset_version=preset)  # fmt: skip
    return lane


def test_a_clear_win_says_yes_with_its_interval(db):
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=NOISY)
    finish(campaign)
    found = answers.answer(campaign)
    change = stats.compare(STOCK, FASTER)
    low, high = change.percent_ci
    assert found.sentence == (
        "Yes, a little: the overclock made iperf3-tcp throughput (direction peer-to-board) "
        f"{change.percent_change:.1f} % faster (95 % CI {low:.1f} to {high:.1f} %); "
        "iperf3-tcp throughput (direction board-to-peer) and scp throughput showed no "
        "significant difference."
    )
    assert not found.provisional
    assert len(found.sections) == 3  # a comparison for each metric of the question


def test_no_difference_anywhere_says_no(db):
    campaign = question_campaign("network")
    network_runs(campaign, download=STOCK, upload=NOISY, scp=STOCK)
    finish(campaign)
    assert answers.answer(campaign).sentence == (
        "No: iperf3-tcp throughput (direction board-to-peer), iperf3-tcp throughput "
        "(direction peer-to-board) and scp throughput showed no significant difference with "
        "the overclock."
    )


def test_a_loss_says_no_and_how_much_slower(db):
    campaign = question_campaign("network")
    network_runs(campaign, download=SLOWER, upload=SLOWER, scp=SLOWER)
    finish(campaign)
    sentence = answers.answer(campaign).sentence
    change = stats.compare(STOCK, SLOWER)
    assert sentence.startswith(
        "No, the opposite: the overclock made iperf3-tcp throughput (direction board-to-peer) "
        f"{-change.percent_change:.1f} % slower (95 % CI "
    )
    assert "scp throughput" in sentence and "faster" not in sentence


def test_an_unfinished_campaign_is_not_answered_yet(db):
    campaign = question_campaign("network", finished=False)
    lane = network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    add_run(lane, state=Run.State.QUEUED, benchmark="scp")
    add_run(lane, state=Run.State.RUNNING, benchmark="scp")
    found = answers.answer(campaign)
    assert found.sentence == "Not yet: 18 of 20 runs have ended."
    assert found.provisional
    assert found.so_far.startswith("Yes, a little: the overclock made")


def test_64_bit_pairs_boards_by_userland(db):
    campaign = question_campaign("bitness")
    trials(lane_on(campaign, "pi4-32", userland=32), STOCK, params={"size": "2G"})
    trials(lane_on(campaign, "pi4-64"), FASTER, params={"size": "2G"})
    finish(campaign)
    found = answers.answer(campaign)
    assert found.sentence.startswith(
        "Yes, a little: the 64-bit userland made sha1sum throughput 3.2 % faster (95 % CI "
    )
    assert found.overview.rows[0].kernel_bits == {"32-bit userland": "64", "64-bit userland": "64"}


def test_openvpn_names_the_fastest_setting_and_the_cipher_the_build_lacked(db):
    campaign = question_campaign("openvpn")
    lane = lane_on(campaign, "pi3", model="Raspberry Pi 3 Model B Rev 1.2")
    base = {"size": "50M", "compression": "off", "mtu": 1500}
    cpu = {"procs_mean_pct": {"openvpn": 80.0, "sshd": 20.0}}
    for cipher, values in (("AES-256-CBC", [3.0, 3.1]), ("CHACHA20-POLY1305", [4.0, 4.2])):
        for run in trials(lane, values, benchmark="openvpn-scp", params={**base, "cipher": cipher}):
            run.environment = {"telemetry": cpu, "peer_telemetry": {"procs_mean_pct": {"sshd": 5}}}
            run.save()
    add_run(lane, state=Run.State.FAILED, benchmark="openvpn-scp",
            params={**base, "cipher": "BF-CBC"},
            reason="setting up failed on the board: sh exited with 1: BF-CBC is not available "
                   "in this OpenVPN build (OpenVPN 2.6.3)")  # fmt: skip
    finish(campaign)
    found = answers.answer(campaign)
    best = stats.describe([4.0, 4.2])
    assert found.sentence == (
        f"Up to 4.1 MB/s (95 % CI {number(best.ci_low)} to {number(best.ci_high)} MB/s, 2 runs) "
        "with cipher CHACHA20-POLY1305, compression off, mtu 1500, as the board is; this "
        "OpenVPN build lacked BF-CBC."
    )
    board_openvpn = {row["group"]: row["board openvpn"] for row in found.cpu}
    assert board_openvpn == {"AES-256-CBC": 80.0, "CHACHA20-POLY1305": 80.0}
    assert [row["peer sshd"] for row in found.cpu] == [5.0, 5.0]
