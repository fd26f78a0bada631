"""Custom benchmarks an admin defines: their parser and their limits hold against bad output."""

import time

import pytest
from django.core.exceptions import ValidationError

from benchmarks.catalog import custom
from benchmarks.catalog.spec import ParseError
from benchmarks.models import CustomBenchmark


def test_a_pattern_that_backtracks_without_end_is_stopped_with_a_clear_error():
    started = time.monotonic()
    with pytest.raises(ParseError, match="took more than 5 s on this output"):
        custom.extract("regex", r"(?P<value>(a+)+b)", "a" * 5000)
    assert time.monotonic() - started < custom.REGEX_TIME_LIMIT_S + 3


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


def test_json_paths_follow_keys_and_list_indexes():
    text = '{"end": {"streams": [{"bps": 941.5}]}}'
    assert custom.extract("json", "end.streams.0.bps", text) == 941.5
    with pytest.raises(ParseError, match="no 'nope'"):
        custom.extract("json", "end.nope", text)


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
    ],
)
def test_an_admin_cannot_save_a_definition_the_engine_cannot_run(fields, field, words):
    row = CustomBenchmark(
        **{
            "name": "mine",
            "title": "mine",
            "command": "echo value=1",
            "pattern": r"value=(?P<value>\d+)",
            "unit": "x",
            **fields,
        }  # fmt: skip
    )
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert any(words in message for message in refused.value.message_dict[field])
