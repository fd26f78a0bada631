"""Removing a board retires it: it leaves service and keeps every record; an admin restores it.

Removal and the jobs meet on the board's row. Removal looks for work and retires the board
while it holds a lock on that row (select_for_update), and a job claims its record under the
same lock. So they cannot cross: either removal sees the claimed record and is refused, or the
job finds the board retired and ends its record without connecting (devices.work.claim).
"""

from django.db import transaction
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from devices.models import Application, Board, BoardTask

WORK_LISTED = 5  # in the refusal to remove a board


class StillWorking(Exception):
    """Work is unfinished on the board: `work` lists it (applications, then tasks)."""

    def __init__(self, board: Board, work: list):
        super().__init__(f"{board.name} has work queued or running")
        self.board, self.work = board, work


class NameTaken(Exception):
    pass


def work_on(board: Board) -> list[Application | BoardTask]:
    applications = board.applications.filter(state__in=Application.UNFINISHED)
    tasks = board.tasks.filter(state__in=BoardTask.UNFINISHED)
    return [*applications.select_related("version__preset"), *tasks]


def remove(board: Board, user=None) -> bool:
    """Take a board out of pifarm. True if it was retired; False if it was forgotten, because
    it never got past registration (no pinned key, nothing probed or applied)."""
    with transaction.atomic():
        locked = Board.objects.select_for_update().filter(pk=board.pk).first()
        if locked is None:  # forgotten by a request that came first (a double click)
            return False
        if locked.retired:
            return True
        work = work_on(locked)
        if work:
            raise StillWorking(locked, work)
        if _never_registered(locked):
            locked.tasks.all().delete()  # its host-key fetches: there is nothing else
            locked.delete()
            return False
        Board.objects.filter(pk=board.pk).update(retired=timezone.now(), retired_by=user)
    return True


def _never_registered(board: Board) -> bool:
    return not (board.host_key or board.snapshots.exists() or board.applications.exists())


def restore(board: Board) -> None:
    """Back into service, unless a board in service took its name meanwhile."""
    with transaction.atomic():
        locked = Board.objects.select_for_update().get(pk=board.pk)
        if Board.objects.in_service().filter(name=locked.name).exclude(pk=locked.pk).exists():
            raise NameTaken(
                f"A board in service is named {locked.name}: rename one of them (in the admin) "
                "before restoring this one."
            )
        Board.objects.filter(pk=board.pk).update(retired=None, retired_by=None)


def still_working_message(busy: StillWorking) -> SafeString:
    """What runs on the board: the first few items, each with a link to where it shows its
    progress, then how many more (a board may have hundreds of probes waiting)."""
    shown = busy.work[:WORK_LISTED]
    links = format_html_join(", ", '<a href="{}">{}</a>', (_link(busy.board, i) for i in shown))
    if len(busy.work) > len(shown):
        links = format_html("{} and {} more", links, len(busy.work) - len(shown))
    return format_html(
        "{} was not removed, because work is queued or running on it: {}. Remove it once that "
        "has finished.",
        busy.board.name,
        links,
    )


def _link(board: Board, item: Application | BoardTask) -> tuple[str, str]:
    if isinstance(item, Application):
        return item.get_absolute_url(), f"applying {item.version} ({item.get_state_display()})"
    # A task has no page of its own: the board page follows its latest one.
    return board.get_absolute_url(), f"{item.get_kind_display()} ({item.state})"
