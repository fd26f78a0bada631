"""Board tasks and preset applications as kinds of board work (see devices.work)."""

from datetime import timedelta

from django.utils import timezone

from devices import work
from devices.models import Application, BoardTask

# A running task a minute past its kind's job timeout (tasks.job_for: a prepare task's is long)
# lost its worker (killed, machine gone); a queued one this old has no worker listening on its
# queue. A waiting one is judged by its next try
# (it may rightly wait a long time for a busy board): an hour past it, nothing delivered it.
RUNNING_GRACE = timedelta(seconds=60)
QUEUED_STALE_AFTER = timedelta(hours=1)
NO_SCHEDULER = (
    "its next try was due an hour ago and never came: do the workers run with --with-scheduler?"
)


def _unfinished_with_job(model, now):
    return model.objects.filter(
        state__in=model.UNFINISHED, created__lt=now - work.JOB_GRACE
    ).exclude(job_id="")


# ---- board tasks --------------------------------------------------------------------------


def _end_dead_task(task: BoardTask, why: str) -> int:
    return BoardTask.objects.filter(
        pk=task.pk, state__in=BoardTask.UNFINISHED, job_id=task.job_id
    ).update(state=BoardTask.State.FAILED, error=f"{why}; start it again", finished=timezone.now())


def _queue_task(task: BoardTask) -> None:
    from devices import tasks

    tasks.queue_task(task)


def _stale_tasks(now) -> int:
    from devices import tasks

    running = sum(
        BoardTask.objects.filter(
            state=BoardTask.State.RUNNING,
            kind=kind,
            started__lt=now - timedelta(seconds=tasks.job_for(kind)[1]) - RUNNING_GRACE,
        ).update(
            state=BoardTask.State.FAILED,
            error="the worker running this task stopped before it finished (killed?)",
            finished=now,
        )
        for kind in BoardTask.Kind.values
    )
    queued = BoardTask.objects.filter(
        state=BoardTask.State.QUEUED, created__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=BoardTask.State.FAILED,
        error="no worker took this task within an hour: is a worker running for its queue?",
        finished=now,
    )
    waiting = BoardTask.objects.filter(
        state=BoardTask.State.WAITING, next_try__lt=now - QUEUED_STALE_AFTER
    ).update(state=BoardTask.State.FAILED, error=f"Waited for the board, but {NO_SCHEDULER}",
             finished=now)  # fmt: skip
    return running + queued + waiting


# ---- preset applications ------------------------------------------------------------------


def _end_dead_application(application: Application, why: str) -> int:
    from devices import apply  # the SSH stack loads only where work runs

    application = Application.objects.select_related("version__preset").get(pk=application.pk)
    return apply.end_interrupted(application, f"It stopped{apply.while_step(application)}: {why}.")


def _queue_application(application: Application) -> None:
    from devices import presets

    presets.queue_application(application)


def _stale_applications(now) -> int:
    """Applications whose worker vanished. A running one may have left the board half-way,
    so a person looks; a queued one never started."""
    from devices import apply

    stale_after = now - timedelta(seconds=apply.job_timeout() + 60)
    never_started = Application.objects.filter(
        state=Application.State.QUEUED, created__lt=stale_after
    ).update(
        state=Application.State.FAILED,
        outcome="No worker took this application: is a worker running for the board's queue? "
        "Nothing was changed.",
        finished=now,
    )
    never_retried = Application.objects.filter(
        state=Application.State.WAITING, next_try__lt=now - QUEUED_STALE_AFTER
    ).update(
        state=Application.State.FAILED,
        outcome=f"Nothing was changed: it waited for the board, but {NO_SCHEDULER}",
        step="",
        finished=now,
    )
    # Started, not created: an application may wait a long time for its board first.
    interrupted = Application.objects.filter(
        state=Application.State.RUNNING, started__lt=stale_after
    ).select_related("version__preset")
    count = 0
    for application in interrupted:
        cause = (
            f"The worker running this application stopped{apply.while_step(application)}, "
            "before it finished."
        )
        count += apply.end_interrupted(application, cause)
    return never_started + never_retried + count


work.register(work.Kind(
    name="board tasks", model=BoardTask,
    candidates=lambda now: _unfinished_with_job(BoardTask, now),
    end_dead=_end_dead_task, queue=_queue_task, backstop=_stale_tasks,
))  # fmt: skip
work.register(work.Kind(
    name="preset applications", model=Application,
    candidates=lambda now: _unfinished_with_job(Application, now),
    end_dead=_end_dead_application, queue=_queue_application, backstop=_stale_applications,
))  # fmt: skip
