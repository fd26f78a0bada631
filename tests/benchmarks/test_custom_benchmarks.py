"""Custom benchmarks an admin defines: their parser and their limits hold against bad output."""

import pytest
from django.core.exceptions import ValidationError

from benchmarks import catalog
from benchmarks.catalog import custom, custom_rules, iperf3
from benchmarks.catalog.spec import Command, Context, ParseError
from benchmarks.models import CustomBenchmark


@pytest.mark.slow
def test_a_pattern_that_backtracks_without_end_is_stopped_with_a_clear_error():
    # Stopped: left alone, this pattern backtracks through 2^5000 ways of splitting the input.
    with pytest.raises(ParseError, match="took more than 5 s on this output"):
        custom.extract("regex", r"(?P<value>(a+)+b)", "a" * 5000)


@pytest.mark.slow
def test_the_regex_parser_finds_its_value_group():
    assert custom.extract("regex", r"rate=(?P<value>[0-9.]+)", "x\nrate=12.5 MB/s\n") == 12.5
    with pytest.raises(ParseError, match="the output has no match"):
        custom.extract("regex", r"rate=(?P<value>[0-9.]+)", "nothing")


def test_json_nested_too_deeply_is_a_parse_error_not_a_crash():
    with pytest.raises(ParseError, match="nested too deeply"):
        custom.extract("json", "a.b", "[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("digits", [400, 5000])
def test_json_with_an_integer_too_large_for_a_number_is_a_parse_error_not_a_crash(digits):
    """400 digits overflow a float; past 4,300 Python refuses to read the integer at all."""
    text = '{"v": 1' + "0" * (digits - 1) + "}"
    with pytest.raises(ParseError, match="not a finite number"):
        custom.extract("json", "v", text)


@pytest.mark.slow
def test_a_value_no_benchmark_measures_is_a_parse_error():
    with pytest.raises(ParseError, match="more than 1e\\+15"):
        custom.extract("json", "v", '{"v": -2e200}')
    assert custom.extract("regex", r"(?P<value>[0-9.]+)", "1000000000000000") == 1e15


def test_json_paths_follow_keys_and_list_indexes():
    text = '{"end": {"streams": [{"bps": 941.5}]}}'
    assert custom.extract("json", "end.streams.0.bps", text) == 941.5
    with pytest.raises(ParseError, match="no 'nope'"):
        custom.extract("json", "end.nope", text)


def definition(**fields) -> CustomBenchmark:
    return CustomBenchmark(
        **{
            "name": "mine",
            "title": "mine",
            "command": "echo value=1",
            "pattern": r"value=(?P<value>\d+)",
            "unit": "x",
            **fields,
        }
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"pattern": "(unclosed"}, "pattern", "not a valid regular expression"),
        ({"pattern": r"(\d+)"}, "pattern", "(?P<value>...)"),
        ({"timeout_s": 0}, "timeout_s", "greater than or equal to 1"),
        ({"timeout_s": 10**9}, "timeout_s", "less than or equal to 3600"),
        ({"name": "sha1sum"}, "name", "A built-in benchmark has this name"),
        ({"params": {"Bad Name": "x"}}, "params", "parameter names"),
        ({"params": {"p": None}}, "params", "p: the default must be text, in quotes"),
        ({"params": {"q": [1, 2]}}, "params", "q: the default must be text, in quotes"),
        ({"params": {"r": {"a": 1}}}, "params", "r: the default must be text, in quotes"),
        ({"params": {"n": 8}}, "params", 'n: the default must be text, in quotes, such as "8"'),
        ({"params": {"b": True}}, "params", "b: the default must be text, in quotes"),
        ({"params": {"p": "x" * 201}}, "params", "p: the default is 201 characters long"),
        ({"params": {"p": "a\x00b"}}, "params", "p: a NUL character cannot be"),
        ({"params": ["x"]}, "params", "parameter names"),
        ({"title": "dd\u202e to RAM"}, "title", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ({"title": "two\u2028lines"}, "title", "U+2028 LINE SEPARATOR"),
        ({"unit": "MB/s\x85"}, "unit", "U+0085"),
    ],
)
def test_an_admin_cannot_save_a_definition_the_engine_cannot_run(fields, field, words):
    row = definition(**fields)
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert any(words in message for message in refused.value.message_dict[field])


@pytest.mark.django_db
def test_a_default_as_long_as_a_parameter_may_be_is_saved_and_offered_as_it_is():
    longest = "x" * custom_rules.MAX_PARAM_LENGTH
    row = definition(params={"p": longest, "empty": ""})
    row.full_clean()
    row.save()
    benchmark = custom.from_row(CustomBenchmark.objects.get())
    assert benchmark.clean_params({}) == {"p": longest, "empty": ""}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"p": "x" * 300}, "p: the default is 300 characters long"),
        ({"p": None}, "p: the default must be text, in quotes"),
        ({"Bad Name": "x"}, "parameter names"),
    ],
)
def test_a_stored_definition_with_bad_parameters_is_unusable_with_its_reason(params, words):
    """A row saved before these checks (or around the admin) is refused by name, with what an
    admin must fix: never run with the repr of its default (PIFARM_P=None)."""
    definition(params=params).save()
    with pytest.raises(catalog.UnknownBenchmark) as refused:
        catalog.lookup("mine")
    assert "mine cannot be used until an admin fixes it in Admin › Custom benchmarks" in str(
        refused.value
    )
    assert words in str(refused.value)


@pytest.mark.django_db
def test_a_reason_calls_a_command_by_what_it_runs_not_by_its_wrapper():
    """A run's reason says "flood's command exited with 141", not "env exited with 141"."""
    row = CustomBenchmark.objects.create(
        name="flood", title="Flood", command="yes", metric="lines", unit="1", pattern="(?P<value>1)"
    )
    measure = custom.from_row(row).plan({}, Context(workdir="/dev/shm/x")).measure
    assert measure.argv[0] == "env" and measure.program == "flood's command"
    assert Command("board", ("env", "A=1", "sh", "-c", "exit 1", "sha1sum", "f")).program == (
        "sha1sum"
    )
    assert iperf3.server("peer", "10.0.0.1", 5201, 5, wait_for_address=True).program == "iperf3"
