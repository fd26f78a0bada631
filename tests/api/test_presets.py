"""GET /api/v1/presets/: presets with every version, named as a campaign spec names them."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from devices import presets
from devices.models import Preset
from tests.api.support import Api
from tests.devices.test_views_presets import make_preset

pytestmark = pytest.mark.django_db
PRESETS = reverse("api:preset-list")


def test_a_preset_lists_its_versions_newest_first(client, viewer, user):
    preset = make_preset(name="Pi 4 mild", options={"arm_freq": "1600"}, author=user)
    presets.new_version(
        preset,
        options={"arm_freq": "1700"},
        governor="ondemand",
        note="a bit more",
        author=user,
        parent=preset.latest,
    )
    [row] = Api(client, viewer).get(PRESETS).json()["results"]
    assert set(row) == {
        "code",
        "name",
        "description",
        "families",
        "created_by",
        "created",
        "versions",
    }
    assert (row["name"], row["families"], row["created_by"]) == ("Pi 4 mild", ["pi4"], None)
    newest, first = row["versions"]
    assert newest["spec_name"] == "Pi 4 mild@2" and first["spec_name"] == "Pi 4 mild@1"
    assert newest["options"] == {"arm_freq": "1700"} and newest["governor"] == "ondemand"
    assert newest["note"] == "a bit more" and newest["author"] == "alice"
    assert newest["parent"] == 1 and first["parent"] is None


def test_a_preset_detail_is_the_same_row(client, viewer):
    preset = make_preset(name="p")
    api = Api(client, viewer)
    detail = api.get(reverse("api:preset-detail", args=[preset.code])).json()
    assert detail == api.get(PRESETS).json()["results"][0]


def test_presets_need_the_viewer_role(client, django_user_model):
    make_preset()
    nobody = django_user_model.objects.create_user("nobody")
    assert Api(client, nobody).get(PRESETS).status_code == 403


def test_the_list_reads_a_fixed_number_of_queries(client, viewer, user):
    api = Api(client, viewer)
    api.get(reverse("api:board-list"))  # its first use records last_used: once a minute

    def queries_for_presets(count):
        for i in range(Preset.objects.count(), count):
            preset = make_preset(name=f"preset {i}", author=user)
            presets.new_version(preset, options={"arm_freq": "1700"}, parent=preset.latest)
        with CaptureQueriesContext(connection) as captured:
            assert api.get(PRESETS).json()["count"] == count
        return len(captured)

    assert queries_for_presets(1) == queries_for_presets(8)
