"""The comparison builder's form: a selection (campaigns, runs), then what the selection offers
(its metrics, the benchmark's groupings), then the baseline among the groups found.

Each step's choices come from the one before, so the form reads its selection first, when it
is made: the page is a GET form that fills in as it is submitted (no script needed).
"""

import re
import uuid

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from benchmarks import comparisons, sharing
from benchmarks.models import Campaign, Run, validate_shown_name

# The builder is a GET form: its selection travels in the address, whose request line gunicorn
# caps at 8190 bytes (gunicorn.conf.py). A campaign takes 47 bytes there, a run code 42 (one a
# line), a 200-character baseline up to 1,800: 40 campaigns and 100 runs leave room for it.
CAMPAIGNS_MAX = 40
RUN_CODES_MAX = 100
# The campaigns listed to choose from: the newest (all of thousands made the empty builder
# hundreds of KB); an older one's code is pasted with the run codes.
CAMPAIGNS_LISTED = 200
_SEPARATORS = re.compile(r"[\s,;]+")


class SelectionForm(forms.Form):
    """Chosen runs: campaigns picked among the newest listed, and pasted codes of runs or of
    older campaigns. cleaned_data: "campaigns" (picked and pasted), "runs" (run ids)."""

    campaigns = forms.ModelMultipleChoiceField(
        queryset=Campaign.objects.filter(archived__isnull=True),
        to_field_name="code",
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text=f"Every done run of these campaigns counts. The newest {CAMPAIGNS_LISTED} are "
        "listed; for an older campaign, paste its code (in its page's address) under Runs.",
    )
    runs = forms.CharField(
        required=False,
        label="Runs",
        widget=forms.Textarea(attrs={"rows": 2, "class": "mono"}),
        help_text="Run codes (the first column of a campaign's CSV), separated by spaces or "
        "lines, to add runs outside those campaigns; a campaign's code adds the campaign.",
    )

    def __init__(self, data=None):
        super().__init__(data)
        chosen = self.data.getlist("campaigns") if self.is_bound else []
        self.fields["campaigns"].widget.choices = _listed(chosen)

    def clean_campaigns(self):
        _capped(self.data.getlist("campaigns"))  # before the codes are looked up
        return self.cleaned_data["campaigns"]

    def clean_runs(self):
        return _pasted(self.cleaned_data["runs"])

    def clean(self):
        data = super().clean()
        if "runs" in data:
            pasted_ids, data["runs"] = data["runs"]
        if "runs" in data and "campaigns" in data:
            # The campaigns whose codes were pasted join the chosen ones, and the cap is on
            # them all: the Save form sends them all as chosen, so it takes what is shown.
            chosen = list(data["campaigns"])
            pasted = Campaign.objects.filter(pk__in=pasted_ids).exclude(pk__in=_ids(chosen))
            try:
                data["campaigns"] = _capped(chosen + list(pasted))
            except ValidationError as exc:
                self.add_error("campaigns", exc)
        if not self.errors and not data["campaigns"] and not data["runs"]:
            raise ValidationError("Choose one or more campaigns, or give run codes.")
        return data


class ComparisonForm(SelectionForm):
    metric = forms.ChoiceField(required=False)
    group_by = forms.ChoiceField(required=False, label="Group by")
    baseline = forms.CharField(required=False, max_length=200)
    include_suspects = forms.BooleanField(
        required=False,
        label="Include suspect trials",
        help_text="Trials the telemetry marked suspect (throttling, a busy board...) are left "
        "out unless this is ticked.",
    )

    def __init__(self, data=None):
        super().__init__(data)
        self.selected_runs = None  # a queryset of runs once a selection is read
        if self.is_bound:
            self._offer_choices()

    def _offer_choices(self):
        try:
            chosen = _capped(self.data.getlist("campaigns"))
            campaigns = self.fields["campaigns"].clean(chosen)
            pasted_ids, run_ids = _pasted(self.data.get("runs", ""))
            campaign_ids = _capped(list(dict.fromkeys(_ids(campaigns) + pasted_ids)))
        except ValidationError:
            return  # is_valid() says what is wrong
        if not campaign_ids and not run_ids:
            return
        self.selected_runs = comparisons.runs_selected(campaign_ids, run_ids)
        metrics = comparisons.metric_choices(self.selected_runs)
        self.fields["metric"].choices = [
            (f"{benchmark}:{metric}", f"{metric} [{unit}] of {benchmark}")
            for benchmark, metric, unit in metrics
        ]
        chosen = self.data.get("metric") or (self.fields["metric"].choices or [("",)])[0][0]
        benchmark = chosen.split(":", 1)[0]
        self.fields["group_by"].choices = list(comparisons.group_by_choices(benchmark).items())

    def clean(self):
        data = super().clean()
        if self.selected_runs is not None and not self.fields["metric"].choices:
            raise ValidationError("These runs have no values yet: none of them is done.")
        return data

    @property
    def choice(self) -> dict:
        """What comparisons.compare takes, with the steps not chosen yet at their first offer."""
        data = self.cleaned_data
        metric = data["metric"] or self.fields["metric"].choices[0][0]
        benchmark, metric = metric.split(":", 1)
        return {
            "benchmark": benchmark,
            "metric": metric,
            "group_by": data["group_by"] or "preset",
            "baseline": data["baseline"],
            "include_suspects": data["include_suspects"],
        }


class SaveComparisonForm(forms.Form):
    name = forms.CharField(
        max_length=120,
        validators=[validate_shown_name],
        help_text="e.g. “overclock, 64-bit against 32-bit”.",
    )


def _capped(campaigns):
    if len(campaigns) > CAMPAIGNS_MAX:
        raise ValidationError(
            f"At most {CAMPAIGNS_MAX} campaigns (their codes make the page's address, which "
            "the server caps); compare fewer at a time."
        )
    return campaigns


def _ids(campaigns) -> list[int]:
    return [campaign.pk for campaign in campaigns]


def _listed(chosen: list[str]) -> list[tuple[str, str]]:
    """The campaigns to choose from: the newest, and the chosen older ones (chosen again when
    the form is sent again)."""
    newest = (
        Campaign.objects.filter(archived__isnull=True)
        .order_by("-created", "-pk")
        .values_list("code", "name")
    )
    found = list(newest[:CAMPAIGNS_LISTED])
    codes = {code for code in map(_uuid, chosen[:CAMPAIGNS_MAX]) if code} - {c for c, _ in found}
    found += Campaign.objects.filter(code__in=codes).values_list("code", "name")
    return [(str(code), name) for code, name in found]


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _pasted(text: str) -> tuple[list[int], list[int]]:
    """The campaigns and the runs named by text's codes (ValidationError naming what is
    neither's code)."""
    words = [word for word in _SEPARATORS.split(text) if word]
    if len(words) > RUN_CODES_MAX:
        raise ValidationError(
            f"At most {RUN_CODES_MAX} run codes (they make the page's address, which the "
            "server caps); choose their campaign instead."
        )
    codes = {code for code in map(_uuid, words) if code}
    bad = [word for word in words if not _uuid(word)]
    runs = dict(Run.objects.filter(code__in=codes).values_list("code", "pk"))
    campaigns = dict(Campaign.objects.filter(code__in=codes - set(runs)).values_list("code", "pk"))
    bad += sorted(str(code) for code in codes - set(runs) - set(campaigns))
    if bad:
        raise ValidationError(f"No run or campaign has the code {', '.join(bad[:5])}.")
    return list(campaigns.values()), list(runs.values())


class ShareForm(forms.Form):
    """A new share link: how long it lives (or until which day) and whether it names boards."""

    expires_in = forms.TypedChoiceField(
        label="Expires",
        coerce=int,
        empty_value=None,
        required=False,
        choices=[
            ("", "never"),
            *(
                (str(days), f"after {days} day{'s' if days > 1 else ''}")
                for days in sharing.EXPIRY_DAYS
            ),
        ],
    )
    expires_on = forms.DateField(
        label="or at the end of",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="A day (in the server's time zone); it wins over the choice above.",
    )
    show_board_names = forms.BooleanField(
        required=False,
        label="Show board names",
        help_text="Otherwise boards read “board 1”, “board 2”... Host names, addresses, users "
        "and serials are hidden either way.",
    )

    def clean_expires_on(self):
        day = self.cleaned_data["expires_on"]
        if day is None:
            return day
        today = timezone.localdate()
        if day < today:
            raise ValidationError("That day has passed.")
        if day > (furthest := sharing.furthest_expiry(today)):
            years = sharing.LONGEST_EXPIRY_YEARS
            raise ValidationError(
                f"At most {years} years from today: {furthest.isoformat()} (or choose never)."
            )
        return day

    @property
    def expires(self):
        data = self.cleaned_data
        return sharing.expiry(days=data["expires_in"], on=data["expires_on"])
