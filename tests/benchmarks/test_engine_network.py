"""Network campaigns through the engine: the controller as the peer, on the farm's bridge."""

import threading
import time

import pytest

from benchmarks import campaigns
from benchmarks.catalog.spec import Context
from benchmarks.models import Run
from benchmarks.runner import run_paths
from devices import presets
from devices.models import Preset
from pisim import SMSC95XX_CYCLES_PER_FRAME, Faults
from tests.benchmarks.factories import quick_campaign
from tests.devices.simfarm import register_node
from tests.workers import wait_until

from .contexts import left_on_controller, left_on_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]


@pytest.mark.measures
def test_iperf3_through_the_engine_on_the_100_mbit_board_reports_the_line_rate(
    pisim_farm, run_jobs
):
    board = register_node(pisim_farm.nodes["pi3"])
    campaign = quick_campaign(
        [board], "iperf3-tcp", {"duration": 2}, name="line rate", peer="controller"
    )
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason
    throughput = run.measurements.get(metric="throughput")
    assert throughput.unit == "Mbit/s"
    assert 90 <= throughput.value <= 100
    assert run.peer == "controller"
    assert run.environment["peer_telemetry"]["n"] >= 1  # the peer was sampled too
    # The line rate the board's kernel reports, which a comparison draws; and the version
    # a comparison lists, in its column.
    assert run.environment["link"] == {"device": "eth0", "mbit": 100, "mtu": 1500}
    assert run.tool_version == run.details["iperf3_version"] != ""
    assert run.environment["peer_identity"]["name"] == "controller"
    assert (
        run.environment["peer_identity"]["address"] == "10.213." + board.host.split(".")[2] + ".1"
    )


def test_a_cancelled_openvpn_run_leaves_nothing_on_the_board_or_the_peer(pisim_farm, run_jobs):
    node = pisim_farm.nodes["pi3"]
    board = register_node(node)
    campaign = quick_campaign(
        [board], "openvpn", {"duration": 30}, name="cancel a tunnel", peer="controller"
    )
    run = campaign.runs.get()

    def cancel_while_measuring():
        wait_until(lambda: Run.objects.get(pk=run.pk).step.startswith("measuring"), "measuring")
        time.sleep(4)  # the tunnel is up and iperf3 runs through it
        campaigns.cancel_run(run)

    canceller = threading.Thread(target=cancel_while_measuring)
    canceller.start()
    run_jobs()
    canceller.join()
    run.refresh_from_db()
    assert run.state == Run.State.CANCELLED, run.reason
    assert run.reason.endswith("its processes on the board and the peer were stopped")
    ctx = Context(**run_paths(run.pk))
    assert left_on_node(node, ctx) == []
    assert left_on_controller(ctx) == []


@pytest.mark.measures
def test_an_overclock_lifts_the_cpu_bound_100_mbit_link_of_a_simulated_pi_3(
    pisim_node_factory, run_jobs, fast
):
    """The seed experience, simulated: the Pi 3's USB Ethernet costs CPU per frame, so its
    link follows the Arm clock that the preset sets (pisim: Faults.usb_nic_cycles)."""
    node = pisim_node_factory(
        profile="pi3b-legacy", faults=Faults(usb_nic_cycles=SMSC95XX_CYCLES_PER_FRAME)
    )
    board = register_node(node)
    slow = Preset.objects.create(name="held at 600")
    presets.new_version(slow, options={"arm_freq": "600"}, governor="performance")
    quick = Preset.objects.create(name="1200 all the time")
    presets.new_version(quick, options={"arm_freq": "1200"}, governor="performance")
    campaign = quick_campaign(
        [board],
        "iperf3-tcp",
        {"duration": 2},
        name="seed",
        peer="controller",
        presets=["held at 600", "1200 all the time"],
        apply_mode="direct",
        repetitions=2,
    )
    run_jobs()
    best = {}
    for run in campaign.runs.select_related("preset_version__preset"):
        assert run.state == Run.State.DONE, run.reason
        value = run.measurements.get(metric="throughput").value
        name = run.preset_version.preset.name
        best[name] = max(best.get(name, 0), value)  # best of two: the host is shared
    assert best["1200 all the time"] >= 1.4 * best["held at 600"], best


def test_scp_to_the_controller_runs_through_the_engine(pisim_farm, run_jobs):
    """The controller only runs an scp client (it may be root: no sshd of its own is needed)."""
    board = register_node(pisim_farm.nodes["pi4"])
    campaign = quick_campaign([board], "scp", {"size": "8M"}, name="scp", peer="controller")
    run_jobs()
    run = campaign.runs.get()
    assert run.state == Run.State.DONE, run.reason
    assert run.details["bytes"] == 8 * 1024**2
    assert run.measurements.get(metric="throughput").value > 0
