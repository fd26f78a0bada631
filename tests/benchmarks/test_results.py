"""The results table's words for a run: parameters and tool versions."""

from benchmarks import results
from benchmarks.models import Run


def test_the_tool_version_comes_from_each_version_detail_that_has_one():
    run = Run(details={"tool_version": "", "iperf3_version": "iperf 3.12", "sha1": "ab12"})
    assert results.tool_version(run) == "iperf 3.12"


def test_parameters_read_as_words():
    params = {"modes": ["tx", "rx"], "direct": False, "size": "64M"}
    assert results.params_text(params) == "direct=off, modes=tx+rx, size=64M"


def test_the_c_benchmarks_compiler_is_their_tool_version():
    run = Run(
        details={"iterations": 5, "checksum": "ab12", "compiler": "cc (Debian 12.2.0-14) 12.2.0"}
    )
    assert results.tool_version(run) == "cc (Debian 12.2.0-14) 12.2.0"
