"""The telemetry samplers of a run: one on each end, for the length of its measurement."""

from collections.abc import Callable

from benchmarks import telemetry, trial
from benchmarks.catalog.spec import Command, Context
from benchmarks.endpoints import Detached, Endpoint
from devices import ssh

SAMPLER_JOB = "sampler"  # its name among the detached processes of a run's work directory
SAMPLE_INTERVAL_S = 1
SAMPLES_CAP = 4 * 1024 * 1024  # bytes of a sampler's readings read back


class Samplers:
    """The telemetry sampler on each end, for the length of the measurement. On the
    measurement's end it starts in the measurement's round trip, as its user."""

    def __init__(
        self, ends, ctx: Context, names: tuple[str, ...], timeout: float, measure: Command
    ):
        self.ends, self.names, self.timeout, self.measure = ends, names, timeout, measure
        self.dirs = {"board": ctx.workdir, "peer": ctx.peer_workdir}
        self.samples: dict[str, list] = {}
        self.problems: list[str] = []

    def each(self, action: Callable[[str, Endpoint], None]) -> None:
        for where, end in self.ends.items():
            try:
                action(where, end)
            except ssh.SSHError as exc:  # telemetry is missing then: the run says so
                self.problems.append(f"sampler on the {where}: {exc}")

    def start(self) -> list[Detached]:
        """Start the samplers away from the measurement; the one to start with it (the
        measurement starts once it took its first sample)."""
        argv = telemetry.sampler_argv(SAMPLE_INTERVAL_S, self.names)

        def start_apart(where: str, end: Endpoint) -> None:
            if where != self.measure.on:
                end.start(self.dirs[where], SAMPLER_JOB, argv, self.timeout)

        self.each(start_apart)
        if self.measure.on not in self.ends:
            return []
        # Next to the measurement, the sampler also reads its process tree's CPU time.
        measurement = f"{self.dirs[self.measure.on]}/{trial.MEASURE}"
        argv = telemetry.sampler_argv(SAMPLE_INTERVAL_S, self.names, trial=measurement)
        return [Detached(SAMPLER_JOB, argv, self.timeout, ready=telemetry.SAMPLE_DONE)]

    def stop(self, stopped: str | None = None) -> None:
        """Stop each end's sampler and read it; stopped: what the one beside the measurement
        printed, where the wait that saw the measurement end stopped it already."""

        def read(where: str, end: Endpoint) -> None:
            sudo = self.measure.sudo and where == self.measure.on
            if where == self.measure.on and stopped is not None:
                text = stopped
            else:
                text = end.stop_and_read(self.dirs[where], SAMPLER_JOB, SAMPLES_CAP, sudo=sudo).text
            try:
                self.samples[where] = telemetry.parse_samples(text)
            except ValueError as exc:
                self.problems.append(f"sampler on the {where}: {exc}")

        self.each(read)

    def dicts(self, where: str) -> list[dict]:
        return [sample.to_dict() for sample in self.samples.get(where, [])]
