"""A board's canary, from its page: set it up (or change it), and clear a drift once the board
is known to be what it now is. The board page shows the panel through the `canary_panel` tag
(benchmarks.templatetags.canary), so devices needs nothing of benchmarks."""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from benchmarks import canaries, schedules
from benchmarks.models import Drift
from benchmarks.specs import AS_IS, SpecError
from devices.models import Preset
from devices.views.access import permission_required
from devices.views.boards import acts_on_board

EVERY_CHOICES = [
    ("15m", "every 15 minutes"),
    ("1h", "every hour"),
    ("6h", "every 6 hours"),
    ("1d", "every day"),
]


class CanaryForm(forms.Form):
    every = forms.ChoiceField(choices=EVERY_CHOICES, initial="1h")
    preset = forms.ChoiceField(
        help_text="A version is pinned: a new version of the preset is a new series."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(AS_IS, "the board as it is (stock or what was applied)")]
        for preset in Preset.objects.order_by("name"):
            latest = preset.latest
            if latest is not None:
                label = f"{preset.name}@{latest.number}"
                choices.append((label, f"{label} (applied for each canary)"))
        self.fields["preset"].choices = choices


@permission_required("benchmarks.run_campaign")
@require_POST
@acts_on_board(needs_pinned_key=True)
def canary_set_up(request, board):
    form = CanaryForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose how often the canary runs, and at which preset.")
        return redirect(board)
    try:
        schedule = canaries.set_up(
            board, form.cleaned_data["every"], form.cleaned_data["preset"], request.user
        )
    except SpecError as exc:
        messages.error(request, f"No canary was set up: {exc}")
        return redirect(board)
    when = schedules.timing_words(schedule)
    messages.success(request, f"The canary of {board.name} runs {when}; its first start is now.")
    return redirect(board)


@permission_required("benchmarks.run_campaign")
@require_POST
def drift_clear(request, code, drift):
    found = get_object_or_404(Drift.objects.select_related("board"), pk=drift, board__code=code)
    if canaries.clear(found, request.user):
        messages.success(
            request,
            f"{found.board.name} is taken as it is now: its canary's {found.benchmark} "
            f"{found.metric} series starts again from "
            f"{timezone.localtime(found.since):%Y-%m-%d %H:%M}.",
        )
    else:
        messages.info(request, "That drift was cleared already.")
    return redirect(found.board)
