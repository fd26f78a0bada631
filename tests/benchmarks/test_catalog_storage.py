"""dd and fio: parsers on real and published output, fuzzed; the directory parameter's
pattern (and that a hostile value is one literal path, never shell); real runs."""

import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import trial
from benchmarks.catalog.spec import Context, ParamError, ParseError
from benchmarks.catalog.storage import DD, FIO
from benchmarks.endpoints import ControllerEndpoint
from tests.benchmarks import catalog_support as support

DD_LOCAL = support.fixture("dd", "timed-dd-coreutils9.1-debian12-x86_64.txt")
FIO_LOCAL = support.fixture("fio", "randread-json-fio3.33-debian12-x86_64.json")
FIO_PUBLISHED = support.fixture("fio", "published-randwrite-libaio-fio3.42-trimmed.txt")
FUZZ = settings(max_examples=150, deadline=None)


def test_dd_reads_both_directions_and_keeps_dds_own_lines():
    parsed = DD.parse({"measure": DD_LOCAL}, DD.clean_params({}))
    support.assert_sane(DD, parsed)
    assert parsed.details["page_cache_dropped"] is True
    assert parsed.details["tool_version"] == "dd (coreutils) 9.1"
    assert "copied" in parsed.details["dd_write"] and "copied" in parsed.details["dd_read"]


def test_fio_reads_this_machines_json_report():
    parsed = FIO.parse({"measure": FIO_LOCAL}, FIO.clean_params({"pattern": "randread"}))
    support.assert_sane(FIO, parsed)
    assert parsed.details["tool_version"] == "fio-3.33"


def test_fio_reads_a_published_report_after_the_lines_before_it():
    parsed = FIO.parse({"measure": FIO_PUBLISHED}, FIO.clean_params({"pattern": "randwrite"}))
    assert parsed.values == {"throughput": 5096143 / 1e6, "iops": 1244.175582}


def test_fio_refuses_a_report_with_nothing_measured():
    with pytest.raises(ParseError, match="fio throughput"):
        FIO.parse({"measure": FIO_PUBLISHED}, FIO.clean_params({"pattern": "randread"}))


@FUZZ
@given(text=st.text() | support.mutated(DD_LOCAL))
def test_dd_parser_gives_values_or_parse_error(text):
    support.parses_or_refuses(DD, {"measure": text}, DD.clean_params({}))


@FUZZ
@given(text=st.text() | support.mutated(FIO_LOCAL) | support.mutated(FIO_PUBLISHED))
def test_fio_parser_gives_values_or_parse_error(text):
    for pattern in ("randread", "write"):
        support.parses_or_refuses(FIO, {"measure": text}, FIO.clean_params({"pattern": pattern}))


@pytest.mark.parametrize("directory", ["", "/", "/mnt/nfs", "/mnt/nfs/", "/srv/pi-4_b.test"])
def test_the_directory_may_be_empty_or_absolute(directory):
    assert DD.clean_params({"directory": directory})["directory"] == directory


@pytest.mark.parametrize(
    "directory",
    [
        "mnt/nfs",
        "/mnt/../etc",
        "/mnt/..",
        "/mnt/./x",
        "/mnt/a b",
        "/mnt/x:y",
        "/mnt/$HOME",
        "; touch /tmp/pwned",
        "/tmp/x; touch /tmp/pwned",
        "/tmp/`id`",
        "/tmp/x\n",
    ],
)
def test_the_directory_refuses_anything_else(directory):
    with pytest.raises(ParamError, match="directory"):
        FIO.clean_params({"directory": directory})


@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (DD, {"count": 0}),
        (DD, {"block_size": "100"}),
        (FIO, {"pattern": "trim"}),
        (FIO, {"seconds": "1s"}),
        (FIO, {"direct": "sometimes"}),
    ],
)
def test_storage_benchmarks_refuse_bad_parameters(benchmark, raw):
    with pytest.raises(ParamError):
        benchmark.clean_params(raw)


@pytest.mark.slow
def test_a_hostile_directory_past_the_pattern_is_still_one_literal_path(tmp_path):
    """Were the pattern missing, `; touch …` would reach dd as part of one file name."""
    marker = tmp_path / "pwned"
    params = {**DD.clean_params({"count": 1}), "directory": f"{tmp_path}/x; touch {marker}"}
    ctx = Context(workdir=f"/dev/shm/pifarm-test-{uuid.uuid4().hex[:12]}")
    with pytest.raises(trial.TrialFailed, match="No such file or directory"):
        trial.run(DD.plan(params, ctx), {"board": ControllerEndpoint()}, ctx)
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (DD, {"count": 8}),
        (FIO, {"seconds": 1, "size": "8M", "pattern": "randread"}),
        (FIO, {"seconds": 1, "size": "8M", "pattern": "write", "block_size": "64K"}),
    ],
)
def test_the_plans_run_on_the_controllers_ram_disk(benchmark, raw):
    support.assert_sane(benchmark, support.run_on_controller(benchmark, raw))


@pytest.mark.slow
def test_dd_writes_into_the_given_directory_and_cleans_up(tmp_path):
    support.assert_sane(DD, support.run_on_controller(DD, {"directory": str(tmp_path), "count": 4}))
    assert list(Path(tmp_path).iterdir()) == []


@pytest.mark.pisim
def test_fio_runs_on_a_simulated_pi(pisim_farm):
    raw = {"seconds": 1, "size": "8M"}
    support.assert_sane(FIO, support.run_on_node(pisim_farm.nodes["pi4"], FIO, raw))
