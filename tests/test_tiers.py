"""tests/tiers.py holds: an unmarked test that starts a process fails, naming it; a marked one
runs; a heavy fixture without its marker stops the collection. Run in this process (pytester),
so the checks are exercised without starting anything."""

import pytest

INNER = ["-p", "tests.tiers", "-p", "no:django", "-p", "no:cacheprovider", "-p", "no:xdist"]


def test_an_unmarked_test_that_starts_a_process_fails_naming_it(pytester):
    pytester.makepyfile(
        """
        import os
        import subprocess

        import pytest

        def test_runs_a_tool():
            subprocess.run(["true"], check=False)

        def test_uses_the_shell():
            os.system("true")

        @pytest.mark.slow
        def test_marked():
            pass
        """
    )
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(failed=2, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_runs_a_tool started a process (true): mark it slow*",
            "*test_uses_the_shell started a process (os.system): mark it slow*",
        ]
    )


def test_a_heavy_fixture_without_its_marker_stops_the_collection(pytester):
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def pisim_farm():
            return None
        """
    )
    pytester.makepyfile(
        """
        import pytest

        def test_unmarked(pisim_farm):
            pass

        @pytest.mark.parametrize("page", ["dashboard"])
        def test_a_parameter_named_like_a_fixture(page):
            pass
        """
    )
    result = pytester.runpytest_inprocess(*INNER)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_unmarked uses pisim_farm: mark it pisim*"])
    assert "test_a_parameter_named_like_a_fixture" not in result.stderr.str()
