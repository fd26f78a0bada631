"""Input that costs too much or says too much, through every path that makes a preset: the
form, the admin, a board's config.txt, a clone and presets.new_version (issue 6, item 4)."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from devices import presets
from devices.forms_presets import SHOWN_FINDINGS
from devices.models import FactSnapshot, Preset, PresetVersion

from .factories import make_board
from .test_views_presets import admin_form, make_preset, preset_data

pytestmark = pytest.mark.django_db

FLOOD = "".join(f"k{i}=1\n" for i in range(100_000))  # 100,000 unknown options, 1.2 MB
HUGE = "arm_freq=" + "9" * 5000  # more digits than Python's int() takes
FAR = "arm_freq=99999999999999999999999999999"
CONFIG_PATH = "/boot/firmware/config.txt"


def probed(config_txt: str) -> dict:
    """A snapshot's facts with a config.txt where a probe believes one (see devices/probe.py)."""
    return {"config_txt": config_txt, "config_path": CONFIG_PATH}


@pytest.fixture
def writer(django_user_model):
    """Writes presets without being staff (permissions a superuser granted one by one): the
    boot-options acknowledgment is not theirs to give. Admins by role are staff."""
    user = django_user_model.objects.create_user("wanda")
    codenames = ["view_preset", "add_preset", "change_preset", "view_presetversion"]
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()  # its own: tests also use logged_in's
    client.force_login(user)
    return client


def check(client, **fields):
    return client.post(reverse("devices:preset_new"), preset_data(action="check", **fields))


def test_lines_over_the_size_limit_are_refused_unread_and_kept(logged_in):
    response = check(logged_in, options=FLOOD, families=["pi4", "pi5"])
    form = response.context["form"]
    assert response.status_code == 200
    assert form.findings == []  # not one line was checked
    assert "at most 64 KiB" in form.errors["options"][0]
    assert "k99999=1" in response.content.decode()  # the text is still in the form


def test_findings_are_capped_per_family_and_the_rest_counted(logged_in):
    options = "".join(f"k{i}=1\n" for i in range(3000))  # 24 KB: under the limit
    response = check(logged_in, options=options, families=["pi4", "pi5"])
    form = response.context["form"]
    assert len(form.findings) == 2 * SHOWN_FINDINGS
    assert form.more_findings == [("pi4", 3000 - SHOWN_FINDINGS), ("pi5", 3000 - SHOWN_FINDINGS)]
    assert f"and {3000 - SHOWN_FINDINGS:,} more" in response.content.decode()


def test_an_integer_of_5000_digits_is_a_finding_in_the_form_and_the_admin(logged_in, client, staff):
    response = check(logged_in, options=HUGE)
    assert response.status_code == 200
    findings = response.context["form"].findings
    assert any(f.severity == "error" and "5,000 digits" in f.message for _, f in findings)
    client.force_login(staff)
    preset = make_preset()
    url = reverse("admin:devices_preset_change", args=[preset.pk])
    response = client.post(url, admin_form(preset, options=HUGE))
    assert response.status_code == 200
    assert "5,000 digits" in response.content.decode()
    assert preset.versions.count() == 1


def test_a_clock_far_above_the_maximum_is_not_saved(logged_in):
    response = logged_in.post(reverse("devices:preset_new"), preset_data(options=FAR))
    assert response.status_code == 200
    assert not Preset.objects.exists()


def test_boot_options_need_a_staff_users_acknowledgment(writer, logged_in):
    kernel = preset_data(options="arm_freq=900\nkernel=other.img\n", acknowledge_boot="on")
    response = writer.post(reverse("devices:preset_new"), kernel)
    assert "acknowledge_boot" not in response.context["form"].fields  # not offered, not taken
    assert not Preset.objects.exists()
    assert logged_in.post(reverse("devices:preset_new"), kernel).status_code == 302
    assert Preset.objects.get().latest.acknowledge_boot is True


def test_a_clone_of_an_80_character_name_fits_the_field(logged_in):
    preset = make_preset(name="n" * 80)
    for _ in range(2):
        logged_in.post(reverse("devices:preset_clone", args=[preset.code, 1]))
    names = sorted(Preset.objects.exclude(pk=preset.pk).values_list("name", flat=True))
    assert names == ["n" * 71 + " (copy) 2", "n" * 73 + " (copy)"]


def test_a_non_staff_clone_does_not_carry_a_boot_acknowledgment(writer):
    preset = make_preset(options={"kernel": "other.img"}, acknowledge_boot=True)
    response = writer.post(reverse("devices:preset_clone", args=[preset.code, 1]), follow=True)
    assert Preset.objects.count() == 1
    assert "cannot be copied" in response.content.decode()


@pytest.mark.parametrize("value", ["900\r1", "900\x001"])
def test_a_boards_value_that_cannot_be_written_makes_no_preset(logged_in, value):
    board = make_board()
    facts = {"config_txt": f"arm_freq={value}\n", "revision": {"family": "pi4"}}
    FactSnapshot.objects.create(board=board, facts={**facts, "config_path": CONFIG_PATH})
    url = reverse("devices:preset_from_board", args=[board.code])
    response = logged_in.post(url, follow=True)
    assert response.status_code == 200
    assert not Preset.objects.exists()
    assert "cannot be a preset" in response.content.decode()


@pytest.mark.parametrize(
    "options",
    [{"arm_freq": "900\r1"}, {"arm_freq": "900\n1"}, {"kernel": "x.img"}, {"bad key": "1"}],
)
def test_new_version_itself_refuses_what_the_form_refuses(options):
    preset = Preset.objects.create(name="p", families=["pi4"])
    with pytest.raises(presets.InvalidPreset):
        presets.new_version(preset, options=options)
    assert not PresetVersion.objects.exists()


def test_new_version_of_a_preset_for_no_family_refuses_what_is_wrong_everywhere():
    preset = Preset.objects.create(name="p")
    with pytest.raises(presets.InvalidPreset, match="outside the documented range"):
        presets.new_version(preset, options={"over_voltage": "12"})
    assert presets.new_version(preset, options={"sdram_freq": "500"}).number == 1


def test_a_bad_value_stored_by_an_older_pifarm_breaks_no_page(logged_in, client, staff):
    preset = make_preset()
    for number, options in [(2, {"arm_freq": "900\r1"}), (3, {"arm_freq": "9\n1", "x y": "1"})]:
        PresetVersion.objects.create(preset=preset, number=number, options=options)
    board = make_board()
    FactSnapshot.objects.create(board=board, facts=probed("arm_boost=1\n"))
    pages = [
        preset.get_absolute_url(),
        reverse("devices:preset_version", args=[preset.code, 3]) + f"?board={board.code}",
        reverse("devices:preset_edit", args=[preset.code]),
    ]
    for url in pages:
        response = logged_in.get(url)
        assert response.status_code == 200, url
        assert "arm_freq=9\\n1" in response.content.decode()
    client.force_login(staff)
    assert client.get(reverse("admin:devices_preset_change", args=[preset.pk])).status_code == 200


def test_a_body_over_the_upload_limit_gets_a_page_naming_the_limit(logged_in, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000  # 3 MB in the issue; smaller is faster here
    response = logged_in.post(reverse("devices:preset_new"), preset_data(options="x" * 150_000))
    assert response.status_code == 400
    assert "at most 97 KiB a form" in response.content.decode()
    fields = {f"f{i}": "1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    response = logged_in.post(reverse("devices:preset_new"), fields)
    assert response.status_code == 400
    assert f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields" in response.content.decode()


def test_pages_name_board_families_rather_than_their_keys(logged_in):
    Preset.objects.create(name="p", families=["pi4_r14", "pi02"])
    body = logged_in.get(reverse("devices:presets")).content.decode()
    assert "Pi 4B rev 1.4, Zero 2 W" in body
    assert "pi4_r14" not in body


def test_a_1_mib_board_file_is_shown_folded(logged_in):
    preset = make_preset()
    board = make_board()
    config = "dtparam=audio=on\n" * (1024 * 1024 // 17)
    FactSnapshot.objects.create(board=board, facts=probed(config))
    url = reverse("devices:preset_version", args=[preset.code, 1])
    response = logged_in.get(url, {"board": str(board.code)})
    rows = response.context["board_rows"]
    assert len(rows) < 20
    assert "61,677 unchanged lines" in response.content.decode()


def test_a_board_file_of_one_1_mib_line_makes_a_small_page(logged_in):
    preset = make_preset()
    board = make_board()
    FactSnapshot.objects.create(board=board, facts=probed("#" * 1024 * 1024))
    url = reverse("devices:preset_version", args=[preset.code, 1])
    response = logged_in.get(url, {"board": str(board.code)})
    assert response.status_code == 200
    assert len(response.content) < 50_000  # each side's line is cut at 300 characters
