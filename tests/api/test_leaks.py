"""The API never shows a credential, and shows a board's host, address, port, user name,
serial or own host name only to a token made to see them: every list and detail endpoint is
walked, with board text (reasons, log tails, version lines) that holds all of them."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmarks.models import Campaign, Comparison, Lane, Run
from devices.models import Board
from tests.api.support import Api, every_page
from tests.benchmarks.factories import add_run, make_campaign, measure
from tests.devices.factories import TEST_PRIVATE_KEY, TEST_PUBLIC_KEY, make_board, probed_pi4
from tests.devices.test_views_presets import make_preset

pytestmark = pytest.mark.django_db

BOARD_IP = "10.213.77.5"
PEER_HOST = "leaky-host.lab.example"
CONTROLLER_IP = "10.213.0.1"
PORT = 48022
USERNAME = "benchuser"
SERIAL = "10000000deadbeef"
HOSTNAME = "leaky-pi-hostname"
PASSWORD = "hunter2-secret-pw"
ADDRESSES = [BOARD_IP, PEER_HOST, CONTROLLER_IP, str(PORT), USERNAME, SERIAL, HOSTNAME]
ENDPOINTS = ["board", "preset", "campaign", "run", "measurement", "comparison"]


@pytest.fixture
def lab():
    """Two boards (one by address, one by name) and a campaign whose text names them."""
    board = make_board("bench-leak", host=BOARD_IP, port=PORT, username=USERNAME)
    Board.objects.filter(pk=board.pk).update(
        status=Board.Status.OFFLINE,
        status_reason=f"{BOARD_IP}:{PORT} refused the connection (is sshd running?)",
    )
    peer = make_board("bench-peer", host=PEER_HOST, username=USERNAME, secret=PASSWORD)
    peer.set_credential(Board.AuthMethod.PASSWORD, PASSWORD)
    peer.save()
    snapshot = probed_pi4(board, temperature_c=48.2, facts={"serial": SERIAL, "hostname": HOSTNAME})
    make_preset(name="leak preset")
    campaign = make_campaign(board, name="leak campaign", states=["done", "failed"])
    Lane.objects.filter(campaign=campaign).update(
        peer_board=peer,
        step=f"connecting to {USERNAME}@{PEER_HOST}:22",
        log_tail=f"Connecting to host {BOARD_IP}, port 5201\n[  5] local {CONTROLLER_IP}",
        reason=f"{USERNAME}@{PEER_HOST}:22 closed the connection after the key exchange",
    )
    done, failed = campaign.runs.order_by("sequence")
    end = timezone.now() - timedelta(minutes=1)
    Run.objects.filter(pk=done.pk).update(
        snapshot=snapshot,
        started=end - timedelta(seconds=5),
        finished=end,
        peer="bench-peer",
        details={"tool_version": f"Linux {HOSTNAME} 6.1.0-rpi7-rpi-v8 aarch64"},
        environment={
            "peer_identity": {"name": "bench-peer", "host": PEER_HOST, "address": CONTROLLER_IP},
            "quiet": {"reached": True, "waited_s": 1.5},
            "cleanup_problems": [f"on {BOARD_IP}: nft table pifarm_fw5201 was left"],
        },
        suspect=True,
        suspect_reasons=[f"{HOSTNAME} throttled while measuring"],
    )
    Run.objects.filter(pk=failed.pk).update(
        state=Run.State.FAILED,
        reason=f"could not connect to bench-leak: {BOARD_IP}:{PORT} refused the connection",
        step=f"connecting to {USERNAME}@{BOARD_IP}:{PORT}",
    )
    measure(done, throughput=(412.5, "MB/s"))
    add_run(campaign.lanes.get(), state="queued")
    # Its statistics name the campaign (the group), the probe's OS and the tool's version line.
    # The builder keeps the name in the spec as well.
    name = f"leak campaign on {PEER_HOST}"
    Campaign.objects.filter(pk=campaign.pk).update(name=name, spec={**campaign.spec, "name": name})
    comparison = Comparison.objects.create(
        name=f"{BOARD_IP} against {PEER_HOST}",
        benchmark="sha1sum",
        metric="throughput",
        group_by="campaign",
        include_suspects=True,
    )
    comparison.campaigns.set([campaign])
    return board, peer


def every_answer(api: Api) -> str:
    """The JSON of every list page and of every object's detail, as one text."""
    answers = []
    for endpoint in ENDPOINTS:
        listed = every_page(api, reverse(f"api:{endpoint}-list"))
        assert listed, endpoint
        answers.append(listed)
        for item in listed if endpoint != "measurement" else []:
            response = api.get(reverse(f"api:{endpoint}-detail", args=[item["code"]]))
            assert response.status_code == 200, response.content
            answers.append(response.json())
    return json.dumps(answers)


def secrets_of(*boards: Board) -> list[str]:
    key_lines = [line for line in TEST_PRIVATE_KEY.splitlines() if "PRIVATE KEY" not in line]
    return [
        PASSWORD,
        *key_lines[:2],
        TEST_PUBLIC_KEY.split()[1],
        *(board.credential_ciphertext for board in boards),
    ]


def test_a_default_token_sees_no_credential_and_no_address(client, viewer, lab):
    text = every_answer(Api(client, viewer)).casefold()
    for secret in secrets_of(*lab):
        assert secret.casefold() not in text
    for address in ADDRESSES:
        assert address.casefold() not in text, address
    assert "[hidden] refused the connection" in text  # the reason is kept, the address not


def test_a_browser_session_sees_no_address_either(client, viewer, lab):
    client.force_login(viewer)
    response = client.get(reverse("api:board-list"))
    text = response.content.decode()
    assert "bench-leak" in text and BOARD_IP not in text and SERIAL not in text


def test_an_addresses_token_sees_addresses_but_no_credential(client, viewer, lab):
    api = Api(client, viewer, sees_addresses=True)
    text = every_answer(api)
    for secret in secrets_of(*lab):
        assert secret not in text
    for address in ADDRESSES:
        assert address in text, address
    board = api.get(reverse("api:board-detail", args=[lab[0].code])).json()
    assert (board["host"], board["port"], board["username"]) == (BOARD_IP, PORT, USERNAME)
    assert (board["serial"], board["hostname"]) == (SERIAL, HOSTNAME)
