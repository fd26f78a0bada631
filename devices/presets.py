"""Preset versions are only ever added: every edit, clone or import makes a new one."""

import django_rq
from django.db import transaction
from django.db.models import Max
from rq import Callback

from devices.models import Application, Board, Preset, PresetVersion


def new_version(preset: Preset, *, options: dict, governor: str = "", note: str = "",
                acknowledge_warranty: bool = False, author=None,
                parent: PresetVersion | None = None) -> PresetVersion:  # fmt: skip
    """The next version of preset, numbered in order even when two people save at once."""
    if governor and governor not in PresetVersion.Governor.values:
        raise ValueError(f"{governor!r} is not a CPU governor")
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


def same_content(version: PresetVersion | None, *, options: dict, governor: str,
                 acknowledge_warranty: bool, **ignored) -> bool:  # fmt: skip
    """Would a new version repeat this one? Then saving makes none."""
    return (
        version is not None
        and version.options == {key: str(value) for key, value in options.items()}
        and version.governor == governor
        and version.acknowledge_warranty == acknowledge_warranty
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
            job_timeout=apply.job_timeout(),
            on_failure=Callback(apply.application_crashed),
        )
    )
    return application
