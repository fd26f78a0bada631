"""benchmarks.comparisons: runs into groups, their statistics, environment and comparisons."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks import comparisons, effective, results, stats
from benchmarks.models import Campaign
from tests.benchmarks.factories import lane_on, overclock, reflashed, trials

pytestmark = pytest.mark.django_db
BASELINE = [100.0, 102.0, 98.0]
FASTER = [120.0, 123.0, 117.0]


def compared(campaign, group_by: str, benchmark: str = "sha1sum", **options):
    """The campaign's throughput figures of benchmark, grouped by group_by."""
    return comparisons.compare(
        comparisons.runs_selected([campaign.pk]), benchmark, "throughput", group_by, **options
    )


@pytest.fixture
def campaign():
    return Campaign.objects.create(name="overclock", spec={})


def test_groups_by_preset_have_the_statistics_of_their_trials(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, FASTER, preset_version=overclock())
    result = compared(campaign, "preset")
    assert [group.key for group in result.groups] == ["as the board is", "fast v2"]
    assert result.baseline == "as the board is"
    assert result.groups[1].description == stats.describe(FASTER)
    assert result.unit == "MB/s" and result.n == 6
    expected = stats.compare_many(
        BASELINE,
        {"fast v2": FASTER},
        unit="MB/s",
        baseline_boards=["bench-a"] * 3,
        boards={"fast v2": ["bench-a"] * 3},
        baseline_name="as the board is",
    )["fast v2"]
    assert result.comparisons == {"fast v2": expected}
    assert result.comparisons["fast v2"].outcome == stats.BETTER
    assert result.comparisons["fast v2"].design.units == stats.TRIALS  # of the one board


def test_suspect_trials_are_left_out_and_counted_unless_included(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, [10.0], suspect=True)
    runs = comparisons.runs_selected([campaign.pk])
    excluded = comparisons.compare(runs, "sha1sum", "throughput", "board")
    assert excluded.groups[0].values == sorted(BASELINE)  # in order of value
    assert excluded.groups[0].suspects_excluded == 1
    included = comparisons.compare(runs, "sha1sum", "throughput", "board", include_suspects=True)
    assert sorted(included.groups[0].values) == sorted([*BASELINE, 10.0])
    assert included.groups[0].suspects_excluded == 0


def test_bitness_groups_and_the_chosen_baseline(campaign):
    trials(lane_on(campaign, "bench-64"), FASTER)
    trials(lane_on(campaign, "bench-32", userland=32), BASELINE)
    baseline = "64-bit kernel, 32-bit userland"
    result = comparisons.compare(
        comparisons.runs_selected([campaign.pk]), "sha1sum", "throughput", "bits", baseline=baseline
    )
    assert result.baseline == baseline
    assert set(result.comparisons) == {"64-bit kernel, 64-bit userland"}
    assert result.comparisons["64-bit kernel, 64-bit userland"].ratio == pytest.approx(1.2)


def test_a_parameter_groups_runs_and_numbers_sort_by_size(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE, params={"size": "9000"})
    trials(lane, FASTER, params={"size": "1400"})
    result = compared(campaign, "param:size")
    assert [group.key for group in result.groups] == ["1400", "9000"]
    assert "param:size" in comparisons.group_by_choices("sha1sum")


def test_several_boards_of_a_model_keep_their_own_spread(campaign):
    trials(lane_on(campaign, "bench-a"), BASELINE)
    trials(lane_on(campaign, "bench-b"), FASTER)
    result = compared(campaign, "board_model")
    (group,) = result.groups
    assert group.several_boards
    assert group.boards == {"bench-a": stats.describe(BASELINE), "bench-b": stats.describe(FASTER)}


def test_the_environment_names_what_each_group_ran_on(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE, tool_version="sha1sum (GNU coreutils) 9.1", clock_mhz=1800.0)
    result = compared(campaign, "preset")
    environment = result.groups[0].environment
    assert environment["board model"] == "Raspberry Pi 4 Model B Rev 1.5"
    assert environment["kernel"] == "6.6.51-v8+"
    assert environment["firmware"] == "d2f7a1b"
    assert environment["governor"] == "performance"
    assert environment["tool versions"] == "sha1sum (GNU coreutils) 9.1"
    assert environment["preset version"] == "as the board is"
    assert environment["measured Arm clock"] == "1800 MHz median under load"


def test_the_c_benchmarks_compiler_is_among_the_tool_versions(campaign):
    details = {"compiler": "cc (Debian 12.2.0-14) 12.2.0"}
    # The runner keeps the parser's version line in Run.tool_version (benchmarks.runner).
    trials(
        lane_on(campaign, "bench-a"),
        BASELINE,
        benchmark="intloop",
        details=details,
        tool_version=results.main_tool_version(details),
    )
    result = compared(campaign, "preset", "intloop")
    assert result.groups[0].environment["tool versions"] == "cc (Debian 12.2.0-14) 12.2.0"


def test_chosen_runs_join_the_chosen_campaigns(campaign):
    other = Campaign.objects.create(name="other", spec={})
    trials(lane_on(campaign, "bench-a"), BASELINE)
    extra = trials(lane_on(other, "bench-b"), FASTER)
    runs = comparisons.runs_selected([campaign.pk], [extra[0].pk])
    result = comparisons.compare(runs, "sha1sum", "throughput", "campaign")
    assert {group.key: group.description.n for group in result.groups} == {
        "other": 1,
        "overclock": 3,
    }


def test_a_metric_no_run_measured_is_refused(campaign):
    trials(lane_on(campaign, "bench-a"), BASELINE)
    runs = comparisons.runs_selected([campaign.pk])
    with pytest.raises(comparisons.ComparisonError, match="no latency values"):
        comparisons.compare(runs, "sha1sum", "latency", "preset")
    with pytest.raises(comparisons.ComparisonError, match="cannot be grouped"):
        comparisons.compare(runs, "sha1sum", "throughput", "param:nonsense")
    assert comparisons.metric_choices(runs) == [("sha1sum", "throughput", "MB/s")]


def queries_for(campaign) -> int:
    with CaptureQueriesContext(connection) as queries:
        compared(campaign, "preset")
    return len(queries)


def test_the_queries_do_not_grow_with_the_runs(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, FASTER, preset_version=overclock())
    few = queries_for(campaign)
    more = lane_on(campaign, "bench-b", userland=32)
    trials(more, FASTER * 10, preset_version=overclock("faster", 1))
    trials(more, BASELINE * 10, suspect=True)
    assert queries_for(campaign) == few


def test_the_metrics_offered_are_read_without_joining_the_runs_order(campaign):
    # Measurement's ordering (by campaign, board, sequence) would join three tables more and
    # put their columns into the DISTINCT: one row per measurement to sort, not per metric.
    trials(lane_on(campaign, "bench-a"), BASELINE)
    trials(lane_on(campaign, "bench-b"), FASTER, metric="latency", unit="ms")
    with CaptureQueriesContext(connection) as queries:
        found = comparisons.metric_choices(comparisons.runs_selected([campaign.pk]))
    assert found == [("sha1sum", "latency", "ms"), ("sha1sum", "throughput", "MB/s")]
    # One query reads the campaign's tallies, one the runs not yet tallied.
    assert len(queries) == 2
    for sql in [query["sql"] for query in queries]:
        assert "benchmarks_lane" not in sql and "devices_board" not in sql


LINK_100 = {"link": {"device": "eth0", "mbit": 100, "mtu": 1500}}


def iperf3_trials(lane, values, environment=LINK_100, **fields):
    return trials(
        lane,
        values,
        benchmark="iperf3-tcp",
        unit="Mbit/s",
        params={},
        environment=environment,
        **fields,
    )


def test_a_network_throughput_has_its_links_line_rate_and_goodput_ceiling(campaign):
    lane = lane_on(campaign, "bench-a")
    iperf3_trials(lane, [91.0, 92.0, 93.0])
    iperf3_trials(lane, [93.0, 93.5, 94.0], preset_version=overclock())
    result = compared(campaign, "preset", "iperf3-tcp")
    assert result.references.line_rate == 100
    assert result.references.ceiling == pytest.approx(94.148, abs=0.001)


def test_groups_on_links_of_different_line_rates_are_said_to_differ(campaign):
    iperf3_trials(lane_on(campaign, "bench-a"), [91.0, 92.0])
    gigabit = {"link": {"device": "eth0", "mbit": 1000, "mtu": 1500}}
    iperf3_trials(lane_on(campaign, "bench-b"), [900.0, 910.0], environment=gigabit)
    result = compared(campaign, "board", "iperf3-tcp")
    assert result.references.line_rate is None
    assert "different line rates (100 and 1000 Mbit/s)" in result.references.note


@pytest.mark.parametrize("garbage", ["fast", [100], True, {"mbit": 100}, -100, 10**9])
def test_a_line_rate_that_is_not_a_number_of_mbit_is_taken_as_not_recorded(campaign, garbage):
    """parse() writes numbers only; another version's or a hand's JSON may hold anything."""
    lane = lane_on(campaign, "bench-a")
    iperf3_trials(lane, [91.0, 92.0], environment={"link": {"mbit": garbage, "mtu": [1500]}})
    result = compared(campaign, "preset", "iperf3-tcp")
    assert result.references.line_rate is None
    assert result.references.note == "the runs recorded no line rate of their link"


def test_a_parameter_grouped_by_is_named_as_the_pages_write_it(campaign):
    """A boolean's groups read on and off (SQLite gave "true" and "false"), a list's its
    values joined with +."""
    lane = lane_on(campaign, "bench-a")
    for locked, values in ((False, [900.0, 910.0]), (True, [950.0, 960.0])):
        trials(
            lane,
            values,
            benchmark="membw",
            unit="MB/s",
            params={"size": "64M", "passes": 3, "require_mlock": locked},
        )
    result = compared(campaign, "param:require_mlock", "membw")
    assert [group.key for group in result.groups] == ["off", "on"]


def test_other_metrics_have_no_reference_lines(campaign):
    trials(lane_on(campaign, "bench-a"), BASELINE)
    result = compared(campaign, "preset")
    assert result.references is None


def test_each_trial_keeps_its_run_and_its_runs_measured_clock(campaign):
    lane = lane_on(campaign, "bench-a")
    made = trials(lane, [100.0, 101.0], clock_mhz=1500.0) + trials(lane, [99.0])
    (group,) = compared(campaign, "preset").groups
    assert sorted(zip(group.run_ids, group.values, group.clocks, strict=True)) == sorted(
        [(made[0].pk, 100.0, 1500.0), (made[1].pk, 101.0, 1500.0), (made[2].pk, 99.0, None)]
    )


# The board is the unit of the test

NODE_A_STOCK, NODE_A_FAST = [100.0, 101.0, 99.0], [103.0, 104.0, 102.0]
NODE_B_STOCK, NODE_B_FAST = [110.0, 111.0, 109.0], [113.0, 114.0, 112.0]


def test_boards_that_ran_both_presets_are_compared_board_by_board(campaign):
    # bench-b is 10 MB/s above bench-a throughout; each is 3 MB/s faster overclocked (p from
    # test_stats' two-way ANOVA of the same values: 0.000826). Pooled as independent trials,
    # bench-b's own level would hide the change (p 0.37).
    fast = overclock()
    for name, stock, faster in (
        ("bench-a", NODE_A_STOCK, NODE_A_FAST),
        ("bench-b", NODE_B_STOCK, NODE_B_FAST),
    ):
        lane = lane_on(campaign, name)
        trials(lane, stock)
        trials(lane, faster, preset_version=fast)
    result = compared(campaign, "preset")
    found = result.comparisons["fast v2"]
    assert found.design.units == stats.BLOCKS
    assert found.p_value == pytest.approx(0.0008262751659886821, rel=1e-6)
    assert found.outcome == stats.BETTER
    assert found.verdict.endswith("; compared board by board, on bench-a and bench-b)")


def test_bitness_on_two_boards_is_confounded_with_the_board(campaign):
    trials(lane_on(campaign, "bench-64"), FASTER)
    trials(lane_on(campaign, "bench-32", userland=32), BASELINE)
    result = compared(campaign, "userland", baseline="32-bit userland")
    found = result.comparisons["64-bit userland"]
    assert found.confounded and found.p_value is None and found.outcome == stats.CANNOT_TELL
    assert found.verdict == (
        "cannot tell: confounded with the board: 32-bit userland ran on bench-32, 64-bit "
        "userland on bench-64 (20 % higher); how much boards differ on their own is unknown "
        "here, as no side ran on two boards"
    )


def test_bitness_on_one_re_flashed_board_compares_its_trials(campaign):
    lane = lane_on(campaign, "bench-a", userland=32)
    trials(lane, BASELINE)
    trials(reflashed(lane, userland=64), FASTER)
    result = compared(campaign, "userland", baseline="32-bit userland")
    found = result.comparisons["64-bit userland"]
    assert found.design.units == stats.TRIALS and found.outcome == stats.BETTER
    assert found.p_value == stats.compare(BASELINE, FASTER).p_value


def test_grouped_by_board_the_trials_are_the_units(campaign):
    # The board is the factor compared: its trials are what there is to compare.
    trials(lane_on(campaign, "bench-a"), BASELINE)
    trials(lane_on(campaign, "bench-b"), FASTER)
    result = compared(campaign, "board")
    found = result.comparisons["bench-b"]
    assert found.design == stats.Design() and found.outcome == stats.BETTER


def test_an_overview_row_of_sides_on_boards_of_their_own_is_confounded(campaign):
    trials(lane_on(campaign, "pi-64"), FASTER)
    trials(lane_on(campaign, "pi-32", userland=32), BASELINE)
    (row,) = comparisons.overview(
        comparisons.runs_selected([campaign.pk]), "userland", "32-bit userland"
    ).rows
    assert row.comparison.confounded
    assert row.comparison.p_adjusted is None and row.comparison.outcome == stats.CANNOT_TELL
    assert row.comparison.verdict.startswith(
        "cannot tell: confounded with the board: 32-bit userland ran on pi-32, 64-bit userland "
        "on pi-64 (20 % higher)"
    )


def test_a_group_says_what_its_runs_ran_and_where_it_mixed_configurations(campaign):
    """ "As is" ran the board's own config.txt on bench-a, but bench-b's changed in between
    (someone edited it): that group is not one treatment there, and the page says so."""
    own = {
        "config_sha256": "a" * 64,
        "managed": {},
        "firmware": {"arm_freq": "1500"},
        "governor": "ondemand",
        "userland_bits": 64,
    }
    edited = {**own, "config_sha256": "b" * 64, "firmware": {"arm_freq": "1800"}}
    for name, states in (("bench-a", [own, own]), ("bench-b", [own, edited])):
        lane = lane_on(campaign, name)
        for value, state in zip(BASELINE, states, strict=False):
            trials(
                lane,
                [value],
                environment={"effective": state},
                config_fingerprint=effective.fingerprint(state),
            )
    result = compared(campaign, "preset")
    group = result.groups[0]
    assert group.mixed == ["bench-b"]
    assert group.environment["what ran"] == (
        "bench-a: arm_freq 1500, governor ondemand, 64-bit userland; config.txt aaaaaaaa (no "
        "pifarm block); bench-b: 2 configurations: arm_freq 1500, governor ondemand, 64-bit "
        "userland; config.txt aaaaaaaa (no pifarm block) / arm_freq 1800, governor ondemand, "
        "64-bit userland; config.txt bbbbbbbb (no pifarm block)"
    )


def test_a_result_of_simulated_boards_says_what_the_simulation_can_and_cannot_show(campaign):
    real = lane_on(campaign, "bench-a")
    trials(real, BASELINE)
    runs = comparisons.runs_selected([campaign.pk])
    assert comparisons.compare(runs, "sha1sum", "throughput", "board").simulated_note == ""
    simulated = lane_on(campaign, "sim-node1")
    simulated.snapshot.facts["simulated"] = True
    simulated.snapshot.save()
    trials(simulated, FASTER)
    note = comparisons.compare(runs, "sha1sum", "throughput", "board").simulated_note
    assert note.startswith("Simulated boards. What the simulation models: the CPU share follows")
    assert "What it does not: real thermals" in note


def test_a_group_of_suspect_trials_only_is_named_not_dropped_silently(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, FASTER, preset_version=overclock(), suspect=True)
    runs = comparisons.runs_selected([campaign.pk])
    result = comparisons.compare(runs, "sha1sum", "throughput", "preset")
    assert [group.key for group in result.groups] == ["as the board is"]
    assert result.emptied == {"fast v2": 3}
    assert result.suspects_excluded == 3


def test_runs_group_by_what_they_ran_whatever_preset_they_were_filed_under(campaign):
    """ "As is" on a board someone had overclocked by hand ran what the preset runs: grouped by
    configuration, the two are one group."""
    stock = {
        "config_sha256": "a" * 64,
        "firmware": {"arm_freq": "1500"},
        "governor": "ondemand",
        "userland_bits": 64,
    }
    fast = {**stock, "config_sha256": "b" * 64, "firmware": {"arm_freq": "2000"}}
    lane = lane_on(campaign, "bench-a")
    for values, state, preset in (
        (BASELINE, stock, None),
        (FASTER, fast, None),
        (FASTER, fast, overclock()),
    ):
        trials(
            lane,
            values,
            preset_version=preset,
            environment={"effective": state},
            config_fingerprint=effective.fingerprint(state),
        )
    result = compared(campaign, "configuration")
    n_by_key = {group.key: group.description.n for group in result.groups}
    assert n_by_key == {
        f"arm_freq 1500, ondemand, 64-bit [{effective.fingerprint(stock)[:8]}]": 3,
        f"arm_freq 2000, ondemand, 64-bit [{effective.fingerprint(fast)[:8]}]": 6,
    }


def test_a_comparison_says_how_many_trials_its_noise_needs_for_the_minimum_effect(campaign):
    lane = lane_on(campaign, "bench-a")
    trials(lane, [100.0, 110.0, 90.0])  # 10 % relative SD
    trials(lane, [101.0, 99.0, 100.0], preset_version=overclock())
    result = compared(campaign, "preset")
    assert result.resolution == {
        "relative_sd": pytest.approx(0.1),
        "min_effect": 0.02,
        "needed": stats.trials_needed(0.1, 0.02),
        "fewest": 3,
    }
    assert result.resolution["needed"] > 3
