"""Applications that must not touch a board at all (no simulated Pi needed: nothing connects)."""

import pytest

from devices import presets
from devices.models import Application, Board, Preset

from .factories import make_board

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("status", ["needs_attention", "maintenance"])
def test_a_board_a_person_must_look_at_is_left_alone(status, run_jobs):
    board = make_board(status=status, status_reason="backup at /boot/config.txt.bak")
    preset = Preset.objects.create(name="p", families=["pi4"])
    version = presets.new_version(preset, options={"arm_freq": 1700})
    application = presets.start_application(board, version, "trial")
    run_jobs()
    application.refresh_from_db()
    board.refresh_from_db()
    assert application.state == Application.State.FAILED
    assert application.reason.startswith("Nothing was changed")
    assert board.status == status
    assert board.status_reason == "backup at /boot/config.txt.bak"  # nothing lost
    assert Board.objects.get(pk=board.pk).status != Board.Status.BUSY
