"""Campaign rows made directly, for pages that show them (the engine is not needed)."""

import copy

from django.utils import timezone

from benchmarks.models import Campaign, Comparison, CustomBenchmark, Drift, Lane, Measurement, Run
from devices.models import BoardTask, FactSnapshot, Preset, PresetVersion
from tests.devices.factories import make_board


def make_campaign(board, name="bench campaign", states=("queued",), **fields) -> Campaign:
    """A campaign on board with one sha1sum run per state given, in that order."""
    spec = {"name": name, "boards": [board.name], "presets": ["as-is"], "repetitions": 1}
    campaign = Campaign.objects.create(name=name, spec=spec, **fields)
    lane = Lane.objects.create(campaign=campaign, board=board)
    for position, state in enumerate(states):
        add_run(lane, state=state, sequence=position * 10, repetition=position + 1)
    return campaign


def add_run(lane: Lane, **fields) -> Run:
    fields = {
        "benchmark": "sha1sum",
        "definition_version": 1,
        "params": {"size": "16M"},
        "sequence": lane.runs.count() * 10,
        "repetition": 1,
        **fields,
    }
    return Run.objects.create(campaign=lane.campaign, lane=lane, board=lane.board, **fields)


def measure(run: Run, **values: tuple[float, str]) -> None:
    """values: metric=(value, unit)."""
    for metric, (value, unit) in values.items():
        Measurement.objects.create(
            run=run, metric=metric, value=value, unit=unit, higher_is_better=True
        )


def add_runs(lane: Lane, count: int, **fields) -> list[Run]:
    """count sha1sum runs at the end of lane, written in a few queries (a campaign of
    thousands of runs, as the engine's bulk_create makes them)."""
    first = lane.runs.count()
    runs = [
        Run(
            campaign=lane.campaign,
            lane=lane,
            board=lane.board,
            benchmark="sha1sum",
            definition_version=1,
            params={"size": "16M"},
            sequence=(first + i) * 10,
            repetition=first + i + 1,
            **fields,
        )
        for i in range(count)
    ]
    return Run.objects.bulk_create(runs, batch_size=500)


def add_trial(lane: Lane, value: float, metric="throughput", unit="MB/s", **fields) -> Run:
    """A done run of lane with one value of metric (a trial a comparison counts)."""
    run = add_run(lane, state=Run.State.DONE, **fields)
    Measurement.objects.create(
        run=run, metric=metric, value=value, unit=unit, higher_is_better=True
    )
    return run


def lane_on(campaign, name, model="Raspberry Pi 4 Model B Rev 1.5", kernel=64, userland=64):
    """A lane of campaign on a new board, with a probe of it in lane.snapshot for its trials."""
    board = make_board(name, host=f"10.213.9.{10 + campaign.lanes.count()}")
    lane = Lane.objects.create(campaign=campaign, board=board)
    lane.snapshot = FactSnapshot.objects.create(
        board=board,
        model=model,
        kernel_bits=kernel,
        userland_bits=userland,
        os_name="Debian GNU/Linux 12 (bookworm)",
        facts={
            "kernel_release": "6.6.51-v8+",
            "governor": "performance",
            "firmware_version": {"version": "d2f7a1b"},
        },
    )
    return lane


def reflashed(lane, userland=32):
    """lane as after its board was re-flashed to another userland and probed again: its trials
    (see trials) run on the same board, with the new probe."""
    again = copy.copy(lane)
    again.snapshot = FactSnapshot.objects.create(
        board=lane.board,
        model=lane.snapshot.model,
        kernel_bits=lane.snapshot.kernel_bits,
        userland_bits=userland,
        os_name=lane.snapshot.os_name,
        facts=lane.snapshot.facts,
    )
    return again


def trials(lane, values, metric="throughput", unit="MB/s", **fields) -> list[Run]:
    """A done trial of lane per value, made with lane.snapshot (see lane_on), as add_trial
    makes one, in a few queries (a large group's thousands of trials)."""
    fields = {"benchmark": "sha1sum", "definition_version": 1, "params": {"size": "16M"}} | fields
    first = lane.runs.count()
    runs = Run.objects.bulk_create(
        [
            Run(
                campaign=lane.campaign,
                lane=lane,
                board=lane.board,
                state=Run.State.DONE,
                snapshot=lane.snapshot,
                sequence=(first + i) * 10,
                **{"repetition": 1, **fields},
            )
            for i in range(len(values))
        ],
        batch_size=500,
    )
    Measurement.objects.bulk_create(
        [
            Measurement(run=run, metric=metric, value=value, unit=unit, higher_is_better=True)
            for run, value in zip(runs, values, strict=True)
        ],
        batch_size=500,
    )
    return runs


def intloop_trials(lane, values, seconds: int = 10) -> list[Run]:
    """Done intloop runs of lane, one a value (iterations per second)."""
    return trials(
        lane,
        values,
        benchmark="intloop",
        params={"seconds": seconds},
        metric="iterations_per_second",
        unit="iter/s",
    )


def overclock(name="fast", number=2) -> PresetVersion:
    preset = Preset.objects.create(name=name)
    return PresetVersion.objects.create(preset=preset, number=number, options={"arm_freq": "2000"})


def saved_comparison(owner, campaign, name="overclock against stock", **choice) -> Comparison:
    """owner's saved comparison of campaign's sha1sum throughput, by preset unless told."""
    choice = {"benchmark": "sha1sum", "metric": "throughput", "group_by": "preset"} | choice
    comparison = Comparison.objects.create(owner=owner, name=name, **choice)
    comparison.campaigns.set([campaign])
    return comparison


def quick_campaign(boards, benchmark: str, params: dict | None = None, **spec) -> Campaign:
    """A campaign of one benchmark on boards as a test runs it: no quiet wait, one repetition,
    the parameters as given (no trial lengthened); spec adds or overrides fields."""
    from benchmarks import campaigns

    return campaigns.start(
        {
            "name": benchmark,
            "boards": [board.name for board in boards],
            "quiet": False,
            "repetitions": 1,
            "min_trial_s": 0,
            "benchmarks": [{"name": benchmark, "params": params or {}}],
            **spec,
        }
    )


def custom_benchmark(
    name: str, command: str, *, pattern: str = r"value=(?P<value>\d+)", **fields
) -> CustomBenchmark:
    """A custom benchmark as an admin saves one (titled with its name, unit x, unless given)."""
    fields = {"title": name, "unit": "x", **fields}
    return CustomBenchmark.objects.create(name=name, command=command, pattern=pattern, **fields)


def needs_frobnicate(*other_tools: str) -> CustomBenchmark:
    """A benchmark that needs a tool no board has (frobnicate), besides other_tools."""
    return custom_benchmark(
        "needs-frobnicate",
        "frobnicate",
        title="needs a tool no board has",
        tools=" ".join(("frobnicate", *other_tools)),
        pattern=r"(?P<value>\d+)",
    )


def sleeper(seconds: str = "0.2") -> CustomBenchmark:
    """Sleeps, then says how long: CPU-free, so the host's load does not change it."""
    return custom_benchmark(
        "sleeper",
        'sleep "$PIFARM_SECONDS" && echo "slept=$PIFARM_SECONDS"',
        title="sleeps, then says how long",
        params={"seconds": seconds},
        pattern=r"slept=(?P<value>[0-9.]+)",
        unit="s",
        higher_is_better=False,
    )


# Custom benchmarks saved before the admin checked defaults, as a database may still hold them:
# longdef's default is longer than a parameter holds, nulldef has none at all.
UNUSABLE_DEFAULTS = {"longdef": ("long default", "x" * 300), "nulldef": ("null default", None)}


def unusable_custom_benchmark(name: str) -> CustomBenchmark:
    title, default = UNUSABLE_DEFAULTS[name]
    return custom_benchmark(
        name, "true", title=title, params={"p": default}, pattern="(?P<value>x)"
    )


def as_a_simulated_pi3(lane) -> None:
    """lane's board a simulated Pi 3 (its arm_freq default is 1200 MHz), and its runs without a
    preset with the effective state the engine records: firmware defaults, ondemand."""
    lane.snapshot.revision = "a02082"
    lane.snapshot.facts["simulated"] = True
    lane.snapshot.save()
    state = {
        "config_sha256": "c" * 64,
        "managed": {},
        "firmware": {"arm_freq": "1200"},
        "governor": "ondemand",
    }
    lane.runs.filter(preset_version=None).update(
        environment={"effective": state}, config_fingerprint="f" * 12
    )


def installing_sysbench(board, log_tail: str) -> BoardTask:
    """A running prepare task of board's, installing sysbench, with this much of apt's output."""
    return BoardTask.objects.create(
        board=board,
        kind=BoardTask.Kind.PREPARE,
        state=BoardTask.State.RUNNING,
        benchmarks=["sysbench-cpu"],
        step="installing sysbench",
        log_tail=log_tail,
    )


def make_drift(board, **fields) -> Drift:
    """An open drift of board's sha1sum throughput, from 100 to 90 MB/s (fields change it)."""
    fields = {
        "benchmark": "sha1sum",
        "metric": "throughput",
        "unit": "MB/s",
        "kind": "jump",
        "since": timezone.now(),
        "reference_mean": 100.0,
        "mean_since": 90.0,
        **fields,
    }
    return Drift.objects.create(board=board, **fields)
