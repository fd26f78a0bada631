import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from devices import presets
from devices.models import Application, Board, Preset, PresetVersion

from .factories import make_board

pytestmark = pytest.mark.django_db

CLASSIC = """arm_freq_min=500
arm_freq=900
core_freq_min=200
core_freq=300
gpu_freq_min=200
sdram_freq_min=350
sdram_freq=450
"""


def preset_data(**overrides):
    data = {
        "name": "dynamic overclock",
        "description": "the classic one",
        "families": ["pi1"],
        "options": CLASSIC,
        "governor": "ondemand",
        "note": "first",
        "action": "save",
    }
    return {**data, **overrides}


def make_preset(options=None, **fields):
    preset = Preset.objects.create(name=fields.pop("name", "p"), families=["pi4"])
    presets.new_version(preset, options=options or {"arm_freq": "1800"}, **fields)
    return preset


def test_anonymous_users_cannot_see_presets(client):
    assert client.get(reverse("devices:presets")).status_code == 302


def test_checking_shows_findings_and_saves_nothing(logged_in):
    response = logged_in.post(reverse("devices:preset_new"), preset_data(action="check"))
    assert response.status_code == 200
    assert not Preset.objects.exists()
    # the classic preset on a Pi 1: no error, one true warning (a minimum below the default)
    findings = [(family, f.line, f.severity) for family, f in response.context["form"].findings]
    assert findings == [("pi1", 1, "warning")]
    assert "arm_freq_min=500 is below the pi1 default" in response.content.decode()


def test_checking_for_a_board_whose_defaults_are_higher_warns_of_an_underclock(logged_in):
    data = preset_data(action="check", families=["pi1", "pi3"])
    response = logged_in.post(reverse("devices:preset_new"), data)
    body = response.content.decode()
    # the classic preset's line 2 (arm_freq=900) and 4 (core_freq=300) on a Pi 3 (yaml defaults)
    findings = response.context["form"].findings
    pi3 = [(f.line, f.severity, f.message) for family, f in findings if family == "pi3"]
    pi3 = [finding for finding in pi3 if "underclock" in finding[2]]
    assert pi3 == [
        (2, "warning", "arm_freq 900 is below this board's default of 1200 MHz: an underclock"),
        (4, "warning", "core_freq 300 is below this board's default of 400 MHz: an underclock"),
    ]
    assert "arm_freq 900 is below this board&#x27;s default of 1200 MHz: an underclock" in body
    saved = logged_in.post(reverse("devices:preset_new"), {**data, "action": "save"})
    assert saved.status_code == 302  # a warning does not stop saving


def test_the_classic_dynamic_overclock_saves_as_v1(logged_in, user):
    response = logged_in.post(reverse("devices:preset_new"), preset_data())
    preset = Preset.objects.get()
    assert response.url == preset.get_absolute_url()
    version = preset.versions.get()
    assert version.number == 1
    assert version.options["arm_freq"] == "900"
    assert version.governor == "ondemand"
    assert version.author == user


def test_an_error_blocks_saving_with_the_line_number(logged_in):
    data = preset_data(options="arm_freq=900\nover_voltage = [-2,2]\n")
    response = logged_in.post(reverse("devices:preset_new"), data)
    assert response.status_code == 200
    assert not Preset.objects.exists()
    findings = response.context["form"].findings
    assert any(f.severity == "error" and f.line == 2 for _, f in findings)


def test_editing_makes_a_new_version_and_keeps_the_old_one(logged_in):
    logged_in.post(reverse("devices:preset_new"), preset_data())
    preset = Preset.objects.get()
    url = reverse("devices:preset_edit", args=[preset.code])
    logged_in.post(url, preset_data(options=CLASSIC.replace("900", "950"), note="faster"))
    v1, v2 = preset.versions.order_by("number")
    assert (v1.options["arm_freq"], v2.options["arm_freq"]) == ("900", "950")
    assert v2.parent == v1
    page = logged_in.get(preset.get_absolute_url()).content.decode()
    assert "arm_freq=950" in page and "arm_freq=900" in page  # the diff of v1 and v2


def test_a_version_never_changes():
    version = make_preset().latest
    version.note = "rewritten"
    with pytest.raises(ValueError, match="immutable"):
        version.save()
    with pytest.raises(ValueError, match="immutable"):
        PresetVersion.objects.filter(pk=version.pk).update(options={"arm_freq": "2500"})
    with pytest.raises(ValueError, match="kept"):
        PresetVersion.objects.filter(pk=version.pk).delete()
    with pytest.raises(ValueError, match="kept"):
        version.delete()
    assert PresetVersion.objects.get(pk=version.pk).options == {"arm_freq": "1800"}


def test_a_governor_must_be_one_the_kernel_has():
    preset = Preset.objects.create(name="x")
    with pytest.raises(ValueError, match="not a CPU governor"):
        presets.new_version(preset, options={"arm_freq": 900}, governor="x$(reboot)\nFOO=1")


def test_an_edit_that_changes_only_the_description_makes_no_version(logged_in):
    logged_in.post(reverse("devices:preset_new"), preset_data())
    preset = Preset.objects.get()
    url = reverse("devices:preset_edit", args=[preset.code])
    logged_in.post(url, preset_data(description="clearer", options=CLASSIC.replace("\n", "\r\n")))
    preset.refresh_from_db()
    assert preset.description == "clearer"
    assert preset.versions.count() == 1


def test_clone_copies_a_version_into_a_new_preset(logged_in):
    preset = make_preset(governor="performance")
    logged_in.post(reverse("devices:preset_clone", args=[preset.code, 1]))
    clone = Preset.objects.exclude(pk=preset.pk).get()
    assert clone.name == "p (copy)"
    assert clone.latest.options == preset.latest.options
    assert clone.latest.governor == "performance"


def test_applying_queues_one_job_per_board_with_only_an_id(
    logged_in, redis_queue, django_capture_on_commit_callbacks
):
    preset = make_preset()
    boards = [make_board("a"), make_board("b")]
    url = reverse("devices:apply", args=[preset.code, 1])
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(url, {"boards": [b.pk for b in boards], "mode": "trial"})
    assert response.status_code == 302
    applications = Application.objects.order_by("pk")
    assert [a.board.name for a in applications] == ["a", "b"]
    assert sorted(job.args for job in redis_queue.jobs) == sorted(
        ("apply", a.pk) for a in applications
    )


@pytest.mark.django_db(transaction=True)
def test_an_apply_form_posted_twice_applies_once(user, redis_queue):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    board, preset = make_board("a"), make_preset()
    url = reverse("devices:apply", args=[preset.code, 1])
    token = browser.get(url).context["csrf_token"]
    form = {"boards": [board.pk], "mode": "trial", "csrfmiddlewaretoken": str(token)}

    first = browser.post(url, form)
    second = browser.post(url, form, follow=True)  # the same form, the same token

    application = Application.objects.get()
    assert first.status_code == 302
    assert second.status_code == 200
    assert second.redirect_chain == [(application.get_absolute_url(), 302)]
    said = [str(message) for message in second.context["messages"]]
    assert said[-1] == (
        f"a already has an application of {preset.latest} (queued); it was not started again."
    )
    assert len(redis_queue.jobs) == 1


def test_the_database_refuses_a_second_unfinished_application_of_a_board():
    board, version = make_board(), make_preset().latest
    for state in ["queued", "waiting", "running"]:
        first = Application.objects.create(board=board, version=version, state=state)
        with pytest.raises(IntegrityError), transaction.atomic():
            Application.objects.create(board=board, version=version)
        Application.objects.filter(pk=first.pk).update(state=Application.State.VERIFIED)
    Application.objects.create(board=board, version=version)  # after finished ones: fine
    with pytest.raises(presets.AlreadyApplying, match="already has an application"):
        presets.start_application(board, version, "trial")


@pytest.mark.django_db(transaction=True)
def test_applying_to_a_board_on_a_queue_no_worker_serves_says_why(logged_in, redis_queue):
    board, preset = make_board("a"), make_preset()
    Board.objects.filter(pk=board.pk).update(queue="bench-gone")  # PIFARM_QUEUES changed since
    url = reverse("devices:apply", args=[preset.code, 1])

    response = logged_in.post(url, {"boards": [board.pk], "mode": "trial"}, follow=True)

    assert response.status_code == 200
    said = [str(message) for message in response.context["messages"]]
    assert len(said) == 1 and said[0].startswith(
        "a: Nothing was changed: no worker serves the queue 'bench-gone'"
    )
    assert Application.objects.get().state == Application.State.FAILED


def test_boards_a_person_must_look_at_are_not_offered(logged_in):
    preset = make_preset()
    make_board("fine")
    make_board("broken", status="needs_attention")
    make_board("resting", status="maintenance")
    response = logged_in.get(reverse("devices:apply", args=[preset.code, 1]))
    offered = [board.name for board in response.context["form"].fields["boards"].queryset]
    assert offered == ["fine"]


def test_application_status_answers_json(logged_in):
    board = make_board()
    application = Application.objects.create(board=board, version=make_preset().latest)
    data = logged_in.get(reverse("devices:application_status", args=[application.code])).json()
    assert data["state"] == "queued" and data["finished"] is False


def admin_form(preset, **fields):
    """What the admin's change form posts, with the read-only inline of one version."""
    data = {
        "name": preset.name,
        "description": "",
        "families": ["pi4"],
        "governor": "",
        "versions-TOTAL_FORMS": "1",
        "versions-INITIAL_FORMS": "1",
        "versions-MIN_NUM_FORMS": "0",
        "versions-MAX_NUM_FORMS": "1000",
        "versions-0-id": str(preset.latest.pk),
        "versions-0-preset": str(preset.pk),
    }
    return {**data, **fields}


def test_saving_in_the_admin_makes_a_version(client, staff):
    client.force_login(staff)
    preset = make_preset()
    url = reverse("admin:devices_preset_change", args=[preset.pk])
    # \r\n: as a browser sends a textarea
    response = client.post(url, admin_form(preset, options="arm_freq=1700\r\n", note="admin"))
    assert response.status_code == 302, response.content.decode()[:3000]
    assert list(preset.versions.order_by("number").values_list("options", flat=True)) == [
        {"arm_freq": "1800"},
        {"arm_freq": "1700"},
    ]
    assert PresetVersion.objects.get(number=1).options == {"arm_freq": "1800"}


BOARD_CONFIG = "# stock\ndtparam=audio=on\narm_boost=1\n[all]\narm_freq=1800\n"


def probed_board():
    from devices.models import FactSnapshot

    board = make_board()
    FactSnapshot.objects.create(
        board=board,
        facts={
            "config_txt": BOARD_CONFIG,
            "config_path": "/boot/firmware/config.txt",
            "governor": "ondemand",
            "revision": {"family": "pi4_r14"},
        },
    )
    return board


def test_a_version_is_compared_with_a_boards_config_txt(logged_in):
    preset = make_preset(options={"arm_freq": "1700"})
    board = probed_board()
    url = reverse("devices:preset_version", args=[preset.code, 1])
    response = logged_in.get(url, {"board": str(board.code)})
    rows = response.context["board_rows"]
    assert [row.left for row in rows if row.left] == BOARD_CONFIG.splitlines()
    added = [row.right for row in rows if row.kind == "added"]
    assert "arm_freq=1700" in added


@pytest.mark.parametrize("value", ["notauuid", "<script>", "0" * 5000])
def test_a_board_value_that_is_no_board_code_compares_with_nothing(logged_in, value):
    preset = make_preset()
    probed_board()
    url = reverse("devices:preset_version", args=[preset.code, 1])
    response = logged_in.get(url, {"board": value})
    assert response.status_code == 200
    assert response.context["board"] is None


def test_a_preset_is_made_from_a_boards_current_config_txt(logged_in):
    board = probed_board()
    logged_in.post(reverse("devices:preset_from_board", args=[board.code]))
    preset = Preset.objects.get()
    assert preset.families == ["pi4_r14"]
    assert preset.latest.options == {"arm_boost": "1", "arm_freq": "1800"}
    assert preset.latest.governor == "ondemand"


def probed_board_at(config_path: str):
    """A board whose snapshot predates the probe's path check: the path was stored as told."""
    board = probed_board()
    board.snapshots.update(
        facts={"config_txt": BOARD_CONFIG, "config_path": config_path, "revision": {}}
    )
    return board


def test_no_preset_is_made_from_config_txt_a_board_put_where_it_cannot_live(logged_in):
    board = probed_board_at("-delete/config.txt")
    response = logged_in.post(reverse("devices:preset_from_board", args=[board.code]), follow=True)
    assert response.status_code == 200
    assert not Preset.objects.exists()
    assert "found no config.txt to use" in response.content.decode()


def test_a_version_is_not_compared_with_config_txt_from_an_untrusted_path(logged_in):
    preset = make_preset(options={"arm_freq": "1700"})
    board = probed_board_at("/boot/firmware/../../etc/config.txt")
    url = reverse("devices:preset_version", args=[preset.code, 1])
    response = logged_in.get(url, {"board": str(board.code)})
    assert response.status_code == 200
    assert response.context["board_rows"] is None


def test_a_preset_from_an_unprobed_board_is_404(logged_in):
    board = make_board()
    response = logged_in.post(reverse("devices:preset_from_board", args=[board.code]))
    assert response.status_code == 404


def test_saving_unchanged_content_in_the_admin_makes_no_version(client, staff):
    client.force_login(staff)
    preset = make_preset()
    data = admin_form(preset, description="now described", options="arm_freq=1800\r\n")
    response = client.post(reverse("admin:devices_preset_change", args=[preset.pk]), data)
    assert response.status_code == 302
    assert preset.versions.count() == 1


def test_board_text_in_an_application_outcome_is_escaped_in_its_status_json(logged_in):
    outcome = "Nothing was changed: sudo: unable to resolve host <script>alert(1)</script>"
    version = make_preset().latest
    application = presets.start_application(make_board(), version, Application.Mode.DIRECT)
    Application.objects.filter(pk=application.pk).update(reason=outcome)
    response = logged_in.get(reverse("devices:application_status", args=[application.code]))
    assert "<script>" not in response.content.decode()
    assert response.json()["outcome"] == outcome


def test_a_version_compared_with_a_board_warns_of_an_underclock_there(logged_in):
    preset = make_preset(options={"arm_freq": "1700"})
    board = probed_board()
    board.snapshots.update(revision="c03130")  # a Pi 400: 1800 MHz by default
    url = reverse("devices:preset_version", args=[preset.code, 1])
    body = logged_in.get(url, {"board": str(board.code)}).content.decode()
    assert "arm_freq 1700 is below this board&#x27;s default of 1800 MHz: an underclock" in body


def test_the_stock_version_says_it_writes_no_block(logged_in):
    version = presets.stock_version()
    body = logged_in.get(version.get_absolute_url()).content.decode()
    assert "None: applying it removes pifarm's block" in body.replace("&#x27;", "'")
