"""Detached commands on an end: several start in one round trip, each word stays a word."""

import pytest

from benchmarks.endpoints import ControllerEndpoint, Detached
from devices import ssh

AWKWARD = ["$(touch pwned)", "a b", "*", "'", '"', ";", "${1}", ""]  # each must stay one word


def test_commands_started_together_run_in_order_with_their_words_intact(tmp_path):
    end, directory = ControllerEndpoint(), str(tmp_path / "trial")
    printer = ["python3", "-c", "import sys, time; print(time.time(), sys.argv[1:])"]
    first = Detached("first", [*printer, *AWKWARD], 10)
    second = Detached("second", ["sh", "-c", 'printf "%s|" "$@"', "sh", *AWKWARD[::-1]], 10)
    end.start(directory, "last", [*printer, "last", "${2}"], 10, after=[first, second])
    for name in ("first", "second", "last"):
        assert end.wait(directory, name).exit_status == 0, name
    first_line = (tmp_path / "trial" / "first.out").read_text()
    last_line = (tmp_path / "trial" / "last.out").read_text()
    assert first_line.split(" ", 1)[1].strip() == repr(AWKWARD)
    assert (tmp_path / "trial" / "second.out").read_text() == "|".join(AWKWARD[::-1]) + "|"
    assert last_line.split(" ", 1)[1].strip() == repr(["last", "${2}"])
    assert float(first_line.split()[0]) <= float(last_line.split()[0])
    assert not (tmp_path / "pwned").exists() and not list(tmp_path.glob("trial/pwned"))


def test_a_command_that_cannot_start_says_which_and_why(tmp_path):
    directory = tmp_path / "trial"
    (directory / "blocked.pid").mkdir(parents=True)  # its pid file cannot be written
    with pytest.raises(ssh.SSHError, match=r"could not start sleep on controller: .*blocked\.pid"):
        ControllerEndpoint().start(str(directory), "blocked", ["sleep", "5"], 10)
