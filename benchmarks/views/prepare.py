"""Prepare a board for benchmarks, from its page: the form, its rows, and the view that starts
the task (benchmarks.prepare runs it). The board page (devices) shows the form through the
`prepare_panel` tag, so devices needs nothing of benchmarks."""

from django import forms
from django.views.decorators.http import require_POST

from benchmarks import catalog
from benchmarks.catalog.spec import Benchmark
from benchmarks.tools import missing_by_probe
from devices.models import BoardTask
from devices.views.access import permission_required
from devices.views.boards import acts_on_board, board_page, start_and_say


def preparable_benchmarks() -> list[Benchmark]:
    """Built-in benchmarks that need tools on the board and name the packages providing them
    (custom benchmarks name none: prepare board cannot install for them)."""
    return [b for b in catalog.BUILT_IN.values() if b.tools and b.packages]


class PrepareForm(forms.Form):
    """Prepare a board: the benchmarks whose missing tools it installs."""

    benchmarks = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one benchmark to prepare the board for."},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["benchmarks"].choices = [(b.name, b.title) for b in preparable_benchmarks()]

    def clean_benchmarks(self) -> list[str]:
        # A hand-made post may name one twice; the task and its words name each once.
        return list(dict.fromkeys(self.cleaned_data["benchmarks"]))


def prepare_rows(facts: dict | None, form: PrepareForm) -> list[dict]:
    """Each benchmark prepare board offers, with the tools the board's latest probe says it
    lacks, and those the probe does not look for; ticked as posted."""
    chosen = set(form["benchmarks"].value() or ()) if form.is_bound else set()
    probed = (facts or {}).get("tools")
    probed = probed if isinstance(probed, dict) else {}
    rows = []
    for benchmark in preparable_benchmarks():
        missing, unknown = missing_by_probe(benchmark.tools, probed)
        rows.append(
            {
                "benchmark": benchmark,
                "missing": missing,
                "unknown": unknown,
                "checked": benchmark.name in chosen,
            }
        )
    return rows


@permission_required("devices.probe_board")
@require_POST
@acts_on_board(needs_pinned_key=True)
def prepare(request, board):
    """Start a prepare task: install what the chosen benchmarks lack on the board."""
    form = PrepareForm(request.POST)
    if not form.is_valid():
        return board_page(request, board, status=400, prepare_form=form)

    def already(task: BoardTask) -> str:
        return (
            f"{board.name} is already being prepared for {', '.join(task.benchmarks)} "
            f"({task.state}); start again once that ends."
        )

    chosen = form.cleaned_data["benchmarks"]
    return start_and_say(request, board, BoardTask.Kind.PREPARE, already=already, benchmarks=chosen)
