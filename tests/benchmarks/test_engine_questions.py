"""A question's campaign really runs on a simulated Pi and is answered: the network question,
shortened, on a 100 Mbit/s simulated Pi 3 (the classic overclock applied by a trial boot)."""

import pytest

from benchmarks import answers, campaigns, questions
from benchmarks.models import Run
from tests.devices.simfarm import register_node

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]
SHORTER = {"iperf3-tcp": {"duration": 2}, "scp": {"size": "4M"}}


def test_the_network_question_runs_on_a_pi_3_and_is_answered(pisim_node_factory, run_jobs):
    # A Pi 3 of its own: the campaign leaves the overclock on it, which the farm's shared Pi 3
    # must not keep for the tests after this one.
    board = register_node(pisim_node_factory(profile="pi3b-legacy"))
    spec = questions.NETWORK.spec([board.name]) | {
        "repetitions": 2,
        "quiet": False,
        "min_trial_s": 0,
    }
    for entry in spec["benchmarks"]:
        entry["params"] |= SHORTER[entry["name"]]
    campaign = campaigns.start(spec)
    run_jobs()
    campaign.refresh_from_db()
    states = list(campaign.runs.values_list("state", "reason"))
    assert all(state == Run.State.DONE for state, _ in states), states
    # A loaded host makes trials suspect (background CPU): they count here, as all are real.
    found = answers.answer(campaign, include_suspects=True)
    assert not found.provisional
    assert [row.label for row in found.overview.rows] == [
        "iperf3-tcp throughput (direction board-to-peer)",
        "iperf3-tcp throughput (direction peer-to-board)",
        "scp throughput",
    ]
    assert all(
        row.comparison.n_values == row.comparison.n_baseline == 2 for row in found.overview.rows
    )
    assert found.link_mbit == 100
    # Two trials a side on a shared host may be too noisy to decide: then the answer says so,
    # rather than "No" (benchmarks.answers).
    if found.sentence.startswith("Cannot tell: "):
        assert "too noisy to rule out a change of 2 % or more" in found.sentence
    else:
        assert found.sentence.startswith(("Yes", "No", "Partly")), found.sentence
        assert found.sentence.endswith("(on a 100 Mbit/s link).")
