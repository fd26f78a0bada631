"""Hostile spec files for `manage.py campaign start`: each refused in words with exit 2, before
it is built or shown whole (benchmarks/spec_files.py, specs.check_shape, catalog.spec.shown).
bench/spec_bombs.py measures what each costs."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks import spec_files, specs
from benchmarks.catalog.spec import shown
from benchmarks.models import Campaign
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db

SPEC = {"name": "x", "boards": ["bench-a"], "benchmarks": ["sha1sum"]}
# 9 levels of lists of 9 aliases of the level below: 387,420,489 strings once expanded
LEVELS = ["&a0 [pi,pi,pi,pi,pi,pi,pi,pi,pi]"]
LEVELS += [f"&a{n} [{','.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
ALIAS_BOMB = f"name: bomb\nboards: [bench-a]\nbenchmarks: [sha1sum]\nseed: [{', '.join(LEVELS)}]\n"
DEEP = "[" * 600 + "]" * 600


@pytest.fixture
def board():
    return make_board("bench-a", host_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchOnly x")


def start(tmp_path, text: str) -> str:
    """campaign start on a file of text: the refusal's words (CommandError, exit 2)."""
    path = tmp_path / "spec"
    path.write_text(text)
    with pytest.raises(CommandError) as refused:
        call_command("campaign", "start", str(path))
    assert refused.value.returncode == 2
    assert not Campaign.objects.exists()
    return str(refused.value)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (ALIAS_BOMB, "uses the YAML alias *a0: a spec takes none"),
        (f"name: deep\nboards: [bench-a]\nbenchmarks: {DEEP}\n", "nested more than 8 levels"),
        (json.dumps(SPEC)[:-1] + f', "seed": {DEEP}}}', "nested more than 8 levels deep"),
        (json.dumps(SPEC)[:-1] + ', "seed": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
        (json.dumps(SPEC)[:-1] + f', "seed": {"9" * 5000}}}', "a number that cannot be read"),
        (f"name: x\nboards: [bench-a]\nseed: {'9' * 5000}\n", "a number that cannot be read"),
        (json.dumps(SPEC)[:-1] + f', "seed": {"9" * 401}}}', "seed must be a whole number"),
        (json.dumps({**SPEC, "boards": ["b" * 20] * 150_000}), "is over 2,621,440 bytes"),
        # a review's: a sexagesimal float past any float (an OverflowError traceback): it is
        # text now, as YAML 1.2 reads it, which the field refuses, showing it cut short
        (f"name: x\nboards: [bench-a]\nmin_trial_s: {'59:' * 180}0.5\n", "not '59:59:59:"),
    ],
)
def test_a_hostile_spec_file_is_refused_in_words(board, tmp_path, text, words):
    said = start(tmp_path, text)
    assert words in said
    assert ("cannot be read" in said) == ("cannot be read" in words)  # one reason, not nested


def test_a_spec_as_large_as_the_api_takes_is_refused_by_its_count_not_read_whole(board, tmp_path):
    names = [f"b-{i}" for i in range(200_001)]
    said = start(tmp_path, json.dumps({**SPEC, "boards": names}))
    assert "more than 200,000 values" in said


def test_yaml_anchors_without_aliases_are_read(board, tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("name: &n anchored\nboards: [bench-a]\nbenchmarks: [sha1sum]\n")
    assert spec_files.read(str(path))["name"] == "anchored"


def test_a_shape_too_deep_is_refused_by_the_api_check_too():
    with pytest.raises(specs.SpecError, match="nested more than 8 levels deep"):
        specs.check({**SPEC, "seed": json.loads(DEEP)})


def test_a_value_is_shown_without_being_read_whole():
    bomb = ["pi"] * 9
    for _ in range(8):
        bomb = [bomb] * 9
    assert len(shown(bomb)) <= 80
    assert shown(10**5000 - 1) == "<an integer of 5,000 digits>"


def test_a_yaml_list_too_long_is_refused_while_it_is_read_not_once_built(board, tmp_path):
    """A list of a million names was built whole, then refused: 5 s and 556 MB."""
    said = start(tmp_path, "name: x\nboards: [" + "a," * 250_000 + "a]\n")
    assert said.endswith("spec holds more than 200,000 values")
    assert "the spec was refused" not in said  # the file's reader refused it, not the check


def test_yaml_1_1_s_base_60_and_yes_no_on_off_stay_the_text_they_show(board, tmp_path):
    """PyYAML reads YAML 1.1, where "1:30" is 90 and "off" is false: a schedule would run
    every 90 s, and OpenVPN's compression "off" would be refused as a bool."""
    path = tmp_path / "spec.yaml"
    path.write_text(
        "name: x\nboards: [bench-a]\nschedule: {every: 1:30}\n"
        "benchmarks: [{name: openvpn, params: {compression: off}}]\nrerun_suspect: yes\n"
        "repetitions: 3\nseed: 12\nmin_trial_s: 1.5\nquiet: true\nlong: 1e1\nshort: -2.5E-1\n"
    )
    found = spec_files.read(str(path))
    assert found["schedule"] == {"every": "1:30"}
    assert found["benchmarks"][0]["params"] == {"compression": "off"}
    assert found["rerun_suspect"] == "yes"  # refused by the check, in words (not taken as true)
    assert (found["repetitions"], found["seed"], found["min_trial_s"]) == (3, 12, 1.5)
    assert found["quiet"] is True
    assert (found["long"], found["short"]) == (10.0, -0.25)  # YAML 1.1 would read text
    said = start(tmp_path, path.read_text())
    assert "every is a time such as" in said and "'1:30'" in said


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("quiet: no", "quiet is true, false, or an object with"),
        ("keep: yes", "keep must be true (leave the last preset on the boards) or false"),
        ("rerun_suspect: on", "rerun_suspect must be true (run suspect trials again) or false"),
    ],
)
def test_yes_no_on_off_given_for_a_bool_is_refused_saying_to_write_true_or_false(
    board, tmp_path, line, words
):
    said = start(tmp_path, f"name: x\nboards: [bench-a]\nbenchmarks: [sha1sum]\n{line}\n")
    word = line.split(": ")[1]
    assert words in said
    assert f"not '{word}' (in a spec, {word} is text: write true or false)" in said
