"""benchmarks.answers: one sentence that answers a campaign's question, from its runs."""

import pytest

from benchmarks import answers, limits, stats
from benchmarks.models import Measurement, Run
from benchmarks.templatetags.campaign_tags import number
from devices import presets
from tests.benchmarks.answer_data import (
    FASTER,
    STOCK,
    holm_campaign,
    network_runs,
    question_campaign,
)
from tests.benchmarks.factories import (
    add_run,
    as_a_simulated_pi3,
    intloop_trials,
    lane_on,
    overclock,
    reflashed,
    trials,
)

pytestmark = pytest.mark.django_db
SLOWER = [85.0, 85.2, 84.9]
NOISY = [90.0, 99.0, 94.1]  # its mean is that of STOCK, give or take


def test_a_clear_win_says_yes_with_its_interval():
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=NOISY)
    found = answers.answer(campaign)
    change = stats.compare(STOCK, FASTER)
    low, high = change.percent_ci
    assert found.sentence == (
        "Yes, a little: the overclock made iperf3-tcp throughput (direction peer-to-board) "
        f"{change.percent_change:.1f} % faster (95 % CI {low:.1f} to {high:.1f} %); "
        "iperf3-tcp throughput (direction board-to-peer) showed no significant difference; "
        "scp throughput showed no significant difference, but the trials were too noisy to "
        "rule out a change of 2 % or more (see each interval): more trials would tell."
    )
    assert not found.provisional
    assert len(found.sections) == 3  # a comparison for each metric of the question


def test_a_section_judges_its_group_as_the_summary_row_does():
    # Adjusted across the section's one comparison alone, scp's loss was "worse" there while
    # its row (adjusted across the question's metrics) and the sentence said no difference.
    found = answers.answer(holm_campaign())
    row = next(row for row in found.overview.rows if row.benchmark == "scp")
    section = next(section for section in found.sections if section.result.benchmark == "scp")
    compared = section.result.comparisons[row.group]
    assert 0.01 < compared.p_value < stats.ALPHA < row.comparison.p_adjusted < 0.1
    assert compared.p_adjusted == row.comparison.p_adjusted
    assert compared.outcome == row.comparison.outcome == stats.NO_DIFFERENCE
    assert compared.verdict == row.comparison.verdict
    assert "scp throughput showed no significant difference" in found.sentence


def test_a_section_group_without_a_summary_row_keeps_the_section_s_own_adjustment():
    campaign = holm_campaign()
    # On a Pi 4 with an overclock only: no board as it is there to pair with, so no row.
    trials(
        lane_on(campaign, "pi4"),
        [8.0, 8.1, 7.9],
        benchmark="scp",
        params={},
        preset_version=overclock(),
    )
    found = answers.answer(campaign)
    section = next(section for section in found.sections if section.result.benchmark == "scp")
    compared = section.result.comparisons
    assert [row.group for row in found.overview.rows if row.benchmark == "scp"] == [
        "Dynamic overclock (classic) v1"
    ]
    own = dict(zip(compared, stats.holm([c.p_value for c in compared.values()]), strict=True))
    assert compared["fast v2"].p_adjusted == own["fast v2"]
    assert compared["Dynamic overclock (classic) v1"].p_adjusted == next(
        row.comparison.p_adjusted for row in found.overview.rows if row.benchmark == "scp"
    )


def test_the_link_the_boards_reported_is_named_when_they_all_reported_one():
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=NOISY)
    campaign.runs.update(environment={"link": {"device": "eth0", "mbit": 100, "mtu": 1500}})
    assert answers.answer(campaign).sentence.endswith(
        "(on a 100 Mbit/s link); the limit was the link on both sides (iperf3-tcp throughput "
        "(direction peer-to-board))."  # of the three rows, the one whose limit is known
    )
    gigabit = {"link": {"device": "eth0", "mbit": 1000, "mtu": 1500}}
    campaign.runs.filter(benchmark="scp").update(environment=gigabit)
    assert "Mbit/s link" not in answers.answer(campaign).sentence


@pytest.mark.parametrize("garbage", ["fast", [100], False])
def test_a_line_rate_that_is_not_a_number_is_not_named(garbage):
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=NOISY)
    campaign.runs.update(environment={"link": {"device": "eth0", "mbit": garbage}})
    assert "Mbit/s link" not in answers.answer(campaign).sentence


def test_no_difference_anywhere_says_no_only_where_the_interval_rules_a_change_out():
    campaign = question_campaign("network")
    network_runs(campaign, download=STOCK, upload=NOISY, scp=STOCK)
    assert answers.answer(campaign).sentence == (
        "No: iperf3-tcp throughput (direction peer-to-board) and scp throughput showed no "
        "significant difference with the overclock; iperf3-tcp throughput (direction "
        "board-to-peer) showed no significant difference, but the trials were too noisy to "
        "rule out a change of 2 % or more (see each interval): more trials would tell."
    )


def test_no_difference_found_in_noise_alone_is_not_a_no():
    # The demo once answered "No" from +64 % (95 % CI 8 to 210 %): absence of evidence.
    campaign = question_campaign("network")
    network_runs(campaign, download=NOISY, upload=NOISY, scp=NOISY)
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith("Cannot tell: iperf3-tcp throughput (direction board-to-peer)")
    assert "too noisy to rule out a change of 2 % or more" in sentence
    assert not sentence.startswith("No")


def test_a_loss_says_no_and_how_much_slower():
    campaign = question_campaign("network")
    network_runs(campaign, download=SLOWER, upload=SLOWER, scp=SLOWER)
    sentence = answers.answer(campaign).sentence
    change = stats.compare(STOCK, SLOWER)
    assert sentence.startswith(
        "No, the opposite: the overclock made iperf3-tcp throughput (direction board-to-peer) "
        f"{-change.percent_change:.1f} % slower (95 % CI "
    )
    assert "scp throughput" in sentence and "faster" not in sentence


def test_an_unfinished_campaign_is_not_answered_yet():
    campaign = question_campaign("network", finished=False)
    lane = network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    add_run(lane, state=Run.State.QUEUED, benchmark="scp")
    add_run(lane, state=Run.State.RUNNING, benchmark="scp")
    found = answers.answer(campaign)
    assert found.sentence == "Not yet: 18 of 20 runs have ended."
    assert found.provisional
    assert found.so_far.startswith("Yes, a little: the overclock made")


def test_64_bit_pairs_boards_by_userland():
    campaign = question_campaign("bitness")
    lane = lane_on(campaign, "pi4-32", userland=32)
    trials(lane, STOCK, params={"size": "2G"})
    trials(reflashed(lane, userland=64), FASTER, params={"size": "2G"})  # the same board
    found = answers.answer(campaign)
    assert found.sentence.startswith(
        "Yes, a little: the 64-bit userland made sha1sum throughput 3.2 % faster (95 % CI "
    )
    assert found.overview.rows[0].kernel_bits == {"32-bit userland": "64", "64-bit userland": "64"}


def test_openvpn_names_the_fastest_setting_and_the_cipher_the_build_lacked():
    campaign = question_campaign("openvpn")
    lane = lane_on(campaign, "pi3", model="Raspberry Pi 3 Model B Rev 1.2")
    base = {"size": "50M", "compression": "off", "mtu": 1500}
    cpu = {"procs_mean_pct": {"openvpn": 80.0, "sshd": 20.0}}
    for cipher, values in (("AES-256-CBC", [3.0, 3.1]), ("CHACHA20-POLY1305", [4.0, 4.2])):
        for run in trials(lane, values, benchmark="openvpn-scp", params={**base, "cipher": cipher}):
            run.environment = {"telemetry": cpu, "peer_telemetry": {"procs_mean_pct": {"sshd": 5}}}
            run.save()
    add_run(
        lane,
        state=Run.State.FAILED,
        benchmark="openvpn-scp",
        params={**base, "cipher": "BF-CBC"},
        reason="setting up failed on the board: sh exited with 1: BF-CBC is not available "
        "in this OpenVPN build (OpenVPN 2.6.3)",
    )
    found = answers.answer(campaign)
    best = stats.describe([4.0, 4.2])
    assert found.sentence == (
        f"Up to 4.1 MB/s (95 % CI {number(best.ci_low)} to {number(best.ci_high)} MB/s, 2 runs) "
        "with cipher CHACHA20-POLY1305, compression off, mtu 1500, as the board is; this "
        "OpenVPN build lacked BF-CBC."
    )
    board_openvpn = {row["group"]: row["board_openvpn"] for row in found.cpu}
    assert board_openvpn == {"AES-256-CBC": 80.0, "CHACHA20-POLY1305": 80.0}
    assert [row["peer_sshd"] for row in found.cpu] == [5.0, 5.0]


def test_suspect_trials_are_left_out_and_said_so_unless_included():
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    campaign.runs.update(suspect=True)
    assert answers.answer(campaign).sentence == (
        "Cannot tell: iperf3-tcp (direction board-to-peer): all 6 trials suspect (no reason "
        "kept); not compared; iperf3-tcp (direction peer-to-board): all 6 trials suspect (no "
        "reason kept); not compared; scp: all 6 trials suspect (no reason kept); not compared; "
        "include the suspect trials to see what they say."
    )
    included = answers.answer(campaign, include_suspects=True)
    assert included.sentence.startswith("Yes, a little: the overclock made")
    assert all("include_suspects" in section.builder_query for section in included.sections)


BACKGROUND = (
    "background CPU averaged {} % of the board (not the benchmark's processes; the limit is 25 %)"
)


def bitness_campaign(lame_64_reasons: list[str], boards: int = 1):
    """The bitness question on one Pi 4 re-flashed from a 32- to a 64-bit userland (or on two
    Pi 4s, one of each): intloop 20 % faster on 64-bit, lame measured on both, its first 64-bit
    trials suspect for the reasons given (one each)."""
    campaign = question_campaign("bitness")
    if boards == 1:
        first = lane_on(campaign, "pi4", userland=32)
        lanes = {32: first, 64: reflashed(first, userland=64)}
    else:
        lanes = {bits: lane_on(campaign, f"pi4-{bits}", userland=bits) for bits in (32, 64)}
    intloop_trials(lanes[32], [100.0, 101.0, 99.0])
    intloop_trials(lanes[64], [120.0, 121.0, 119.0])
    for bits, values in ((32, [5.0, 5.1, 4.9]), (64, [7.0, 6.9, 7.1])):
        runs = trials(
            lanes[bits],
            values,
            benchmark="lame",
            params={"seconds": 20},
            metric="realtime",
            unit="x real time",
        )
        if bits == 64:
            for run, reason in zip(runs, lame_64_reasons, strict=False):
                Run.objects.filter(pk=run.pk).update(suspect=True, suspect_reasons=[reason])
    return campaign


def test_a_benchmark_whose_trials_are_all_suspect_is_named_with_why_not_dropped_silently():
    campaign = bitness_campaign([BACKGROUND.format(n) for n in (29, 45, 38)])
    campaign.runs.filter(benchmark="lame").update(suspect=True)  # the 32-bit side's too
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith("Yes: the 64-bit userland made intloop iterations_per_second")
    assert sentence.endswith(
        "; lame: all 6 trials suspect (background CPU averaged 29-45 % of the board (not the "
        "benchmark's processes; the limit is 25 %)); not compared."
    )


def test_sides_on_boards_of_their_own_are_confounded_and_the_answer_says_so():
    sentence = answers.answer(bitness_campaign([], boards=2)).sentence
    assert sentence == (
        "Cannot tell from these boards: intloop iterations_per_second and lame realtime, as "
        "each side ran on its own board (pi4-32 ran the baseline, pi4-64 the 64-bit userland), "
        "so the board and the 64-bit userland changed together and how much two boards differ "
        "on their own was not measured. As measured, the 64-bit userland made intloop "
        "iterations_per_second 20.0 % faster and lame realtime 40.0 % faster."
    )


def test_a_group_emptied_by_suspect_trials_is_named_with_the_reasons():
    campaign = bitness_campaign(
        [BACKGROUND.format(30), BACKGROUND.format(30), "swap in use grew by 12 MB"]
    )
    sentence = answers.answer(campaign).sentence
    assert sentence.endswith(
        "; lame: 3 of 6 trials suspect (background CPU averaged 30 % of the board (not the "
        "benchmark's processes; the limit is 25 %); swap in use grew by 12 MB); 64-bit userland "
        "not compared with 32-bit userland."
    )
    # Included, lame is compared, and nothing is said left out.
    included = answers.answer(campaign, include_suspects=True).sentence
    assert "lame realtime" in included and "not compared" not in included


def test_a_suspect_trial_that_leaves_both_sides_compared_is_not_called_left_out():
    found = answers.answer(bitness_campaign([BACKGROUND.format(30)]))
    assert found.suspects == 1
    assert "lame realtime" in found.sentence and "not compared" not in found.sentence


LINK_100 = {"link": {"device": "eth0", "mbit": 100, "mtu": 1500}}


def test_no_difference_with_both_sides_at_the_link_s_ceiling_is_cannot_tell():
    campaign = question_campaign("network")
    network_runs(campaign, download=STOCK, upload=STOCK, scp=STOCK)  # scp: 9.4 of 11.8 MB/s
    campaign.runs.update(environment=LINK_100)
    found = answers.answer(campaign)
    assert found.sentence == (
        "No: scp throughput showed no significant difference with the overclock; iperf3-tcp "
        "throughput (direction board-to-peer) and iperf3-tcp throughput (direction "
        "peer-to-board): cannot tell, both at the link's ceiling (on a 100 Mbit/s link)."
    )
    assert {row.benchmark for row in found.at_ceiling} == {"iperf3-tcp"}
    assert all(row.comparison.outcome == stats.NO_DIFFERENCE for row in found.at_ceiling)
    iperf3 = next(section for section in found.sections if section.result.benchmark == "iperf3-tcp")
    assert {hit.words for hit in iperf3.limited_by.values()} == {
        "at the link's ceiling (94.0 of 94.1 Mbit/s): a faster CPU cannot show here"
    }


def test_only_rows_at_the_ceiling_answer_cannot_tell_with_why():
    campaign = question_campaign("network")
    network_runs(campaign, download=STOCK, upload=STOCK, scp=STOCK)
    campaign.runs.filter(benchmark="iperf3-tcp").update(environment=LINK_100)
    campaign.runs.filter(benchmark="scp").delete()
    assert answers.answer(campaign).sentence == (
        "Cannot tell: iperf3-tcp throughput (direction board-to-peer) and iperf3-tcp throughput "
        "(direction peer-to-board): both at the link's ceiling, where a faster CPU cannot show."
    )


def test_a_difference_at_the_ceiling_is_still_told():
    campaign = question_campaign("network")
    network_runs(campaign, download=[90.0, 90.2, 89.8], upload=STOCK, scp=STOCK)
    campaign.runs.update(environment=LINK_100)
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith(
        "No, the opposite: the overclock made iperf3-tcp throughput (direction peer-to-board) "
        "4.3 % slower"
    )


def test_the_peer_that_used_a_whole_core_is_named_as_the_limit():
    campaign = question_campaign("network")
    network_runs(campaign, download=[60.0, 61.0, 59.0], upload=STOCK, scp=STOCK)
    telemetry = {"procs_mean_pct": {"iperf3": 40.0}, "cores_busy_mean_pct": [40.0, 3.0]}
    campaign.runs.update(
        peer="controller",
        environment=LINK_100
        | {"telemetry": telemetry, "peer_telemetry": {"procs_mean_pct": {"iperf3": 96.0}}},
    )
    found = answers.answer(campaign)
    download = next(section for section in found.sections if "peer-to-board" in section.title)
    assert {group: hit.words for group, hit in download.limited_by.items()} == {
        answers.comparisons.AS_IS: "at the link's ceiling (94.0 of 94.1 Mbit/s): a faster CPU "
        "cannot show here",
        download.result.groups[1].key: "limited by the peer: iperf3 used 96 % of a core on the "
        "controller",
    }
    scp = next(section for section in found.sections if section.result.benchmark == "scp")
    assert {hit.kind for hit in scp.limited_by.values()} == {limits.PEER}


BUSY_BOARD = {"procs_mean_pct": {"iperf3": 30.0}, "cores_busy_mean_pct": [97.0, 4.0]}
GIGABIT = {"link": {"device": "eth0", "mbit": 1000, "mtu": 1500}}


def test_the_sentence_says_the_board_s_cpu_not_the_link_was_the_limit():
    """As a Pi 1 B's USB NIC: one core busy with its interrupts, far below the link's rate."""
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    campaign.runs.update(environment=GIGABIT | {"telemetry": BUSY_BOARD})
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith("Yes, a little: the overclock made iperf3-tcp throughput")
    assert sentence.endswith(
        "(on a 1000 Mbit/s link); the limit was the board's CPU on both sides, not the link."
    )


def test_the_sentence_names_each_side_s_limit_when_they_differ():
    campaign = question_campaign("network")
    network_runs(campaign, download=[60.0, 61.0, 59.0], upload=STOCK, scp=STOCK)
    campaign.runs.update(environment=LINK_100 | {"telemetry": BUSY_BOARD})
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith("No, the opposite: the overclock made iperf3-tcp throughput")
    assert (
        f"; the limit was the link for {answers.comparisons.AS_IS}, the board's CPU for "
        f"{presets.example_version(presets.CLASSIC_OVERCLOCK)}"
    ) in sentence


def test_a_limit_known_for_some_rows_only_names_them():
    """Only the download's trials have telemetry: the clause must not read as the upload's
    and scp's too."""
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    campaign.runs.update(environment=GIGABIT)
    campaign.runs.filter(params__direction="peer-to-board").update(
        environment=GIGABIT | {"telemetry": BUSY_BOARD}
    )
    assert answers.answer(campaign).sentence.endswith(
        "(on a 1000 Mbit/s link); the limit was the board's CPU on both sides, not the link "
        "(iperf3-tcp throughput (direction peer-to-board))."
    )


def test_a_network_answer_without_telemetry_below_the_ceiling_names_no_limit():
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    campaign.runs.update(environment=GIGABIT)
    assert answers.answer(campaign).sentence.endswith("(on a 1000 Mbit/s link).")


def test_openvpn_s_fastest_setting_says_the_peer_may_have_limited_it():
    campaign = question_campaign("openvpn")
    lane = lane_on(campaign, "pi4")
    params = {"size": "50M", "compression": "off", "mtu": 1500, "cipher": "AES-128-GCM"}
    for run, peer_pct in zip(
        trials(lane, [9.0, 9.2], benchmark="openvpn-scp", params=params), (65.0, 83.0), strict=True
    ):
        run.peer = "controller"
        run.environment = {
            "telemetry": {"procs_mean_pct": {"openvpn": 28.0, "sshd": 19.0}},
            "peer_telemetry": {"procs_mean_pct": {"openvpn": peer_pct, "sshd": 3.0}},
            "link_use": {"mbit": 73.6, "line_mbit": 100, "ceiling_mbit": 94.15, "of_ceiling": 0.78},
        }
        run.save()
    assert answers.answer(campaign).sentence.endswith(
        "with cipher AES-128-GCM, compression off, mtu 1500, as the board is; the peer may be "
        "the limit: openvpn used 74 % of a core on the controller, the busiest on pi4 openvpn "
        "28 %."
    )
    # At 11.3 of its 11.8 MB/s ceiling, the link is the limit whatever the CPU did.
    for run in campaign.runs.all():
        run.measurements.update(value=11.3)
    assert answers.answer(campaign).sentence.endswith(
        "; at the link's ceiling (11.3 of 11.8 MB/s): a faster CPU cannot show here."
    )


def test_openvpn_names_a_setting_whose_trials_were_all_suspect():
    campaign = question_campaign("openvpn")
    lane = lane_on(campaign, "pi4")
    base = {"size": "50M", "compression": "off", "mtu": 1500}
    trials(lane, [9.0, 9.2], benchmark="openvpn-scp", params={**base, "cipher": "AES-128-GCM"})
    for run in trials(
        lane, [12.0, 12.2], benchmark="openvpn-scp", params={**base, "cipher": "CHACHA20-POLY1305"}
    ):
        Run.objects.filter(pk=run.pk).update(suspect=True, suspect_reasons=["swap in use grew"])
    assert answers.answer(campaign).sentence.endswith(
        "with cipher AES-128-GCM, compression off, mtu 1500, as the board is; cipher "
        "CHACHA20-POLY1305, compression off, mtu 1500, as the board is: all 2 trials suspect "
        "(swap in use grew); not compared."
    )


def test_a_significant_change_under_the_minimum_effect_is_said_as_such():
    campaign = question_campaign("network")
    slightly = [94.9, 95.1, 95.0]  # 1.1 % faster, tight: significant, under 2 %
    network_runs(campaign, download=slightly, upload=slightly, scp=slightly)
    sentence = answers.answer(campaign).sentence
    assert sentence.startswith(
        "No: the overclock made iperf3-tcp throughput (direction board-to-peer) 1.1 % faster "
        "(95 % CI 0.6 to 1.5 %)"
    )
    assert sentence.endswith(
        "scp throughput 1.1 % faster (95 % CI 0.6 to 1.5 %): significant, "
        "but under the 2 % that counts."
    )


def test_a_baseline_of_zero_is_compared_in_the_metric_s_unit():
    campaign = question_campaign("network")
    lane = network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    stock_download = Measurement.objects.filter(
        run__lane=lane,
        run__benchmark="iperf3-tcp",
        run__preset_version=None,
        run__params__direction="peer-to-board",
    )
    for measurement, value in zip(stock_download, [0.0, 0.1, -0.1], strict=True):
        Measurement.objects.filter(pk=measurement.pk).update(value=value)
    sentence = answers.answer(campaign).sentence
    assert (
        "iperf3-tcp throughput (direction peer-to-board) +97 Mbit/s against a baseline mean of "
        "0 (95 % CI +"
    ) in sentence


def test_the_answer_says_what_ran_an_underclock_and_what_a_simulation_can_show():
    campaign = question_campaign("network")
    lane = network_runs(campaign, download=FASTER, upload=STOCK, scp=STOCK)
    as_a_simulated_pi3(lane)  # a Pi 3: its arm_freq default is 1200 MHz
    found = answers.answer(campaign)
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    assert (
        f"{classic} on pi3: arm_freq 900 is below this board's default of 1200 MHz: an "
        "underclock" in found.warnings
    )
    assert found.what_ran[0] == (
        "pi3, as the board is: arm_freq 1200, governor ondemand; config.txt cccccccc (no pifarm "
        "block)"
    )
    assert found.what_ran[1] == f"pi3, {classic}: not recorded"
    assert found.simulated_note.startswith("Simulated boards. What the simulation models:")
