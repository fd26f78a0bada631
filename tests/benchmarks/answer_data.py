"""Campaigns of the network question with known values, for the answer's tests and pages."""

from django.utils import timezone

from benchmarks.models import Campaign
from devices import presets
from tests.benchmarks.factories import lane_on, trials

STOCK = [94.0, 94.2, 93.8]
FASTER = [97.0, 97.3, 96.8]  # 3.2 % faster, tight
DOWN, UP = {"direction": "peer-to-board"}, {"direction": "board-to-peer"}


def question_campaign(key: str, finished=True) -> Campaign:
    return Campaign.objects.create(
        name=key,
        spec={"question": key},
        state="finished" if finished else "running",
        finished=timezone.now() if finished else None,
    )


def network_runs(campaign, download, upload, scp):
    """The network question's trials on one Pi 3: stock, then the classic overclock."""
    lane = lane_on(campaign, "pi3", model="Raspberry Pi 3 Model B Rev 1.2")
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    for preset, values in ((None, STOCK), (classic, None)):
        for params, chosen in ((DOWN, download), (UP, upload)):
            trials(
                lane,
                values or chosen,
                benchmark="iperf3-tcp",
                unit="Mbit/s",
                params=params,
                preset_version=preset,
            )
        trials(
            lane, [v / 10 for v in values or scp], benchmark="scp", params={}, preset_version=preset
        )
    return lane


def network_campaign(finished=True) -> Campaign:
    """A network question whose overclock made the download faster, and nothing else."""
    campaign = question_campaign("network", finished)
    network_runs(campaign, download=FASTER, upload=STOCK, scp=[94.1, 93.6, 94.4])
    return campaign


# scp 4.1 % slower with noise: p = 0.037 alone, but 0.074 after Holm across the question's
# three metrics (the download's clear win ranks first, so scp's p is doubled).
SCP_SLOWER_ALONE = [90.0, 91.6, 88.9]


def holm_campaign() -> Campaign:
    """A network question whose scp loss is significant alone, not across the metrics."""
    campaign = question_campaign("network")
    network_runs(campaign, download=FASTER, upload=STOCK, scp=SCP_SLOWER_ALONE)
    return campaign
