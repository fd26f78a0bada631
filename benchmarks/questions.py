"""The classic questions, one campaign template each: the question in words, the campaign that
answers it (benchmarks, parameters, presets, repetitions, order) for the boards a user picks,
and the recipe of its answer (which metrics, grouped by what, against which group).

A template fills the campaign builder (`/campaigns/new/?question=network`); the campaign's spec
keeps the question's key, and its answer page (benchmarks.answers) follows the recipe.
Defaults are short (few repetitions, short durations): the builder changes any of them.
"""

from dataclasses import dataclass, field

from benchmarks import catalog, specs
from benchmarks.comparisons import AS_IS
from devices import presets


@dataclass(frozen=True)
class Sweep:
    """One benchmark of a template: its parameters, and the other values some of them take
    (each combination is its own entry of the spec, specs.swept)."""

    benchmark: str
    params: dict = field(default_factory=dict)
    vary: dict[str, list] = field(default_factory=dict)

    def entries(self) -> list[dict]:
        return specs.swept(catalog.lookup(self.benchmark), self.params, self.vary)


@dataclass(frozen=True)
class Recipe:
    """How the answer reads the runs: these (benchmark, metric)s, grouped by group_by,
    against the group named baseline; `treatment` names what is compared in the sentence."""

    metrics: tuple[tuple[str, str], ...]
    group_by: str
    baseline: str
    treatment: str
    # For a parameter sweep (the OpenVPN question): the parameters whose values are compared,
    # each against its first value.
    factors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    key: str
    sentence: str
    hint: str  # what to pick in the builder
    sweeps: tuple[Sweep, ...]
    recipe: Recipe
    repetitions: int = 3
    order: str = "interleaved"  # spreads a drift of the board over every benchmark
    overclocked: bool = False  # runs the classic dynamic overclock against the board as it is
    # Compares userlands: only boards of both bitnesses can answer it.
    needs_both_userlands: bool = False

    def refusal(self, boards) -> str:
        """Why these boards cannot answer the question ("" when they can), from their latest
        probes: refused before anything runs, rather than answered with nothing to compare."""
        if not self.needs_both_userlands:
            return ""
        probes = {board.name: board.latest_snapshot for board in boards}
        found = {name: getattr(probe, "userland_bits", None) for name, probe in probes.items()}
        if {32, 64} <= set(found.values()):
            models = {probe.model for probe in probes.values() if probe and probe.userland_bits}
            if len(models) == 1:
                return ""
            return (
                f"“{self.sentence}” compares boards of one model, and these are of "
                f"{len(models)}: {', '.join(sorted(models))}. A difference between them would "
                "be the models', not the userlands'."
            )
        seen = ", ".join(
            f"{name}: {f'{bits}-bit' if bits else 'not probed'}" for name, bits in found.items()
        )
        return (
            f"“{self.sentence}” needs a board with a 32-bit and one with a 64-bit userland, as "
            f"their latest probes say ({seen}). Add the other kind, or probe the boards again."
        )

    def presets(self) -> list[str]:
        """The spec's presets: the classic overclock's version made first if it is missing."""
        if not self.overclocked:
            return [specs.AS_IS]
        version = presets.example_version(presets.CLASSIC_OVERCLOCK)
        return [specs.AS_IS, f"{version.preset.name}@{version.number}"]

    def spec(self, boards: list[str]) -> dict:
        """The campaign spec of this question on these boards (specs.check decides)."""
        return {
            "name": self.sentence,
            "question": self.key,
            "boards": boards,
            "presets": self.presets(),
            "benchmarks": [entry for sweep in self.sweeps for entry in sweep.entries()],
            "repetitions": self.repetitions,
            "order": self.order,
            "peer": "controller",
        }


DIRECTIONS = ["board-to-peer", "peer-to-board"]
CIPHERS = ["AES-256-CBC", "AES-128-GCM", "CHACHA20-POLY1305", "BF-CBC"]
SHORT_S = 5  # seconds of each network measurement

NETWORK = Question(
    key="network",
    sentence="Does a dynamic overclock with the ondemand governor speed up this Pi's "
    "100 Mbit/s network?",
    hint="Pick the 100 Mbit/s Pis (Pi 1, 2 or 3 Model B); the peer is this server. Each board "
    "runs iperf3 both ways and scp as it is, then with the classic dynamic overclock "
    f"({presets.CLASSIC_OVERCLOCK.name}, governor ondemand).",
    sweeps=(
        Sweep("iperf3-tcp", {"duration": SHORT_S}, {"direction": DIRECTIONS}),
        Sweep("scp", {"size": "16M"}),
    ),
    recipe=Recipe(
        metrics=(("iperf3-tcp", "throughput"), ("scp", "throughput")),
        group_by="preset",
        baseline=AS_IS,
        treatment="the overclock",
    ),
    overclocked=True,
)

BITNESS = Question(
    key="bitness",
    sentence="Is a 64-bit OS worth it on this Pi?",
    hint="Pick a board with a 32-bit OS and one with a 64-bit OS, of the same model; the "
    "answer pairs them by userland bitness.",
    sweeps=(
        Sweep("intloop", {"seconds": SHORT_S}),
        Sweep("sha1sum", {"size": "2G"}),
        Sweep("membw"),
        Sweep("flac", {"seconds": 20}),
        Sweep("lame", {"seconds": 20}),
        Sweep("iperf3-tcp", {"offloads": "off", "duration": SHORT_S}),
        Sweep("iperf3-udp-small", {"duration": SHORT_S}),
        Sweep("openvpn", {"duration": SHORT_S}),
        Sweep("wireguard", {"duration": SHORT_S}),
    ),
    recipe=Recipe(
        metrics=(
            ("intloop", "iterations_per_second"),
            ("sha1sum", "throughput"),
            ("membw", "write"),
            ("membw", "read"),
            ("flac", "realtime"),
            ("lame", "realtime"),
            ("iperf3-tcp", "throughput"),
            ("iperf3-udp-small", "packet_rate"),
            ("openvpn", "throughput"),
            ("wireguard", "throughput"),
        ),
        group_by="userland",
        baseline="32-bit userland",
        treatment="the 64-bit userland",
    ),
    needs_both_userlands=True,
)

OPENVPN = Question(
    key="openvpn",
    sentence="How fast can OpenVPN go on this Pi?",
    hint="Pick the boards; the peer is this server. Each board copies 50 MB with scp through "
    "the tunnel for every cipher, compression on and off and two MTUs, as it is and with the "
    "classic dynamic overclock (untick it for a board it does not suit, tick your own levels).",
    sweeps=(
        Sweep(
            "openvpn-scp",
            {"size": "50M", "cipher": CIPHERS[0], "compression": "off", "mtu": 1500},
            {"cipher": CIPHERS, "compression": ["lz4-v2"], "mtu": [1400]},
        ),
    ),
    recipe=Recipe(
        metrics=(("openvpn-scp", "throughput"),),
        group_by="preset",
        baseline=AS_IS,
        treatment="the overclock",
        factors=("cipher", "compression", "mtu"),
    ),
    repetitions=2,
    overclocked=True,
)

QUESTIONS = {question.key: question for question in (NETWORK, BITNESS, OPENVPN)}
specs.QUESTION_REFUSALS.update({key: question.refusal for key, question in QUESTIONS.items()})
