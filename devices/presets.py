"""Preset versions are only ever added: every edit, clone or import makes a new one."""

from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from devices import enqueue
from devices.models import Application, Board, Preset, PresetVersion


class AlreadyApplying(Exception):
    """A board with an application queued, waiting or running refuses a second one."""

    def __init__(self, board: Board, unfinished: Application):
        super().__init__(
            f"{board.name} already has an application of {unfinished.version} "
            f"({unfinished.get_state_display()}); it was not started again."
        )
        self.unfinished = unfinished


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
    """Record the application and queue it on the board's worker queue after commit.

    The database refuses a second unfinished application of a board (a form posted twice),
    whichever process adds it: that raises AlreadyApplying.
    """
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on
            application = Application.objects.create(
                board=board, version=version, mode=mode, requested_by=user
            )
    except IntegrityError:
        unfinished = board.applications.filter(state__in=Application.UNFINISHED).first()
        if unfinished is None:
            raise
        raise AlreadyApplying(board, unfinished) from None
    queue_application(application)
    return application


def queue_application(application: Application, at: datetime | None = None) -> None:
    from devices import apply  # the SSH stack loads only where work runs

    enqueue.on_board_queue(
        application,
        apply.apply_preset,
        job_timeout=apply.job_timeout(),
        on_failure=apply.application_crashed,
        unqueued=lambda reason: _unqueued(application, reason),
        at=at,
    )


def _unqueued(application: Application, reason: str) -> None:
    Application.objects.filter(pk=application.pk, state__in=Application.UNFINISHED).update(
        state=Application.State.FAILED,
        outcome=f"Nothing was changed: {reason}.",
        step="",
        finished=timezone.now(),
    )
