"""sysbench cpu, stress-ng cpu and our integer loop: parsers on real and published output,
fuzzed; parameters refused; the real plans run on the controller and on a simulated Pi."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.catalog import cpu
from benchmarks.catalog.spec import ParamError, ParseError
from tests.benchmarks import catalog_support as support

SYSBENCH_LOCAL = support.fixture("sysbench", "cpu-sysbench1.0.20-debian12-x86_64.txt")
SYSBENCH_PI5 = support.fixture(
    "sysbench", "published-raspberry-pi5-ubuntu24.04-cpu-1thread-sysbench1.0.20.txt"
)
STRESS_YAML = support.fixture("stress-ng", "cpu-int64-yaml-stress-ng0.15.06-debian12-x86_64.yaml")
STRESS_BRIEF = support.fixture("stress-ng", "published-cpu-nproc-metrics-brief-stderr.txt")
INTLOOP_LOCAL = support.fixture("intloop", "intloop-gcc12-debian12-x86_64.txt")
FUZZ = settings(max_examples=150, deadline=None)


def test_sysbench_cpu_reads_events_per_second_of_this_machine():
    params = cpu.SYSBENCH_CPU.clean_params({})
    parsed = cpu.SYSBENCH_CPU.parse({"measure": SYSBENCH_LOCAL}, params)
    support.assert_sane(cpu.SYSBENCH_CPU, parsed)
    assert parsed.details["tool_version"] == "sysbench 1.0.20"


def test_sysbench_cpu_reads_a_published_raspberry_pi_5_run():
    parsed = cpu.SYSBENCH_CPU.parse({"measure": SYSBENCH_PI5}, cpu.SYSBENCH_CPU.clean_params({}))
    assert parsed.values == {"events_per_second": 1033.96}
    assert parsed.details["events"] == 10342


def test_sysbench_cpu_refuses_output_without_the_rate():
    cut = SYSBENCH_LOCAL.replace("events per second", "events")
    with pytest.raises(ParseError, match="events per second"):
        cpu.SYSBENCH_CPU.parse({"measure": cut}, cpu.SYSBENCH_CPU.clean_params({}))


def test_sysbench_cpu_refuses_a_rate_no_benchmark_measures():
    absurd = re.sub(
        r"events per second:\s*[0-9.]+", "events per second: 1" + "0" * 200, SYSBENCH_LOCAL
    )
    with pytest.raises(ParseError, match="more than 1e\\+15: no benchmark measures that much"):
        cpu.SYSBENCH_CPU.parse({"measure": absurd}, cpu.SYSBENCH_CPU.clean_params({}))


def test_stress_ng_reads_its_yaml_report():
    params = cpu.STRESS_NG_CPU.clean_params({})
    parsed = cpu.STRESS_NG_CPU.parse({"measure": "", "yaml": STRESS_YAML}, params)
    support.assert_sane(cpu.STRESS_NG_CPU, parsed)
    assert parsed.details["tool_version"] == "0.15.06"


def test_stress_ng_falls_back_to_a_published_metrics_brief_table():
    params = cpu.STRESS_NG_CPU.clean_params({})
    parsed = cpu.STRESS_NG_CPU.parse({"measure": STRESS_BRIEF, "yaml": ""}, params)
    assert parsed.values == {"bogo_ops_per_second": 130.58}


def test_stress_ng_refuses_a_table_row_whose_rate_is_not_a_number():
    row = "stress-ng: metrc: [1] cpu   2965   1.00   1.00   0.00   29.64.90   2967.24\n"
    with pytest.raises(ParseError, match="bogo ops/s"):
        cpu.STRESS_NG_CPU.parse({"measure": row, "yaml": ""}, cpu.STRESS_NG_CPU.clean_params({}))


def test_intloop_reads_its_own_line():
    parsed = cpu.INTLOOP.parse({"measure": INTLOOP_LOCAL}, cpu.INTLOOP.clean_params({}))
    support.assert_sane(cpu.INTLOOP, parsed)


@pytest.mark.parametrize("benchmark", [cpu.SYSBENCH_CPU, cpu.STRESS_NG_CPU, cpu.INTLOOP])
@FUZZ
@given(text=st.text())
def test_cpu_parsers_give_values_or_parse_error_on_any_text(benchmark, text):
    support.parses_or_refuses(
        benchmark, {"measure": text, "yaml": text}, benchmark.clean_params({})
    )


@FUZZ
@given(text=support.mutated(SYSBENCH_LOCAL) | support.mutated(SYSBENCH_PI5))
def test_sysbench_cpu_parser_survives_mutated_real_output(text):
    support.parses_or_refuses(
        cpu.SYSBENCH_CPU, {"measure": text}, cpu.SYSBENCH_CPU.clean_params({})
    )


@FUZZ
@given(yaml=support.mutated(STRESS_YAML), brief=support.mutated(STRESS_BRIEF))
def test_stress_ng_parser_survives_mutated_real_output(yaml, brief):
    params = cpu.STRESS_NG_CPU.clean_params({})
    support.parses_or_refuses(cpu.STRESS_NG_CPU, {"measure": brief, "yaml": yaml}, params)


@FUZZ
@given(text=support.mutated(INTLOOP_LOCAL))
def test_intloop_parser_survives_mutated_real_output(text):
    support.parses_or_refuses(cpu.INTLOOP, {"measure": text}, cpu.INTLOOP.clean_params({}))


@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (cpu.SYSBENCH_CPU, {"threads": "two"}),
        (cpu.SYSBENCH_CPU, {"threads": 0}),
        (cpu.SYSBENCH_CPU, {"seconds": 601}),
        (cpu.SYSBENCH_CPU, {"max_prime": 1.5}),
        (cpu.STRESS_NG_CPU, {"method": "int64; touch /tmp/pwned"}),
        (cpu.STRESS_NG_CPU, {"workers": -1}),
        (cpu.INTLOOP, {"seconds": 0}),
        (cpu.INTLOOP, {"seconds": "10; touch /tmp/pwned"}),
        (cpu.INTLOOP, {"threads": 2}),
    ],
)
def test_cpu_benchmarks_refuse_bad_parameters(benchmark, raw):
    with pytest.raises(ParamError):
        benchmark.clean_params(raw)


@pytest.mark.slow
@pytest.mark.parametrize(
    "benchmark, raw",
    [
        (cpu.SYSBENCH_CPU, {"seconds": 1, "max_prime": 2000}),
        (cpu.STRESS_NG_CPU, {"seconds": 1}),
        (cpu.INTLOOP, {"seconds": 1}),
    ],
)
def test_cpu_plans_run_on_the_controller(benchmark, raw):
    support.assert_sane(benchmark, support.run_on_controller(benchmark, raw))


@pytest.mark.pisim
def test_intloop_compiles_and_runs_on_a_simulated_pi(pisim_farm):
    parsed = support.run_on_node(pisim_farm.nodes["pi4"], cpu.INTLOOP, {"seconds": 1})
    support.assert_sane(cpu.INTLOOP, parsed)
    assert parsed.details["compiler"]  # the board's own cc said who it is


@pytest.mark.pisim
def test_sysbench_cpu_runs_on_a_simulated_pi(pisim_farm):
    parsed = support.run_on_node(pisim_farm.nodes["pi4"], cpu.SYSBENCH_CPU, {"seconds": 1})
    support.assert_sane(cpu.SYSBENCH_CPU, parsed)


def test_a_refused_size_is_echoed_as_given_and_a_good_one_is_kept_upper_case():
    with pytest.raises(ParamError) as refused:
        cpu.SHA1SUM.clean_params({"size": "64M; touch /tmp/pwned"})
    assert str(refused.value) == (
        "size: '64M; touch /tmp/pwned' is not a size (a number with K, M or G, e.g. 64M)"
    )
    assert cpu.SHA1SUM.clean_params({"size": " 64m "})["size"] == "64M"
