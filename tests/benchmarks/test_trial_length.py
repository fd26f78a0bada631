"""A trial measures at least its benchmark's minimum length: a campaign lengthens a shorter
one through the benchmark's own parameter (its run time, or how long its fixed work repeats),
says so, and a trial that still measures under the noise floor is suspect."""

import hashlib

import pytest
from django.urls import reverse

from benchmarks import campaigns, specs
from benchmarks.catalog import BUILT_IN, media, memory, network, storage
from benchmarks.catalog.cpu import INTLOOP, SHA1SUM
from benchmarks.catalog.spec import ParseError
from benchmarks.models import Campaign
from tests.benchmarks.factories import custom_benchmark, make_campaign
from tests.devices.factories import make_board
from tests.devices.simfarm import register_node

NEW = reverse("benchmarks:campaign_new")
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEVsAsmHAC2PZUVRWx3OKy0Q8Q6v7mGm2Vf3Yw1f1HgX"


@pytest.fixture
def board(db):
    board = make_board(name="bench-1")
    board.host_key = HOST_KEY
    board.save()
    return board


def spec(board, benchmarks, **changes) -> dict:
    return {"name": "x", "boards": [board.name], "benchmarks": benchmarks, **changes}


# --- the catalog ---------------------------------------------------------------------------


def test_every_built_in_benchmark_can_reach_its_minimum_or_is_judged_by_its_floor():
    for benchmark in BUILT_IN.values():
        assert benchmark.noise_floor_s <= benchmark.min_trial_s, benchmark.name
        if benchmark.length_param:
            names = [param.name for param in benchmark.params]
            assert benchmark.length_param in names, benchmark.name
            defaults, _ = benchmark.lengthened(benchmark.clean_params({}))
            assert defaults[benchmark.length_param] >= benchmark.min_trial_s, benchmark.name
    # only 7-Zip's built-in benchmark has a fixed length of its own
    assert [b.name for b in BUILT_IN.values() if not b.length_param] == ["7zip"]


def test_a_run_time_below_the_minimum_is_raised_to_it_and_said():
    params, words = INTLOOP.lengthened(INTLOOP.clean_params({"seconds": 1}))
    assert params == {"seconds": 3}
    assert words == "intloop: seconds 1 raised to 3 s, its minimum trial length"


def test_fixed_work_is_repeated_within_the_trial_until_the_minimum():
    params, words = SHA1SUM.lengthened(SHA1SUM.clean_params({"size": "64M"}))
    assert params == {"size": "64M", "min_seconds": 3}
    assert words == (
        "sha1sum: its work is repeated within each trial until 3 s, its minimum trial length"
    )


@pytest.mark.parametrize(
    ("benchmark", "raw", "minimum", "expected"),
    [
        (INTLOOP, {"seconds": 10}, None, {"seconds": 10}),  # long enough already
        (INTLOOP, {"seconds": 1}, 0, {"seconds": 1}),  # the campaign asks for none
        (INTLOOP, {"seconds": 1}, 7.5, {"seconds": 8}),  # whole seconds, rounded up
        (SHA1SUM, {"min_seconds": 5}, None, {"size": "2G", "min_seconds": 5}),
    ],
)
def test_lengthening_leaves_what_is_long_enough(benchmark, raw, minimum, expected):
    params, words = benchmark.lengthened(benchmark.clean_params(raw), minimum)
    assert params == expected
    assert (words == "") == (params == benchmark.clean_params(raw))


def test_a_short_trial_is_named_with_the_noise_floor_and_a_long_one_is_not():
    assert SHA1SUM.too_short(1.0) == ""
    assert SHA1SUM.too_short(0.31) == (
        "the trial measured for 0.31 s, under sha1sum's noise floor of 1 s: fixed costs make "
        "up much of its figure (run it longer)"
    )


@pytest.mark.parametrize(
    ("parse", "line", "values"),
    [
        (
            SHA1SUM.parse,
            "bytes=1000000 ns=2000000000 sum=" + "a" * 40 + " rounds=4",
            {"throughput": 2.0, "seconds": 0.5},
        ),
        (  # version 1's line: one round
            SHA1SUM.parse,
            "bytes=1000000 ns=2000000000 sum=" + "a" * 40,
            {"throughput": 0.5, "seconds": 2.0},
        ),
        (
            storage.DD.parse,
            "bytes=1000000 write_ns=1000000000 read_ns=500000000 rounds=3",
            {"write": 3.0, "read": 6.0},
        ),
        (
            network.SCP.parse,
            "bytes=1000000 ns=4000000000 cipher=aes128-ctr rounds=8",
            {"throughput": 2.0, "seconds": 0.5},
        ),
        (
            media.FLAC.parse,
            f"ns=3000000000 bytes_in={44 + 176400 * 10} bytes_out=1000 rounds=6",
            {"seconds": 0.5, "realtime": 20.0},
        ),
    ],
)
def test_the_figure_of_repeated_work_is_per_round(parse, line, values):
    parsed = parse({"measure": line}, {})
    assert parsed.values == pytest.approx(values)


def test_a_round_count_of_zero_is_refused():
    with pytest.raises(ParseError, match="0 times"):
        SHA1SUM.parse({"measure": "bytes=1 ns=2 sum=" + "a" * 40 + " rounds=0"}, {})


def test_memory_passes_go_on_past_the_given_ones_until_the_minimum():
    params, _ = memory.MEMBW.lengthened(memory.MEMBW.clean_params({"passes": 2}))
    plan = memory.MEMBW.plan(params, context())
    assert plan.measure.argv[1:] == (str(64 * 1024**2), "2", "0", "3")


def context():
    from benchmarks.catalog.spec import Context

    return Context(workdir="/dev/shm/pifarm-test")


def test_a_custom_benchmark_is_never_lengthened_nor_judged_short(db):
    from benchmarks.catalog import custom

    custom_benchmark("quick", "echo value=1", params={"seconds": "1"})
    quick = custom.lookup("quick")
    assert quick.lengthened(quick.clean_params({}))[1] == ""
    assert quick.too_short(0.01) == ""


# --- campaigns -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_campaigns_runs_run_lengthened_and_its_spec_keeps_what_was_asked(board, redis_queue):
    asked = [{"name": "intloop", "params": {"seconds": 1}}, {"name": "sha1sum"}]
    campaign = campaigns.start(spec(board, asked, repetitions=1))
    assert campaign.spec["benchmarks"] == [
        {"name": "intloop", "params": {"seconds": 1}},
        {"name": "sha1sum", "params": {"size": "2G", "min_seconds": 0}},
    ]
    assert "min_trial_s" not in campaign.spec
    assert {run.benchmark: run.params for run in campaign.runs.all()} == {
        "intloop": {"seconds": 3},
        "sha1sum": {"size": "2G", "min_seconds": 3},
    }
    assert specs.lengthened(campaign.spec) == [
        "intloop: seconds 1 raised to 3 s, its minimum trial length",
        "sha1sum: its work is repeated within each trial until 3 s, its minimum trial length",
    ]


@pytest.mark.django_db
def test_min_trial_s_of_zero_runs_the_parameters_as_given(board, redis_queue):
    asked = [{"name": "intloop", "params": {"seconds": 1}}]
    campaign = campaigns.start(spec(board, asked, repetitions=1, min_trial_s=0))
    assert campaign.spec["min_trial_s"] == 0
    assert campaign.runs.get().params == {"seconds": 1}
    assert specs.lengthened(campaign.spec) == []


@pytest.mark.django_db
@pytest.mark.parametrize("value", [-1, 601, "3", True, float("nan"), float("inf"), 10**400, [3]])
def test_a_min_trial_s_that_is_not_a_number_of_seconds_is_refused(board, value):
    with pytest.raises(specs.SpecError, match="min_trial_s is a number of seconds from 0"):
        specs.check(spec(board, ["intloop"], min_trial_s=value))
    assert not Campaign.objects.exists()


@pytest.mark.django_db
def test_a_stored_spec_of_another_shape_gives_no_note(board):
    for stored in (
        [],
        {"benchmarks": "intloop"},
        {"benchmarks": [{"params": {}}]},
        {"benchmarks": [{"name": "intloop"}], "min_trial_s": "x"},
    ):
        assert specs.lengthened(stored) == []


@pytest.mark.django_db
def test_the_campaign_page_says_what_was_lengthened(client, operator, board, redis_queue):
    campaign = make_campaign(board)
    campaign.spec = spec(board, [{"name": "intloop", "params": {"seconds": 1}}])
    campaign.save()
    client.force_login(operator)
    page = client.get(campaign.get_absolute_url()).content.decode()
    assert "intloop: seconds 1 raised to 3 s, its minimum trial length" in page
    assert "noise floor is suspect" in page


def test_the_builder_preview_says_what_will_be_lengthened_unless_asked_not_to(
    client, operator, board
):
    client.force_login(operator)
    data = {
        "name": "quick",
        "boards": [board.name],
        "peer": "",
        "presets": ["as-is"],
        "use-intloop": "on",
        "p-intloop-seconds": "1",
        "repetition_mode": "fixed",
        "repetitions": "3",
        "order": "grouped",
        "apply_mode": "trial",
        "seed": "1",
    }
    preview = client.post(NEW, data).content.decode()
    assert "Lengthened to repeat well" in preview
    assert "intloop: seconds 1 raised to 3 s, its minimum trial length" in preview
    preview = client.post(NEW, {**data, "as_given": "on"}).content.decode()
    assert "&quot;min_trial_s&quot;: 0" in preview  # the spec the form makes
    assert "Lengthened to repeat well" not in preview


# --- on a simulated Pi ---------------------------------------------------------------------


@pytest.mark.pisim
@pytest.mark.django_db(transaction=True)
def test_a_short_sha1sum_is_repeated_to_the_minimum_and_an_unlengthened_one_is_suspect(
    pisim_farm, run_jobs
):
    board = register_node(pisim_farm.nodes["pi4"])

    def sha1sum_16m(name: str, min_trial_s: float):
        quiet = {"deadline_s": 5, "cpu_below_pct": 90, "load_below": 50}
        benchmarks = [{"name": "sha1sum", "params": {"size": "16M"}}]
        spec = {"name": name, "boards": [board.name], "benchmarks": benchmarks, "repetitions": 1}
        campaign = campaigns.start({**spec, "quiet": quiet, "min_trial_s": min_trial_s})
        run_jobs()
        return campaign

    lengthened, as_given = sha1sum_16m("long", 2), sha1sum_16m("short", 0)
    long_run, short_run = lengthened.runs.get(), as_given.runs.get()
    assert (long_run.state, short_run.state) == ("done", "done"), [
        long_run.reason,
        short_run.reason,
    ]
    assert long_run.params == {"size": "16M", "min_seconds": 2}
    assert long_run.measure_s >= 2 and long_run.details["rounds"] > 1
    assert long_run.details["sha1"] == hashlib.sha1(bytes(16 * 1024**2)).hexdigest()  # noqa: S324
    assert not any("noise floor" in reason for reason in long_run.suspect_reasons)
    assert short_run.details["rounds"] == 1 and short_run.measure_s < 1
    assert short_run.suspect
    assert any("under sha1sum's noise floor of 1 s" in r for r in short_run.suspect_reasons)
