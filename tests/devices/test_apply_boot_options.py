"""Applying a preset whose boot options a staff user acknowledged: the job honours it too."""

import pytest

from devices import presets
from devices.models import Application, Preset

from .simfarm import register_node
from .test_apply_preset import apply_now

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pisim]


@pytest.mark.usefixtures("fast")
def test_an_acknowledged_boot_option_is_applied(pisim_node_factory, run_jobs):
    board = register_node(pisim_node_factory())
    preset = Preset.objects.create(name="boots otherwise", families=["pi4"])
    version = presets.new_version(
        preset,
        options={"arm_freq": "1700", "disable_splash": "1", "start_x": "0"},
        acknowledge_boot=True,
    )

    application = apply_now(board, version, Application.Mode.TRIAL, run_jobs)

    assert application.state == Application.State.VERIFIED, application.reason
