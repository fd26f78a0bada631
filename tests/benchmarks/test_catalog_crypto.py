"""openssl speed: the -mr table on real and published output, fuzzed; parameters refused; the
real plan on the controller and on a simulated Pi."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalog.crypto import OPENSSL_SPEED
from benchmarks.catalog.spec import ParamError, ParseError
from tests.benchmarks import catalog_support as support

ONE_SIZE = support.fixture(
    "openssl", "speed-mr-bytes16384-aes-128-gcm-openssl3.0.19-debian12-x86_64.txt"
)
ALL_SIZES = support.fixture(
    "openssl", "speed-mr-all-sizes-chacha20-poly1305-openssl3.0.19-debian12-x86_64.txt"
)
PUBLISHED = support.fixture(
    "openssl", "published-erlang-otp-crypto_bench_SUITE-aes-128-cbc-all-sizes.txt"
)
VERSION = "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)\n"
FUZZ = settings(max_examples=150, deadline=None)


def params(**raw):
    return OPENSSL_SPEED.clean_params(raw)


def test_it_reads_the_one_block_size_this_machine_measured():
    parsed = OPENSSL_SPEED.parse({"measure": ONE_SIZE, "version": VERSION}, params())
    support.assert_sane(OPENSSL_SPEED, parsed)
    assert parsed.details["tool_version"] == "OpenSSL 3.0.19"
    assert list(parsed.details["table_bytes_per_second"]) == ["AES-128-GCM"]


def test_it_picks_the_chosen_block_size_from_a_full_table():
    chosen = params(algorithm="chacha20-poly1305", block_size="1024")
    parsed = OPENSSL_SPEED.parse({"measure": ALL_SIZES, "version": VERSION}, chosen)
    table = parsed.details["table_bytes_per_second"]["ChaCha20-Poly1305"]
    assert parsed.values["throughput"] == table["1024"] / 1e6
    assert len(table) == 6


def test_it_reads_a_published_table():
    chosen = params(algorithm="aes-128-cbc", block_size="8192")
    parsed = OPENSSL_SPEED.parse({"measure": PUBLISHED, "version": ""}, chosen)
    assert parsed.values == {"throughput": 806892821.40 / 1e6}


def test_it_says_which_block_size_is_missing():
    chosen = params(algorithm="aes-128-cbc", block_size="16384")
    with pytest.raises(ParseError, match="16384-byte"):
        OPENSSL_SPEED.parse({"measure": PUBLISHED}, chosen)


def test_it_says_which_algorithm_it_found_instead():
    with pytest.raises(ParseError, match="found: AES-128-GCM"):
        OPENSSL_SPEED.parse({"measure": ONE_SIZE}, params(algorithm="sha256"))


@FUZZ
@given(
    text=st.text()
    | support.mutated(ONE_SIZE)
    | support.mutated(ALL_SIZES)
    | support.mutated(PUBLISHED)
)
def test_the_parser_gives_values_or_parse_error(text):
    for chosen in (params(), params(algorithm="aes-128-cbc", block_size="8192")):
        support.parses_or_refuses(OPENSSL_SPEED, {"measure": text, "version": text}, chosen)


@pytest.mark.parametrize(
    "raw",
    [
        {"algorithm": "rc4"},
        {"algorithm": "aes-128-gcm -engine /tmp/evil.so"},
        {"block_size": "4096"},
        {"seconds": 0},
        {"seconds": "3; touch /tmp/pwned"},
    ],
)
def test_it_refuses_bad_parameters(raw):
    with pytest.raises(ParamError):
        OPENSSL_SPEED.clean_params(raw)


@pytest.mark.slow
def test_the_plan_runs_on_the_controller():
    parsed = support.run_on_controller(OPENSSL_SPEED, {"seconds": 1, "algorithm": "sha256"})
    support.assert_sane(OPENSSL_SPEED, parsed)
    assert parsed.details["tool_version"].startswith("OpenSSL")


@pytest.mark.pisim
def test_the_plan_runs_on_a_simulated_pi(pisim_farm):
    parsed = support.run_on_node(pisim_farm.nodes["pi4"], OPENSSL_SPEED, {"seconds": 1})
    support.assert_sane(OPENSSL_SPEED, parsed)
