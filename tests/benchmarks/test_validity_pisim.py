"""A quiet board keeps every trial: one catalog benchmark of each family, run by the engine
with short parameters on a simulated 32-bit Pi 4 (the i386 userland, where the benchmark's own
work was once taken for background load), ends with no suspect trial."""

import os

import pytest

from benchmarks import campaigns
from pisim.pytest_plugin import SESSION_SUBNETS, start_free_farm
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]

TRIALS = 2
# One benchmark of each family the catalog has, with parameters that keep it short.
FAMILIES = {
    "cpu": ("intloop", {"seconds": 3}),
    "crypto": ("openssl-speed", {"seconds": 2}),
    "memory": ("membw", {"size": "16M", "passes": 2}),
    "media": ("lame", {"seconds": 10}),
    "compression": ("7zip", {"dictionary_log2": 20}),
    "storage": ("dd", {"count": 64}),
    "network": ("iperf3-tcp", {"duration": 3}),
    "tunnel": ("openvpn", {"duration": 3}),
}


@pytest.fixture(scope="module")
def farm():
    if os.geteuid() != 0:
        pytest.skip("pisim needs root (network namespaces, mounts, sshd)")
    farm = start_free_farm("v", SESSION_SUBNETS, [("p32", "pi4b-bookworm-32", None)], 1.0)
    try:
        yield farm
    finally:
        farm.stop()


@pytest.mark.parametrize("family", FAMILIES)
def test_a_quiet_32_bit_board_keeps_every_trial(farm, run_jobs, family):
    name, params = FAMILIES[family]
    board = register_node(farm.nodes["p32"])
    campaign = campaigns.start(
        {
            "name": f"quiet {family}",
            "boards": [board.name],
            "repetitions": TRIALS,
            "peer": "controller",
            "benchmarks": [{"name": name, "params": params}],
        }
    )
    run_jobs()
    runs = list(campaign.runs.order_by("sequence"))
    assert [(run.state, run.reason) for run in runs] == [("done", "")] * TRIALS
    for run in runs:
        own = run.environment["telemetry"]
        print(
            name,
            own["cpu_busy_mean_pct"],
            own["trial_cpu_s"],
            own["cores_busy_mean_pct"],
            own["procs_mean_pct"],
            run.environment["peer_telemetry"]["procs_mean_pct"],
        )
    assert [run.suspect_reasons for run in runs] == [[]] * TRIALS
