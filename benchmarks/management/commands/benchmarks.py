import json

from django.core.management.base import BaseCommand

from benchmarks.catalog import BUILT_IN, custom
from benchmarks.catalog.spec import Benchmark


class Command(BaseCommand):
    help = "List the benchmark catalog: metrics, parameters with defaults, tools, peer."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print the catalog as JSON")
        parser.add_argument(
            "--markdown",
            action="store_true",
            help="print the built-in catalog as docs/benchmarks.md (`make docs` writes it)",
        )

    def handle(self, *args, json: bool = False, markdown: bool = False, **options):
        if markdown:
            # The built-ins only: custom benchmarks are one database's, and the page must
            # come out the same on every machine so that a test can tell it has drifted.
            self.stdout.write(catalog_markdown(BUILT_IN.values()), ending="")
            return
        usable, unusable = custom.defined()
        for _row, refusal in unusable:
            self.stderr.write(str(refusal))
        benchmarks = [*BUILT_IN.values(), *usable]
        if json:
            self.stdout.write(_json([describe(benchmark) for benchmark in benchmarks]))
            return
        for benchmark in benchmarks:
            self.stdout.write(text(benchmark))


def describe(benchmark: Benchmark) -> dict:
    return {
        "name": benchmark.name,
        "title": benchmark.title,
        "version": benchmark.version,
        "metrics": [
            {"name": m.name, "unit": m.unit, "higher_is_better": m.higher_is_better}
            for m in benchmark.metrics
        ],
        "params": [
            {"name": p.name, "kind": p.kind, "default": p.default, "choices": list(p.choices)}
            for p in benchmark.params
        ],
        "tools": list(benchmark.tools),
        "peer_tools": list(benchmark.peer_tools),
        "packages": list(benchmark.packages),
        "needs_peer": benchmark.needs_peer,
        "repetitions": benchmark.repetitions,
        "timeout_s": benchmark.timeout_s,
        "min_trial_s": benchmark.min_trial_s,
        "length_param": benchmark.length_param,
        "noise_floor_s": benchmark.noise_floor_s,
    }


def text(benchmark: Benchmark) -> str:
    metrics = ", ".join(f"{m.name} [{m.unit}, {m.direction}]" for m in benchmark.metrics)
    params = ", ".join(f"{p.name}={_default(p.default)}" for p in benchmark.params) or "none"
    tools = " ".join(benchmark.tools) or "none"
    peer = "needs a peer" if benchmark.needs_peer else "no peer"
    return (
        f"{benchmark.name} (v{benchmark.version}): {benchmark.title}\n"
        f"  metrics: {metrics}\n  params: {params}\n  tools: {tools}; {peer}\n"
        f"  trials: {_length(benchmark)}\n"
    )


MARKDOWN_HEAD = """\
# The benchmark catalog

Generated from `benchmarks/catalog/` by `make docs` (`manage.py benchmarks --markdown`); a test
fails when this page and the catalog differ, so edit the catalog, not this page. Custom
benchmarks, which admins define in the Django admin, are listed by `manage.py benchmarks` and on
the *Benchmarks* page. How a campaign runs these (order, trial length, suspect trials) is in
[campaigns.md](campaigns.md).

| Benchmark | Category | Metrics | Peer | Trials |
|---|---|---|---|---|
"""


def catalog_markdown(benchmarks) -> str:
    benchmarks = list(benchmarks)
    rows = [
        f"| [{b.name}](#{b.name}) | {b.category} | "
        + ", ".join(f"{m.name} ({m.unit})" for m in b.metrics)
        + f" | {'yes' if b.needs_peer else 'no'} | {_length(b)} |"
        for b in benchmarks
    ]
    sections = [_markdown_section(benchmark) for benchmark in benchmarks]
    return MARKDOWN_HEAD + "\n".join(rows) + "\n\n" + "\n".join(sections)


def _markdown_section(benchmark: Benchmark) -> str:
    lines = [
        f"## {benchmark.name}",
        "",
        f"**{benchmark.title}** (definition version {benchmark.version}). {benchmark.description}",
        "",
        "Metrics: "
        + "; ".join(f"{m.name} in {m.unit}, {m.direction}" for m in benchmark.metrics)
        + ".",
        "",
    ]
    if benchmark.params:
        lines += ["| Parameter | Kind | Default | Allowed | Meaning |", "|---|---|---|---|---|"]
        lines += [
            f"| `{p.name}` | {p.kind} | `{_default(p.default)}` | {_allowed(p)} | {_cell(p.help)} |"
            for p in benchmark.params
        ]
        lines.append("")
    tools = ", ".join(f"`{tool}`" for tool in benchmark.tools) or "none"
    packages = ", ".join(f"`{package}`" for package in benchmark.packages) or "none"
    lines.append(f"Tools on the board: {tools} (Debian packages: {packages}).")
    if benchmark.needs_peer:
        peer_tools = ", ".join(f"`{tool}`" for tool in benchmark.peer_tools) or "none"
        lines.append(f"Needs a peer (another board or the controller) with: {peer_tools}.")
    lines.append(
        f"Repetitions by default: {benchmark.repetitions}; the measuring command's time limit:"
        f" {benchmark.timeout_s:g} s; trials: {_length(benchmark)}."
    )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text in a Markdown table's cell: a pipe would end the cell."""
    return text.replace("|", "\\|")


def _allowed(param) -> str:
    if param.choices:
        return ", ".join(f"`{choice}`" for choice in param.choices)
    shown = _size if param.kind == "size" else _number
    bounds = []
    if param.min is not None:
        bounds.append(f"at least {shown(param.min)}")
    if param.max is not None:
        bounds.append(f"at most {shown(param.max)}")
    return ", ".join(bounds) or "any"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _size(size: float) -> str:
    """Bytes as the size parameters are written (binary K, M, G), e.g. 68719476736 -> 64G."""
    for suffix, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{int(size // factor)}{suffix}"
    return f"{_number(size)} bytes"


def _length(benchmark: Benchmark) -> str:
    floor = f"suspect under {benchmark.noise_floor_s:g} s" if benchmark.noise_floor_s else ""
    if not benchmark.length_param:
        return floor or "any length"
    lengthened = f"lengthened to {benchmark.min_trial_s:g} s by {benchmark.length_param}"
    return f"{lengthened}, {floor}" if floor else lengthened


def _default(value) -> str:
    return "+".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _json(value) -> str:
    return json.dumps(value, indent=2)
