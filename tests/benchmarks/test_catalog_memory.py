"""Our memory probe and sysbench memory: parsers on real and published output, fuzzed;
parameters refused; the real plans on the controller and on a simulated Pi, whose user `pi`
may lock only 8 MiB (RLIMIT_MEMLOCK), as on Raspberry Pi OS."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalog.memory import MEMBW, SYSBENCH_MEMORY
from benchmarks.catalog.spec import ParamError, ParseError
from benchmarks.trial import TrialFailed
from tests.benchmarks import catalog_support as support

MEMBW_LOCKED = support.fixture("membw", "membw-mlock-ok-gcc12-debian12-x86_64.txt")
MEMBW_REFUSED = support.fixture("membw", "membw-mlock-refused-nonroot-gcc12-debian12-x86_64.txt")
SYSBENCH_LOCAL = support.fixture("sysbench", "memory-write-sysbench1.0.20-debian12-x86_64.txt")
SYSBENCH_PUBLISHED = support.fixture("sysbench", "published-memory-write-sysbench1.0.17.txt")
FUZZ = settings(max_examples=150, deadline=None)
OVER_THE_LOCK_LIMIT = "16M"  # pisim's pi user, like Raspberry Pi OS's, may lock 8 MiB


def test_membw_reads_both_directions_and_the_lock():
    parsed = MEMBW.parse({"measure": MEMBW_LOCKED}, MEMBW.clean_params({}))
    support.assert_sane(MEMBW, parsed)
    assert parsed.details["mlock"] == "ok"


def test_membw_says_when_the_buffer_was_not_locked():
    parsed = MEMBW.parse({"measure": MEMBW_REFUSED}, MEMBW.clean_params({}))
    support.assert_sane(MEMBW, parsed)
    assert parsed.details["mlock"] == "refused:ENOMEM"


def test_sysbench_memory_reads_this_machines_run():
    params = SYSBENCH_MEMORY.clean_params({})
    parsed = SYSBENCH_MEMORY.parse({"measure": SYSBENCH_LOCAL}, params)
    support.assert_sane(SYSBENCH_MEMORY, parsed)
    assert parsed.details["tool_version"] == "sysbench 1.0.20"


def test_sysbench_memory_reads_a_published_run():
    params = SYSBENCH_MEMORY.clean_params({})
    parsed = SYSBENCH_MEMORY.parse({"measure": SYSBENCH_PUBLISHED}, params)
    assert parsed.values == {"throughput": 4045.07}
    assert parsed.details["operations"] == 41430889


def test_sysbench_memory_refuses_a_run_without_the_transfer_line():
    params = SYSBENCH_MEMORY.clean_params({})
    with pytest.raises(ParseError, match="MiB transferred"):
        SYSBENCH_MEMORY.parse({"measure": SYSBENCH_LOCAL.replace("transferred", "")}, params)


@FUZZ
@given(text=st.text() | support.mutated(MEMBW_LOCKED) | support.mutated(MEMBW_REFUSED))
def test_membw_parser_gives_values_or_parse_error(text):
    support.parses_or_refuses(MEMBW, {"measure": text}, MEMBW.clean_params({}))


@FUZZ
@given(text=st.text() | support.mutated(SYSBENCH_LOCAL) | support.mutated(SYSBENCH_PUBLISHED))
def test_sysbench_memory_parser_gives_values_or_parse_error(text):
    support.parses_or_refuses(SYSBENCH_MEMORY, {"measure": text}, SYSBENCH_MEMORY.clean_params({}))


@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (MEMBW, {"size": "512K"}),
        (MEMBW, {"size": "8G"}),
        (MEMBW, {"size": "64M; touch /tmp/pwned"}),
        (MEMBW, {"passes": 0}),
        (MEMBW, {"require_mlock": "maybe"}),
        (SYSBENCH_MEMORY, {"operation": "none"}),
        (SYSBENCH_MEMORY, {"block_size": "lots"}),
        (SYSBENCH_MEMORY, {"threads": 65}),
    ],
)
def test_memory_benchmarks_refuse_bad_parameters(benchmark, raw):
    with pytest.raises(ParamError):
        benchmark.clean_params(raw)


@pytest.mark.slow
def test_membw_runs_on_the_controller():
    support.assert_sane(MEMBW, support.run_on_controller(MEMBW, {"size": "16M", "passes": 2}))


@pytest.mark.slow
def test_sysbench_memory_runs_on_the_controller():
    raw = {"seconds": 1, "total_size": "256M", "operation": "read"}
    support.assert_sane(SYSBENCH_MEMORY, support.run_on_controller(SYSBENCH_MEMORY, raw))


@pytest.mark.pisim
def test_membw_goes_on_unlocked_on_a_simulated_pi_and_says_so(pisim_farm):
    raw = {"size": OVER_THE_LOCK_LIMIT, "passes": 2}
    parsed = support.run_on_node(pisim_farm.nodes["pi4"], MEMBW, raw)
    support.assert_sane(MEMBW, parsed)
    assert parsed.details["mlock"] == "refused:ENOMEM"
    assert parsed.details["compiler"]  # the board's own cc said who it is


@pytest.mark.pisim
def test_membw_fails_clearly_when_the_lock_is_required_and_refused(pisim_farm):
    raw = {"size": OVER_THE_LOCK_LIMIT, "passes": 1, "require_mlock": True}
    with pytest.raises(TrialFailed, match="RLIMIT_MEMLOCK"):
        support.run_on_node(pisim_farm.nodes["pi4"], MEMBW, raw)
