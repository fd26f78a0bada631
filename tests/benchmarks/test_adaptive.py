"""After each run: a campaign of fixed repetitions does not pay for the statistics (scipy, about
a second to import) in every job's work horse."""

import subprocess
import sys


def test_the_engine_of_a_fixed_campaign_loads_no_scipy():
    """What a work horse imports to run and record a run, in a fresh process."""
    script = (
        "import sys, django; django.setup(); "
        "import benchmarks.jobs, benchmarks.adaptive; "
        "print('scipy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False", done.stderr
