"""7-Zip's benchmark: ratings and version from real and published output, fuzzed; parameters
refused; the real plan on the controller."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalog.compression import SEVENZIP
from benchmarks.catalog.spec import ParamError, ParseError
from tests.benchmarks import catalog_support as support

LOCAL = support.fixture("7zip", "bench-mmt1-md16-7zz26.02-debian12-x86_64.txt")
PI5 = support.fixture("7zip", "published-raspberry-pi5-ubuntu24.04-mmt1-7z23.01-arm64.txt")
PARAMS = SEVENZIP.clean_params({})


def test_it_reads_the_ratings_and_version_of_this_machines_7zz():
    parsed = SEVENZIP.parse({"measure": LOCAL}, PARAMS)
    support.assert_sane(SEVENZIP, parsed)
    assert parsed.details["tool_version"] == "26.02"


def test_it_reads_a_published_raspberry_pi_5_run():
    parsed = SEVENZIP.parse({"measure": PI5}, PARAMS)
    assert parsed.values == {
        "compress_rating": 3387,
        "decompress_rating": 3579,
        "total_rating": 3483,
    }
    assert parsed.details["tool_version"] == "23.01"


def test_it_refuses_a_run_cut_before_the_totals():
    with pytest.raises(ParseError, match="Tot:"):
        SEVENZIP.parse({"measure": PI5.split("Tot:")[0]}, PARAMS)


@settings(max_examples=200, deadline=None)
@given(text=st.text() | support.mutated(LOCAL) | support.mutated(PI5))
def test_the_parser_gives_values_or_parse_error(text):
    support.parses_or_refuses(SEVENZIP, {"measure": text}, PARAMS)


@pytest.mark.parametrize(
    "raw", [{"threads": 0}, {"threads": "1 -so"}, {"dictionary_log2": 30}, {"passes": 2}]
)
def test_it_refuses_bad_parameters(raw):
    with pytest.raises(ParamError):
        SEVENZIP.clean_params(raw)


@pytest.mark.slow
def test_the_plan_runs_on_the_controller():
    support.assert_sane(SEVENZIP, support.run_on_controller(SEVENZIP, {"dictionary_log2": 16}))
