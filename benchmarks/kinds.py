"""Campaign lanes as a kind of board work (see devices.work).

A lane whose job died does not end: its run under way ends failed with the reason, and the
lane goes on with its next run. A lane whose job vanished before it started (Redis emptied)
is simply queued again: nothing ran, nothing is lost.
"""

from datetime import timedelta

from django.db.models import Q

from benchmarks.models import Lane
from devices import work

# A lane whose job has not written its heartbeat for this long, and whose RQ job is gone,
# lost its worker. While fresh, the lane is left alone whatever Redis says (Redis may have
# restarted under a live job).
HEARTBEAT_STALE_S = 60


def candidates(now):
    fresh = Q(state=Lane.State.RUNNING, heartbeat__gt=now - timedelta(seconds=HEARTBEAT_STALE_S))
    return Lane.objects.filter(
        state__in=Lane.UNFINISHED, campaign__created__lt=now - work.JOB_GRACE
    ).exclude(fresh)


def end_dead(lane: Lane, why: str) -> int:
    from benchmarks import jobs, runner  # the SSH stack loads only where work runs

    if lane.state == Lane.State.RUNNING:
        ended = runner.end_interrupted(lane, why)
        jobs.restart(lane)
        return max(ended, 1)
    jobs.queue_lane(lane)  # queued or waiting: its job (or next try) vanished; nothing ran
    return 1


def queue(lane: Lane) -> None:
    from benchmarks import jobs

    jobs.queue_lane(lane)


work.register(work.Kind(
    name="campaign lanes", model=Lane, candidates=candidates, end_dead=end_dead, queue=queue,
))  # fmt: skip
