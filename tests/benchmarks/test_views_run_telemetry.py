"""One run's telemetry over time, as JSON for the comparison page's chart of it."""

import uuid

import pytest
from django.urls import reverse

from benchmarks.models import Campaign
from tests.benchmarks.factories import lane_on, trials

pytestmark = pytest.mark.django_db
# What the engine stores: Sample.to_dict() of each reading, the first the baseline (no rates).
BOARD = [
    {"t": 0.0, "arm_mhz": 600, "temp_c": 41.0, "throttled": 0, "cpus": 4},
    {"t": 1.0, "arm_mhz": 1500, "temp_c": 44.5, "throttled": 0x50005, "cpu_busy_pct": 30.0,
     "procs": {"iperf3": 61.5, "sshd": 4.0}, "cpus": 4},
    {"t": 2.0, "arm_mhz": 1500, "temp_c": 46.0, "throttled": 0x50000, "cpu_busy_pct": 28.0,
     "procs": {"iperf3": 60.0}, "cpus": 4},
]  # fmt: skip
PEER = [
    {"t": 0.0, "temp_c": 38.0, "cpus": 2},
    {"t": 1.1, "temp_c": 39.0, "cpu_busy_pct": 20.0, "procs": {"iperf3": 35.0}, "cpus": 2},
]


@pytest.fixture
def run():
    lane = lane_on(Campaign.objects.create(name="net", spec={}), "bench-a")
    (made,) = trials(
        lane,
        [93.0],
        benchmark="iperf3-tcp",
        unit="Mbit/s",
        peer="controller",
        telemetry=BOARD,
        peer_telemetry=PEER,
    )
    return made


def url(code) -> str:
    return reverse("benchmarks:run_telemetry", args=[code])


def test_a_viewer_reads_both_ends_over_time_with_their_units(client, viewer, run):
    client.force_login(viewer)
    found = client.get(url(run.code)).json()
    assert found["units"] == {
        "t": "s",
        "arm_mhz": "MHz",
        "temp_c": "°C",
        "cpu_busy_pct": "% of all cores",
        "procs": "% of one core",
    }
    board, peer = found["ends"]["board"], found["ends"]["peer"]
    assert (board["name"], peer["name"]) == ("bench-a", "controller")
    assert board["t"] == [0.0, 1.0, 2.0] and board["arm_mhz"] == [600, 1500, 1500]
    assert board["temp_c"] == [41.0, 44.5, 46.0]
    # no rates in the baseline; a process gone from an interval used nothing in it
    assert board["procs"] == {"iperf3": [None, 61.5, 60.0], "sshd": [None, 4.0, 0.0]}
    assert peer["arm_mhz"] == [None, None] and peer["procs"] == {"iperf3": [None, 35.0]}
    assert set(found["figures"]) == {
        "telemetry-clock",
        "telemetry-temp",
        "telemetry-throttled",
        "telemetry-cpu",
    }
    clock = found["figures"]["telemetry-clock"]
    assert clock["layout"]["yaxis"]["title"]["text"] == "Arm clock [MHz]"
    assert clock["layout"]["xaxis"]["title"]["text"] == "time from start [s]"
    assert [trace["name"] for trace in clock["data"]] == ["board (bench-a)", "peer (controller)"]


def test_throttled_bits_come_in_the_words_of_the_firmware(client, viewer, run):
    client.force_login(viewer)
    found = client.get(url(run.code)).json()
    readings = found["ends"]["board"]["throttled"]
    assert [reading["value"] for reading in readings] == ["0x0", "0x50005", "0x50000"]
    assert readings[0]["bits"] == []
    assert [bit["words"] for bit in readings[1]["bits"]] == [
        "under-voltage detected now",
        "throttled now",
        "under-voltage has occurred since boot",
        "throttling has occurred since boot",
    ]
    chart = found["figures"]["telemetry-throttled"]
    (trace,) = chart["data"]
    assert trace["x"] == [1.0] * 4 + [2.0] * 2
    assert "under-voltage<br>detected now" in trace["y"]  # wrapped for a phone


def test_a_run_without_telemetry_says_so(client, viewer):
    lane = lane_on(Campaign.objects.create(name="cpu", spec={}), "bench-b")
    (run,) = trials(lane, [100.0])
    client.force_login(viewer)
    found = client.get(url(run.code)).json()
    assert found["figures"] == {} and found["note"] == "This run recorded no telemetry."
    assert found["ends"]["board"]["t"] == [] and "peer" not in found["ends"]


def test_an_unknown_run_is_a_404_and_the_anonymous_log_in_first(client, viewer, run):
    response = client.get(url(run.code))
    assert response.status_code == 302 and "/login" in response.url
    client.force_login(viewer)
    assert client.get(url(uuid.uuid4())).status_code == 404
    assert client.post(url(run.code)).status_code == 405
