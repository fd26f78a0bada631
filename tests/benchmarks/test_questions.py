"""benchmarks.questions: each template's spec is accepted and expands into the runs it says;
the builder comes filled in from it, and posts the same spec."""

import re

import pytest
from django.urls import reverse

from benchmarks import plans, questions, specs
from benchmarks.models import Campaign, Lane
from devices import presets
from devices.models import FactSnapshot, Preset
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
NEW = reverse("benchmarks:campaign_new")
PI3, PI4 = "a02082", "c03114"


def probed(name: str, revision: str, userland_bits: int = 64):
    board = make_board(name, host=f"10.213.9.{20 + len(name)}")
    model = {PI3: "Raspberry Pi 3 Model B Rev 1.2", PI4: "Raspberry Pi 4 Model B Rev 1.4"}
    FactSnapshot.objects.create(
        board=board,
        revision=revision,
        model=model[revision],
        userland_bits=userland_bits,
        facts={},
    )
    return board


def runs_of(spec: dict) -> int:
    checked = specs.check(spec)
    campaign = Campaign.objects.create(name="x", spec=checked.spec)
    lanes = {
        board.pk: Lane.objects.create(campaign=campaign, board=board) for board in checked.boards
    }
    return len(plans.expand(checked, campaign, lanes))


def test_the_network_question_runs_iperf3_both_ways_and_scp_stock_and_overclocked():
    board = probed("pi3", PI3)
    spec = questions.NETWORK.spec([board.name])
    accepted = specs.check(spec).spec
    assert accepted["question"] == "network"
    directions = [
        b["params"]["direction"] for b in accepted["benchmarks"] if b["name"] == "iperf3-tcp"
    ]
    assert directions == ["board-to-peer", "peer-to-board"]
    classic = Preset.objects.get(name=presets.CLASSIC_OVERCLOCK.name).latest
    assert accepted["presets"] == ["as-is", f"{classic.preset.name}@{classic.number}"]
    assert classic.governor == "ondemand" and classic.options["arm_freq"] == "900"
    # 3 entries (two iperf3 directions, scp), 2 presets, 3 repetitions
    assert runs_of(spec) == 3 * 2 * 3
    questions.NETWORK.spec([board.name])
    assert Preset.objects.get(name=presets.CLASSIC_OVERCLOCK.name).versions.count() == 1


def test_a_board_the_classic_overclock_does_not_suit_is_refused_with_the_reason():
    board = probed("pi4", PI4)
    with pytest.raises(specs.SpecError, match=r"is meant for Pi 1, Pi 2, Pi 3.*not for pi4"):
        specs.check(questions.NETWORK.spec([board.name]))


def test_the_64_bit_question_runs_every_benchmark_once_per_board():
    boards = [probed("pi4-32", PI4, userland_bits=32).name, probed("pi4-64", PI4).name]
    spec = questions.BITNESS.spec(boards)
    names = [entry["name"] for entry in specs.check(spec).spec["benchmarks"]]
    assert names == [
        "intloop",
        "sha1sum",
        "membw",
        "flac",
        "lame",
        "iperf3-tcp",
        "iperf3-udp-small",
        "openvpn",
        "wireguard",
    ]
    assert runs_of(spec) == 2 * 9 * 3


def test_the_64_bit_question_is_refused_before_it_starts_without_both_userlands():
    boards = [probed("pi4-a", PI4).name, probed("pi4-b", PI4).name]
    with pytest.raises(specs.SpecError) as refused:
        specs.check(questions.BITNESS.spec(boards))
    assert str(refused.value) == (
        "“Is a 64-bit OS worth it on this Pi?” needs a board with a 32-bit and one with a "
        "64-bit userland, as their latest probes say (pi4-a: 64-bit, pi4-b: 64-bit). Add the "
        "other kind, or probe the boards again."
    )
    assert not Campaign.objects.exists()


def test_the_64_bit_question_is_refused_for_boards_of_two_models():
    boards = [probed("pi3-32", PI3, userland_bits=32).name, probed("pi4-64", PI4).name]
    with pytest.raises(
        specs.SpecError,
        match="compares boards of one model, and these are "
        "of 2: Raspberry Pi 3 Model B Rev 1.2, Raspberry Pi 4 Model B Rev 1.4",
    ):
        specs.check(questions.BITNESS.spec(boards))


def test_one_preset_version_named_twice_is_refused():
    board = probed("pi3", PI3)
    spec = {**questions.NETWORK.spec([board.name])}
    spec["presets"] = [spec["presets"][1], spec["presets"][1].partition("@")[0]]
    with pytest.raises(specs.SpecError, match="is listed twice in presets"):
        specs.check(spec)


def test_the_openvpn_question_sweeps_ciphers_compression_and_mtu():
    spec = questions.OPENVPN.spec([probed("pi3", PI3).name])
    entries = specs.check(spec).spec["benchmarks"]
    assert {entry["params"]["cipher"] for entry in entries} == set(questions.CIPHERS)
    assert {entry["params"]["compression"] for entry in entries} == {"off", "lz4-v2"}
    assert {entry["params"]["mtu"] for entry in entries} == {1500, 1400}
    assert len(entries) == 4 * 2 * 2
    assert runs_of(spec) == 16 * 2 * 2  # two presets, two repetitions


@pytest.mark.parametrize("question", [["network"], {"network": True}])
def test_a_question_that_is_not_a_key_is_refused_naming_the_field(question):
    spec = {**questions.BITNESS.spec([probed("pi4", PI4).name]), "question": question}
    with pytest.raises(specs.SpecError, match="^question must be one of network"):
        specs.check(spec)


def test_an_unknown_question_is_refused():
    spec = {**questions.BITNESS.spec([probed("pi4", PI4).name]), "question": "weather"}
    with pytest.raises(specs.SpecError, match="question must be one of network"):
        specs.check(spec)


def test_the_builder_comes_filled_in_with_the_question(client, operator):
    client.force_login(operator)
    body = client.get(f"{NEW}?question=network").content.decode()
    assert questions.NETWORK.sentence.replace("'", "&#x27;") in body
    assert re.search(r'name="use-iperf3-tcp"[^>]*checked', body)
    assert re.search(r'name="use-scp"[^>]*checked', body)
    assert not re.search(r'name="use-sha1sum"[^>]*checked', body)
    assert 'name="p-iperf3-tcp-duration" value="5"' in body
    assert 'name="vary-iperf3-tcp-direction" value="peer-to-board"' in body
    assert 'name="question" value="network"' in body
    assert re.search(r'value="Dynamic overclock \(classic\)@1"[^>]*checked', body)
    assert re.search(r'name="peer"[^>]*>.*?<option value="controller" selected', body, re.S)


def test_the_filled_in_builder_posts_the_question_s_own_spec(client, operator):
    board = probed("pi3", PI3)
    client.force_login(operator)
    form = client.get(f"{NEW}?question=network").context["form"]
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {
        "boards": [board.name],
        "seed": "7",
        "action": "preview",
        "quiet": "on",
        "apply_mode": "trial",
    }
    data = {key: "on" if value is True else value for key, value in data.items()}
    response = client.post(NEW, data)
    assert response.status_code == 200, response.context["form"].errors
    posted = response.context["form"].checked.spec
    expected = specs.check({**questions.NETWORK.spec([board.name]), "seed": 7}).spec
    assert posted["benchmarks"] == expected["benchmarks"]
    assert posted["presets"] == expected["presets"] and posted["question"] == "network"
    assert "18 trials" in response.content.decode()


def test_the_builder_offers_the_questions(client, operator):
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    for key in questions.QUESTIONS:
        assert f'href="?question={key}"' in body


def test_an_other_value_the_parameter_refuses_is_shown_at_its_field(client, operator):
    board = probed("pi3", PI3)
    client.force_login(operator)
    data = {
        "name": "both ways",
        "boards": [board.name],
        "peer": "controller",
        "presets": ["as-is"],
        "use-iperf3-tcp": "on",
        "vary-iperf3-tcp-direction": "sideways",
        "repetition_mode": "fixed",
        "repetitions": "1",
        "order": "grouped",
        "apply_mode": "trial",
        "action": "preview",
    }
    response = client.post(NEW, data)
    assert response.status_code == 400
    assert "vary-iperf3-tcp-direction" in response.context["form"].errors
    data["vary-iperf3-tcp-direction"] = "peer-to-board, board-to-peer"  # the first is kept once
    spec = client.post(NEW, data).context["form"].checked.spec
    assert [entry["params"]["direction"] for entry in spec["benchmarks"]] == [
        "board-to-peer",
        "peer-to-board",
    ]


def test_a_posted_question_that_is_not_one_is_shown_as_the_reason(client, operator):
    board = probed("pi3", PI3)
    client.force_login(operator)
    form = client.get(f"{NEW}?question=network").context["form"]
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {"boards": [board.name], "seed": "7", "action": "preview", "question": "weather"}
    data = {key: "on" if value is True else value for key, value in data.items()}
    response = client.post(NEW, data)
    assert response.status_code == 400
    errors = re.search(r'id="form-errors">(.*?)</div>', response.content.decode(), re.S)
    assert errors and "question: Select a valid choice. weather is not one" in errors.group(1)
