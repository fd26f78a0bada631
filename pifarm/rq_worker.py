"""The RQ worker pifarm runs (settings.RQ["WORKER_CLASS"]): RQ's own, whose scheduler process
is started again within seconds of dying, and which queues again, as it starts, the scheduled
campaign starts that Redis lost (benchmarks.schedules.rearm).

RQ looks for a dead scheduler in its maintenance, every 10 minutes, and an idle worker waits
on its queue for minutes between two looks: a killed scheduler process left the busy boards'
next tries (scheduled jobs) waiting that long. The scheduler's lock holds the worker's own
scheduler's name, so the worker takes it again at once; a lock another worker held is taken
over once it expires (a minute), as RQ would."""

import threading
import time

import rq
from django import db

from benchmarks import schedules

WATCH_S = 5.0


class Worker(rq.Worker):
    def bootstrap(self, *args, **kwargs):
        super().bootstrap(*args, **kwargs)
        try:
            rearmed = schedules.rearm()
        except Exception:  # noqa: BLE001 - the database away: the healthcheck round tries again
            self.log.warning("could not queue the schedules' next starts", exc_info=True)
        else:
            if rearmed:
                self.log.info("queued again the next start of %d schedules", rearmed)
        finally:
            # Work horses are forked from this process: none may share its database socket.
            db.connections.close_all()

    def _start_scheduler(self, *args, **kwargs):
        super()._start_scheduler(*args, **kwargs)
        if self.scheduler is not None:
            threading.Thread(
                target=self._watch_scheduler, name="scheduler-watch", daemon=True
            ).start()

    def _watch_scheduler(self) -> None:
        while not self._stop_requested:
            time.sleep(WATCH_S)
            process = self.scheduler._process
            if process is None or not process.is_alive():
                try:
                    self.scheduler.acquire_locks(auto_start=True)
                except Exception:  # noqa: BLE001 - Redis away: the next look tries again
                    self.log.warning("could not look after the scheduler", exc_info=True)
                    continue
                restarted = self.scheduler._process
                if restarted is not None and restarted is not process and restarted.is_alive():
                    self.log.warning("the scheduler process had died: started it again")
