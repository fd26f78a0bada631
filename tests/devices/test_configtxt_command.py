"""manage.py configtxt: validate and diff files kept in git or on SD cards."""

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devices.management.commands.configtxt import RULES_APPLIED, SHOWN_FINDINGS

FIXTURES = Path(__file__).parent.parent / "fixtures" / "configtxt"
ROOT = Path(__file__).parent.parent.parent


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("configtxt", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "config.txt"
    path.write_bytes(b"arm_freq=900\nover_voltage = [-2,2]\n[pi4]\nforce_turbo=1\n")
    return path


def test_a_stock_file_is_clean():
    out, err = run("validate", str(FIXTURES / "bookworm.txt"), "--board", "pi4", "--as", "board")
    assert out == ""
    assert err.startswith("0 error(s), 0 warning(s) for pi4")


def test_findings_print_one_a_line_and_errors_fail(broken):
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "configtxt", "validate", str(broken), "--board", "pi1", "--as", "board", stdout=out
        )
    assert caught.value.returncode == 1
    assert str(caught.value).startswith("1 error(s), 2 warning(s) for pi1")
    assert out.getvalue().splitlines() == [
        "2: warning: spaces around '=': the firmware may not read the line",
        "2: error: over_voltage takes one integer, not a range like [-2,2]",
        "4: warning: force_turbo is under [pi4], which does not match this board (pi1): "
        "the firmware skips it (add [all] before it if it is meant for every board)",
    ]


def test_a_file_is_checked_as_a_preset_unless_told_it_is_a_boards(tmp_path):
    """What a person checks before saving a preset: the preset form's rules, named."""
    path = tmp_path / "config.txt"
    path.write_text("kernel=evil.img\n[pi4]\narm_freq=1800\n")
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("configtxt", "validate", str(path), "--board", "pi4", stdout=out)
    assert out.getvalue().splitlines()[:2] == [
        "1: error: kernel decides what the board boots, and a preset is about clocks, voltages "
        "and the governor: only a staff user can acknowledge it",
        "2: error: a preset applies to the whole board: [filters] are not allowed",
    ]
    assert str(caught.value).endswith(RULES_APPLIED["preset"].format(boot="refused"))
    _, said = run("validate", str(path), "--board", "pi4", "--as", "board")
    assert said.startswith("0 error(s)") and said.endswith(RULES_APPLIED["board"] + "\n")


def test_a_preset_may_acknowledge_a_boot_option(tmp_path):
    path = tmp_path / "config.txt"
    path.write_text("kernel=kernel8.img\n")
    out, said = run("validate", str(path), "--board", "pi4", "--acknowledge-boot")
    assert out == "1: warning: kernel decides what the board boots (acknowledged)\n"
    assert said.startswith("0 error(s), 1 warning(s)")
    assert "boot options acknowledged" in said
    with pytest.raises(CommandError, match="--acknowledge-boot is for --as preset"):
        run("validate", str(path), "--board", "pi4", "--as", "board", "--acknowledge-boot")


def test_warnings_alone_exit_0():
    out, _ = run(
        "validate", str(FIXTURES / "dynamic_overclock_pi1.txt"), "--board", "000e", "--as", "board"
    )
    assert out.startswith("3: warning: arm_freq_min=500 is below the pi1 default of 700")


def test_a_revision_code_names_the_board(broken):
    with pytest.raises(CommandError, match="for Raspberry Pi 4 Model B rev 1.4"):
        run("validate", str(broken), "--board", "c03114", "--as", "board")


def test_acknowledging_the_warranty_bit(tmp_path):
    path = tmp_path / "config.txt"
    path.write_text("force_turbo=1\nover_voltage=2\n")
    with pytest.raises(CommandError):
        run("validate", str(path), "--board", "pi3")
    out, _ = run("validate", str(path), "--board", "pi3", "--acknowledge-warranty")
    assert out.startswith("1: warning: force_turbo=1 with over_voltage=2")


def test_unknown_board_and_missing_file_are_clear_errors(tmp_path):
    with pytest.raises(CommandError, match="unknown board 'pi9': give a family"):
        run("validate", str(FIXTURES / "bookworm.txt"), "--board", "pi9")
    with pytest.raises(CommandError, match="cannot read .*nope.txt: No such file"):
        run("validate", str(tmp_path / "nope.txt"), "--board", "pi4")


def test_diff_prints_a_unified_diff(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("arm_freq=900\n")
    b.write_text("arm_freq=1000\n")
    out, _ = run("diff", str(a), str(b))
    assert out.splitlines()[2:] == ["@@ -1 +1 @@", "-arm_freq=900", "+arm_freq=1000"]
    assert run("diff", str(a), str(a))[0] == ""


def test_diff_side_by_side(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("# x\narm_freq=900\n")
    b.write_text("# x\narm_freq=1000\ncore_freq=300\n")
    out, _ = run("diff", "--side-by-side", str(a), str(b))
    assert out.splitlines() == [
        "   1 # x               1 # x",
        "   2 arm_freq=900 |    2 arm_freq=1000",
        "                  >    3 core_freq=300",
    ]


@pytest.mark.slow  # manage.py in a process of its own
def test_the_real_command_line_exit_status_and_stdin(broken):
    command = [sys.executable, "manage.py", "configtxt", "validate"]
    failed = subprocess.run(
        [*command, str(broken), "--board", "pi1", "--as", "board"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1
    assert failed.stdout.splitlines()[1] == (
        "2: error: over_voltage takes one integer, not a range like [-2,2]"
    )
    clean = subprocess.run(
        [*command, "-", "--board", "pi5", "--as", "board"],
        cwd=ROOT,
        input=(FIXTURES / "bookworm.txt").read_text(),
        capture_output=True,
        text=True,
    )
    assert (clean.returncode, clean.stdout) == (0, "")


def test_an_integer_of_5000_digits_is_a_finding_not_a_traceback(tmp_path):
    path = tmp_path / "config.txt"
    path.write_text("arm_freq=" + "9" * 5000 + "\n")
    with pytest.raises(CommandError) as caught:
        run("validate", str(path), "--board", "pi4")
    assert caught.value.returncode == 1
    assert str(caught.value).startswith("2 error(s)")  # its length, and its digits


def test_a_flood_of_bad_lines_prints_the_first_findings_and_counts_the_rest(tmp_path):
    path = tmp_path / "config.txt"
    path.write_bytes(b"a\n" * 30_000)  # 60,000 bytes: under the size limit
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "configtxt", "validate", str(path), "--board", "pi4", "--as", "board", stdout=out
        )
    lines = out.getvalue().splitlines()
    assert len(lines) == SHOWN_FINDINGS + 1
    assert lines[-1] == f"... and {30_000 - SHOWN_FINDINGS:,} more"
    assert str(caught.value).startswith("30000 error(s)")


def test_a_file_over_the_size_limit_is_one_finding(tmp_path):
    path = tmp_path / "config.txt"
    path.write_bytes(b"".join(b"k%d=1\n" % i for i in range(100_000)))
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("configtxt", "validate", str(path), "--board", "pi4", stdout=out)
    assert out.getvalue() == "-: error: the file is 888,890 bytes, over the 64 KiB limit\n"
