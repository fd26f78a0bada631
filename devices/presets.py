"""Preset versions are only ever added: every edit, clone or import makes a new one."""

import django_rq
from django.db import transaction
from django.db.models import Max
from rq import Callback

from devices.models import Application, Board, Preset, PresetVersion

APPLY_JOB_TIMEOUT_S = 1800  # reboots, a trial boot and a roll-back, each with its deadline


def new_version(preset: Preset, *, options: dict, governor: str = "", note: str = "",
                acknowledge_warranty: bool = False, author=None,
                parent: PresetVersion | None = None) -> PresetVersion:  # fmt: skip
    """The next version of preset, numbered in order even when two people save at once."""
    with transaction.atomic():
        Preset.objects.select_for_update().filter(pk=preset.pk).get()
        last = preset.versions.aggregate(last=Max("number"))["last"] or 0
        return PresetVersion.objects.create(
            preset=preset,
            number=last + 1,
            options={key: str(value) for key, value in options.items()},
            governor=governor,
            note=note,
            acknowledge_warranty=acknowledge_warranty,
            author=author,
            parent=parent if parent is not None else preset.latest,
        )


def start_application(board: Board, version: PresetVersion, mode: str, user=None) -> Application:
    """Record the application and queue it on the board's worker queue after commit."""
    from devices import apply  # the SSH stack loads only where work runs

    application = Application.objects.create(
        board=board, version=version, mode=mode, requested_by=user
    )
    queue = django_rq.get_queue(board.queue)
    transaction.on_commit(
        lambda: queue.enqueue(
            apply.apply_preset,
            application.pk,
            job_timeout=APPLY_JOB_TIMEOUT_S,
            on_failure=Callback(apply.application_crashed),
        )
    )
    return application
