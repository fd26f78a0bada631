"""The campaign builder: forms made from the catalog's parameters, a preview with the figures
before anything starts, refusals as form errors, and one campaign per form however often it
is posted."""

import html
import json
import re
import tracemalloc
from dataclasses import replace

import pytest
from django.urls import reverse

from benchmarks import catalog, plans, progress, specs
from benchmarks.catalog import custom_rules
from benchmarks.catalog.cpu import SHA1SUM
from benchmarks.catalog.spec import Param
from benchmarks.models import Campaign, Run, Schedule
from devices import configtxt, presets
from devices.models import FactSnapshot, Preset
from tests.benchmarks.factories import custom_benchmark, make_campaign, unusable_custom_benchmark
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
NEW = reverse("benchmarks:campaign_new")


@pytest.fixture
def boards():
    return [make_board("bench-a", host="10.213.9.11"), make_board("bench-b", host="10.213.9.12")]


def form_data(boards, **changes) -> dict:
    data = {
        "name": "sha1 on two boards",
        "boards": [board.name for board in boards],
        "peer": "",
        "presets": ["as-is"],
        "use-sha1sum": "on",
        "p-sha1sum-size": "16M",
        "repetition_mode": "fixed",
        "repetitions": "3",
        "order": "grouped",
        "quiet": "on",
        "quiet_deadline_s": "5",
        "apply_mode": "trial",
        "seed": "12345",
        "action": "preview",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def previewed(client, data) -> dict:
    """The form as posted again from the preview page, with its Start button."""
    body = client.post(NEW, data).content.decode()
    digest = re.search(r'name="previewed" value="([0-9a-f]{64}-[0-9]+)"', body).group(1)
    return {**data, "previewed": digest, "action": "start"}


def test_the_builder_needs_the_operator_role(client, viewer, boards):
    assert client.get(NEW).status_code == 302  # to the login page
    client.force_login(viewer)
    assert client.get(NEW).status_code == 403
    assert client.post(NEW, form_data(boards)).status_code == 403


def test_the_builder_takes_only_get_head_and_post(client, operator):
    client.force_login(operator)
    assert client.put(NEW).status_code == 405


def test_each_parameter_is_a_field_made_from_its_declaration(client, operator, monkeypatch):
    every_kind = replace(
        SHA1SUM,
        name="every-kind",
        params=(
            Param("threads", "int", 2, "worker threads", min=1, max=8),
            Param("ratio", "float", 0.5),
            Param("pin", "bool", True),
            Param("block", "size", "4K"),
            Param("cipher", "choice", "aes", choices=("aes", "chacha")),
            Param("modes", "multichoice", ["tx"], choices=("tx", "rx")),
            Param("label", "text", "run"),
        ),
    )
    monkeypatch.setitem(catalog.BUILT_IN, every_kind.name, every_kind)
    custom_benchmark(
        "my-dd", "true", title="dd to RAM", params={"count": "8"}, pattern="x", unit="MB/s"
    )
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    assert re.search(r'<input type="number" name="p-every-kind-threads"[^>]*max="8"', body)
    assert 'step="any"' in body  # the float
    assert re.search(r'type="checkbox" name="p-every-kind-pin"[^>]*checked', body)
    assert '<select name="p-every-kind-cipher"' in body
    assert body.count('name="p-every-kind-modes"') == 2  # one box per choice
    assert 'name="p-every-kind-block" value="4K"' in body
    assert 'name="p-my-dd-count" value="8"' in body  # a custom benchmark's own parameter
    assert "from 1 to 8" in body  # the allowed values, in words


def test_a_preview_shows_the_trials_and_the_duration_and_writes_nothing(client, operator, boards):
    client.force_login(operator)
    response = client.post(NEW, form_data(boards))
    body = response.content.decode()
    assert response.status_code == 200
    expected = len(boards) * 3  # one benchmark, "as is" only
    assert f"{expected} trials" in body
    estimate = plans.estimate_s(specs.check(response.context["form"].spec))
    assert f"about {progress.duration_words(estimate)}" in body
    assert "Start the campaign" in body
    assert Campaign.objects.count() == 0


def test_a_refused_spec_is_a_form_error_and_a_400(client, operator, boards):
    client.force_login(operator)
    data = form_data(boards, repetition_mode="adaptive", repetitions_min="6", repetitions_max="4")
    response = client.post(NEW, data)
    assert response.status_code == 400
    assert "adaptive repetitions need 2 &lt;= min &lt;= max" in response.content.decode()
    assert Campaign.objects.count() == 0


def test_a_sweep_of_too_many_combinations_is_refused_before_any_is_built(client, operator, boards):
    """Every combination was built (and held by the web worker) before the cap refused it."""
    threads = range(2, 65)  # and its own 1
    seconds = [n for n in range(1, 70) if n != 10]  # and its own 10
    blocks = [f"{n}K" for n in range(2, 53)]  # and its own 1K
    totals = [f"{n}M" for n in range(1, 41)]  # and its own 10G
    sweep = {
        "use-sha1sum": None,
        "use-sysbench-memory": "on",
        "vary-sysbench-memory-threads": ",".join(map(str, threads)),
        "vary-sysbench-memory-seconds": ",".join(map(str, seconds)),
        "vary-sysbench-memory-block_size": ",".join(blocks),
        "vary-sysbench-memory-total_size": ",".join(totals),
    }
    combinations = (len(threads) + 1) * (len(seconds) + 1) * (len(blocks) + 1) * (len(totals) + 1)
    client.force_login(operator)
    client.get(NEW)  # the page's first drawing (its templates read) is not the refusal's
    tracemalloc.start()
    response = client.post(NEW, form_data(boards, **sweep))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert response.status_code == 400
    words = f"benchmarks lists {combinations:,}; at most {specs.MAX_LISTED} are allowed"
    assert words in response.content.decode()
    # Nothing built: building the combinations would take gigabytes (its time is bench/'s).
    assert peak < 20 * 2**20, peak
    assert Campaign.objects.count() == 0


def test_a_bad_parameter_is_shown_at_its_field(client, operator, boards):
    client.force_login(operator)
    response = client.post(NEW, previewed(client, form_data(boards)) | {"p-sha1sum-size": "lots"})
    body = response.content.decode()
    assert response.status_code == 400
    field = body[body.index('id="field-p-sha1sum-size"') :]
    assert "size: &#x27;lots&#x27; is not a size" in field[: field.index("</div>")]
    assert Campaign.objects.count() == 0


def test_a_custom_benchmark_whose_stored_default_cannot_be_used_is_shown_unavailable(
    client, operator, boards
):
    """A row saved before the admin checked defaults: its field used to refuse every post
    (the browser posts the prefilled value, chosen or not), so nobody could preview."""
    unusable_custom_benchmark("longdef")
    unusable_custom_benchmark("nulldef")
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    assert 'name="p-longdef-p"' not in body and 'name="use-longdef"' not in body
    unavailable = body[body.index('id="unavailable-longdef"') :]
    unavailable = unavailable[: unavailable.index("</li>")]
    assert "long default" in unavailable
    assert "p: the default is 300 characters long" in unavailable
    assert (
        "p: the default must be text, in quotes" in body[body.index('id="unavailable-nulldef"') :]
    )
    response = client.post(NEW, form_data(boards, **{"p-longdef-p": "x" * 300}))
    assert response.status_code == 200, response.context["form"].errors
    assert f"{len(boards) * 3} trials" in response.content.decode()


def test_the_fields_of_benchmarks_not_chosen_never_block_the_form(client, operator, boards):
    custom_benchmark(
        "my-dd", "true", title="dd to RAM", params={"count": "8"}, pattern="(?P<value>x)"
    )
    client.force_login(operator)
    unchosen = {
        "p-my-dd-count": "9" * 300,
        "p-openssl-speed-algorithm": "no-such-cipher",
        "p-lame-bitrate": "\x00",
    }
    response = client.post(NEW, form_data(boards, **unchosen))
    assert response.status_code == 200, response.context["form"].errors
    chosen = {**unchosen, "use-my-dd": "on"}
    response = client.post(NEW, form_data(boards, **chosen))
    assert response.status_code == 400
    assert list(response.context["form"].errors) == ["p-my-dd-count"]  # chosen: it counts


@pytest.mark.parametrize("longest", ["y" * custom_rules.MAX_PARAM_LENGTH, "  spaced  words  "])
def test_a_default_a_custom_parameter_may_hold_is_previewed_as_it_is(
    client, operator, boards, longest
):
    custom_benchmark(
        "longest", "true", title="longest default", params={"p": longest}, pattern="(?P<value>y)"
    )
    client.force_login(operator)
    assert f'name="p-longest-p" value="{longest}"' in client.get(NEW).content.decode()
    response = client.post(NEW, form_data(boards, **{"use-longest": "on", "p-longest-p": longest}))
    assert response.status_code == 200, response.context["form"].errors
    items = response.context["form"].spec["benchmarks"]
    assert {"name": "longest", "params": {"p": longest}} in items


def test_a_name_with_a_bidi_override_is_refused_at_its_field(client, operator, boards):
    client.force_login(operator)
    response = client.post(NEW, form_data(boards, name="\u202egnp.exe\u200f evil"))
    assert response.status_code == 400
    errors = response.context["form"].errors["name"]
    assert any("U+202E RIGHT-TO-LEFT OVERRIDE" in error for error in errors)
    assert Campaign.objects.count() == 0


def test_no_benchmark_chosen_is_refused(client, operator, boards):
    client.force_login(operator)
    response = client.post(NEW, form_data(boards, **{"use-sha1sum": None}))
    assert response.status_code == 400
    assert "Choose at least one benchmark." in response.content.decode()


def test_start_without_a_preview_of_these_settings_previews_them(client, operator, boards):
    client.force_login(operator)
    data = previewed(client, form_data(boards))
    response = client.post(NEW, {**data, "repetitions": "5"})  # edited after the preview
    body = response.content.decode()
    assert response.status_code == 200
    assert "The settings changed after the last preview" in body
    assert f"{len(boards) * 5} trials" in body
    assert Campaign.objects.count() == 0


def test_start_makes_the_campaign_of_the_form_and_opens_its_page(
    client, operator, boards, redis_queue
):
    client.force_login(operator)
    response = client.post(NEW, previewed(client, form_data(boards)))
    campaign = Campaign.objects.get()
    assert response.status_code == 302
    assert response["Location"] == campaign.get_absolute_url()
    assert campaign.created_by == operator
    assert campaign.spec["benchmarks"] == [
        {"name": "sha1sum", "params": {"size": "16M", "min_seconds": 0}}
    ]
    assert campaign.spec["quiet"]["deadline_s"] == 5
    assert campaign.seed == 12345
    assert campaign.runs.filter(state=Run.State.QUEUED).count() == len(boards) * 3


def test_a_form_posted_twice_starts_one_campaign(client, operator, boards, redis_queue):
    client.force_login(operator)
    data = previewed(client, form_data(boards))
    first = client.post(NEW, data)
    second = client.post(NEW, data)
    assert Campaign.objects.count() == 1
    assert second.status_code == 302
    assert second["Location"] == first["Location"]


def test_a_new_form_with_the_same_settings_is_a_new_campaign(client, operator, boards, redis_queue):
    client.force_login(operator)
    client.post(NEW, previewed(client, form_data(boards)))
    client.post(NEW, previewed(client, form_data(boards, seed="54321")))  # drawn anew
    assert Campaign.objects.count() == 2


def test_each_preset_version_chosen_runs_every_trial_once_more(client, operator, boards):
    preset = Preset.objects.create(name="mild", families=["pi4"])
    version = presets.new_version(preset, options={"arm_freq": "1700"})
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    assert 'value="mild@1"' in body and f"{version}" in body
    response = client.post(NEW, form_data(boards, presets=["mild@1", "as-is"]))
    assert f"{len(boards) * 3 * 2} trials" in response.content.decode()
    assert response.context["form"].spec["presets"] == ["mild@1", "as-is"]


def test_a_benchmark_that_needs_a_peer_is_refused_without_one(
    client, operator, boards, monkeypatch
):
    network = replace(SHA1SUM, name="needs-peer", needs_peer=True)
    monkeypatch.setitem(catalog.BUILT_IN, network.name, network)
    client.force_login(operator)
    data = form_data(boards, **{"use-needs-peer": "on", "p-needs-peer-size": "1M"})
    response = client.post(NEW, data)
    assert response.status_code == 400
    assert "needs-peer needs a peer" in response.content.decode()
    with_peer = client.post(NEW, {**data, "peer": "controller"})
    assert with_peer.status_code == 200
    assert with_peer.context["form"].spec["peer"] == "controller"


def test_without_a_ready_board_the_builder_says_what_to_do_first(client, operator):
    make_board("unconfirmed", host_key="")
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    assert "No board is ready yet" in body
    assert 'value="unconfirmed"' not in body


def test_an_empty_post_says_what_is_missing(client, operator):
    client.force_login(operator)
    response = client.post(NEW, {})
    field = response.content.decode().split('id="field-name"')[1].split("</div>")[0]
    assert response.status_code == 400
    assert "This field is required." in field


def test_a_seed_out_of_range_is_named(client, operator, boards):
    client.force_login(operator)
    response = client.post(NEW, form_data(boards, seed="-1"))
    assert response.status_code == 400
    assert "seed: Ensure this value is greater than or equal to 0." in response.content.decode()


@pytest.mark.parametrize("seed", ["", None])  # an empty field, or none at all (a script)
def test_a_form_without_a_seed_starts_what_was_previewed_once(
    client, operator, boards, redis_queue, seed
):
    client.force_login(operator)
    data = form_data(boards, seed=seed, order="shuffled")
    body = client.post(NEW, data).content.decode()
    shown = json.loads(html.unescape(re.search(r'<pre class="config">(.*?)</pre>', body, re.S)[1]))
    token = re.search(r'name="previewed" value="([^"]+)"', body)[1]
    start = {**data, "previewed": token, "action": "start"}
    first, second = client.post(NEW, start), client.post(NEW, start)
    campaign = Campaign.objects.get()
    assert first.status_code == second.status_code == 302
    assert second["Location"] == first["Location"] == campaign.get_absolute_url()
    assert campaign.seed == shown["seed"]  # the order previewed is the order run


def test_a_size_given_again_in_other_words_is_run_once(client, operator, boards):
    client.force_login(operator)
    data = form_data(boards, **{"vary-sha1sum-size": "16384K, 32M, 32768k, 16M"})
    response = client.post(NEW, data)
    assert response.status_code == 200, response.context["form"].errors
    entries = response.context["form"].checked.spec["benchmarks"]
    assert [entry["params"]["size"] for entry in entries] == ["16M", "32M"]


def test_the_preview_warns_of_an_as_is_that_is_not_stock_and_of_an_underclock(client, operator):
    board = make_board("bench-pi3", host="10.213.9.13")
    config_txt = configtxt.apply_block(b"dtparam=audio=on\n", "arm_freq=1300\n", "mine v1")
    FactSnapshot.objects.create(
        board=board,
        revision="a02082",
        facts={
            "config_txt": config_txt.decode(),
            "config_path": "/boot/config.txt",
            "governor": "ondemand",
            "revision": {"family": "pi3"},
        },
    )
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    client.force_login(operator)
    data = form_data([board], presets=["as-is", f"{classic.preset.name}@{classic.number}"])
    body = html.unescape(client.post(NEW, data).content.decode())
    warnings = re.findall(r'<li class="warning">(.*?)</li>', body, re.S)
    assert len(warnings) == 3, warnings
    assert warnings[0].startswith("bench-pi3 is not at stock: pifarm's block sets arm_freq=1300")
    assert warnings[0].endswith(
        "Its “as is” is what it runs now; add the stock preset to "
        "compare with the firmware's defaults."
    )
    assert warnings[1:] == [
        f"{classic} on bench-pi3: arm_freq 900 is below this board's default of 1200 MHz: "
        "an underclock",
        f"{classic} on bench-pi3: core_freq 300 is below this board's default of 400 MHz: "
        "an underclock",
    ]
    assert not Campaign.objects.exists()  # a preview starts nothing


def test_the_stock_preset_is_offered_first_after_as_is(client, operator, boards):
    classic = presets.example_version(presets.CLASSIC_OVERCLOCK)
    stock = presets.stock_version()
    client.force_login(operator)
    body = client.get(NEW).content.decode()
    offered = re.findall(r'name="presets" value="([^"]+)"', body)
    assert offered[:3] == [
        "as-is",
        f"{stock.preset.name}@{stock.number}",
        f"{classic.preset.name}@{classic.number}",
    ]


def test_the_preview_of_a_schedule_shows_its_timing_and_first_starts(client, operator, boards):
    client.force_login(operator)
    body = client.post(NEW, form_data(boards, repeat="every", repeat_every="6h")).content.decode()
    assert "Each start makes a new campaign, every 6 h: the first ones at" in body
    assert body.count("<time datetime=") == 3
    assert ">Make the schedule</button>" in body
    assert not Schedule.objects.exists() and not Campaign.objects.exists()


def test_make_the_schedule_makes_one_schedule_however_often_it_is_posted(
    client, operator, boards, redis_queue
):
    client.force_login(operator)
    data = previewed(client, form_data(boards, repeat="cron", repeat_cron="0 3 * * *"))
    first = client.post(NEW, data)
    second = client.post(NEW, data)
    schedule = Schedule.objects.get()
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == schedule.get_absolute_url()
    assert (schedule.cron, schedule.every_s, schedule.created_by) == ("0 3 * * *", None, operator)
    assert "schedule" not in schedule.spec and schedule.spec["boards"] == ["bench-a", "bench-b"]
    assert not Campaign.objects.exists()  # a cron schedule's first start is at 03:00


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"repeat": "every", "repeat_every": "1:30"}, "repeat_every", "every is a time such as"),
        ({"repeat": "every", "repeat_every": "10s"}, "repeat_every", "whole seconds from 30 s"),
        ({"repeat": "cron", "repeat_cron": "61 * * * *"}, "repeat_cron", "cron"),
        ({"repeat": "cron", "repeat_cron": ""}, "repeat_cron", "Say when it repeats."),
    ],
)
def test_a_timing_that_cannot_be_is_shown_at_its_field(
    client, operator, boards, changes, field, words
):
    client.force_login(operator)
    response = client.post(NEW, form_data(boards, **changes))
    assert response.status_code == 400
    errors = response.context["form"].errors[field]
    assert any(words in error for error in errors), errors
    assert not Schedule.objects.exists()


def test_a_cron_schedule_s_preview_says_nothing_of_what_the_boards_run_now(
    client, operator, boards
):
    """Its first start is at its time: the campaign on the board now says nothing of then. An
    interval's first start is now, so it is warned of."""
    make_campaign(boards[0], name="under way")
    client.force_login(operator)
    busy = "is in “under way”, which has not ended"
    later = client.post(NEW, form_data(boards, repeat="cron", repeat_cron="0 3 * * *"))
    assert busy not in html.unescape(later.content.decode())
    assert "(UTC)" in later.content.decode() and "(UTC):" in later.content.decode()
    now = client.post(NEW, form_data(boards, repeat="every", repeat_every="1d"))
    assert busy in html.unescape(now.content.decode())
