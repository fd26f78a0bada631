"""The campaign builder: a form that writes the spec benchmarks.campaigns.start() takes.

Each benchmark's parameters are form fields made from its Param declarations, so a benchmark
added to the catalog (or defined by an admin) appears here with no change to this file. The
values are checked by the Param itself, and then the whole spec by specs.check(), whose
refusal becomes the form's error: the page and `manage.py campaign start` refuse the same.
"""

import random

from django import forms

from benchmarks import catalog, questions, schedules, specs
from benchmarks.catalog import custom, custom_rules
from benchmarks.catalog.spec import Benchmark, Param, ParamError
from benchmarks.models import CONTROLLER, ApiToken, Campaign, validate_shown_name
from devices import presets
from devices.models import Application, Board, PresetVersion

SEED_LIMIT = 2**31 - 1
# Parameters the builder also runs with other values (an "also with" field, comma-separated).
VARIED_KINDS = ("choice", "int", "float", "size")
VALUE_SEPARATOR = ","


def every_benchmark() -> list[Benchmark]:
    """Built-in benchmarks, then the custom ones that can be used (a built-in name wins, as
    lookup() does)."""
    return [*catalog.BUILT_IN.values(), *custom.defined()[0]]


def allowed_values(param: Param) -> str:
    """What a parameter accepts, in words, for the catalog and the builder."""
    if param.kind in ("choice", "multichoice"):
        some = "one of" if param.kind == "choice" else "any of"
        return f"{some} {', '.join(param.choices)}"
    limits = [_limit(param, param.min, "from"), _limit(param, param.max, "to")]
    words = {
        "int": "a whole number",
        "float": "a number",
        "bool": "on or off",
        "size": "a size such as 64M",
        "text": "text",
    }
    range_words = " ".join(filter(None, limits))
    return ", ".join(filter(None, [words.get(param.kind, param.kind), range_words]))


def _limit(param: Param, value, word: str) -> str:
    if value is None:
        return ""
    return f"{word} {_size_text(int(value)) if param.kind == 'size' else f'{value:g}'}"


def _size_text(size: int) -> str:
    """A byte count the way the size fields take it: 64M, 4K, 512."""
    for suffix, factor in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def param_field_name(benchmark: Benchmark, param: Param) -> str:
    return f"p-{benchmark.name}-{param.name}"


def use_field_name(benchmark: Benchmark) -> str:
    return f"use-{benchmark.name}"


def vary_field_name(benchmark: Benchmark, param: Param) -> str:
    return f"vary-{benchmark.name}-{param.name}"


def varies(param: Param) -> bool:
    """Whether the builder offers other values of the parameter (each its own entry)."""
    return param.kind in VARIED_KINDS


def vary_field(param: Param) -> forms.Field:
    """Other values of a parameter to run too, separated by commas: each makes its own entry
    of the spec (specs.swept), e.g. both iperf3 directions, or four ciphers."""
    return forms.CharField(
        required=False,
        max_length=custom_rules.MAX_PARAM_LENGTH,
        label=f"{param.name}: also with",
        help_text="Other values, separated by commas: each runs as well.",
    )


def param_field(param: Param) -> forms.Field:
    """A form field for one parameter; Param.clean() does the checking, in clean()."""
    # Choices show in their widget; numbers and sizes say their range.
    shown = param.kind in ("int", "float", "size")
    help_text = "; ".join(filter(None, [param.help, allowed_values(param) if shown else ""]))
    common = {
        "required": False,
        "label": param.name,
        "help_text": help_text,
        "initial": param.default,
    }
    choices = [(choice, choice) for choice in param.choices]
    if param.kind == "bool":
        return forms.BooleanField(**common)
    if param.kind == "choice":
        return forms.ChoiceField(choices=choices, **common)
    if param.kind == "multichoice":
        return forms.MultipleChoiceField(
            choices=choices, widget=forms.CheckboxSelectMultiple, **common
        )
    if param.kind in ("int", "float"):
        attrs = {"step": "1" if param.kind == "int" else "any"}
        attrs.update(
            {
                key: f"{value:g}"
                for key, value in (("min", param.min), ("max", param.max))
                if value is not None
            }
        )
        return forms.CharField(widget=forms.NumberInput(attrs=attrs), **common)
    # Text goes to the command as it is written, spaces at its ends too (sizes are read).
    strip = param.kind != "text"
    return forms.CharField(max_length=custom_rules.MAX_PARAM_LENGTH, strip=strip, **common)


def _preset_choices() -> list[tuple[str, str]]:
    """ "As is", then the stock preset's versions (the baseline of firmware defaults), then
    the others by name."""
    versions = PresetVersion.objects.select_related("preset").order_by("preset__name", "-number")
    versions = sorted(versions, key=lambda version: version.preset.name != presets.STOCK.name)
    return [(specs.AS_IS, "as the board is (its state before the campaign)")] + [
        (f"{version.preset.name}@{version.number}", str(version)) for version in versions
    ]


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=120, validators=[validate_shown_name])
    boards = forms.ModelMultipleChoiceField(
        queryset=Board.objects.none(),
        to_field_name="name",
        widget=forms.CheckboxSelectMultiple,
        help_text="Boards in service whose host key is confirmed. Each one runs its part in "
        "parallel with the others.",
    )
    peer = forms.ChoiceField(
        required=False,
        help_text="The other end of network benchmarks; benchmarks without one ignore it.",
    )
    presets = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        initial=[specs.AS_IS],
        help_text="Each board runs every benchmark with each of these, in counterbalanced "
        "rounds (A B | B A | A B), applying a preset where the board's changes; afterwards it "
        "gets back its state before the campaign. Stock means the firmware's defaults.",
    )
    repetition_mode = forms.ChoiceField(
        label="Repetitions",
        choices=[("fixed", "a fixed count"), ("adaptive", "adaptive: until the CI is narrow")],
        initial="fixed",
        widget=forms.RadioSelect,
    )
    repetitions = forms.IntegerField(
        label="Count",
        required=False,
        min_value=1,
        max_value=specs.MAX_REPETITIONS,
        help_text="Empty: the benchmarks' own default (the largest of them).",
    )
    # Adaptive: empty fields take specs.check()'s defaults.
    repetitions_min = forms.IntegerField(label="at least", required=False, initial=3, min_value=2)
    repetitions_max = forms.IntegerField(label="at most", required=False, initial=10, min_value=2)
    target_pct = forms.FloatField(
        label="until the 95 % CI is within ± this % of the mean",
        required=False,
        initial=2.0,
        min_value=0.1,
    )
    resolve_pct = forms.FloatField(
        label="or until a change of this % can be seen at the noise",
        required=False,
        min_value=0.1,
        max_value=100,
        help_text="Adds trials until a group has the number a change of this size needs at "
        "its relative SD (Welch at 0.05, 80 % of the time). Empty: the CI alone decides.",
    )
    budget_s = forms.FloatField(
        label="time budget (s)",
        required=False,
        min_value=1,
        help_text="Stop adding repetitions after this long, narrow or not. Empty: no budget.",
    )
    order = forms.ChoiceField(
        choices=Campaign.Order.choices, initial=Campaign.Order.GROUPED, widget=forms.RadioSelect
    )
    quiet = forms.BooleanField(
        label="Wait for a quiet board before each trial", required=False, initial=True
    )
    # Empty quiet fields take the defaults of specs.DEFAULT_QUIET.
    quiet_load_below = forms.FloatField(
        label="load average below",
        required=False,
        min_value=0,
        initial=specs.DEFAULT_QUIET["load_below"],
    )
    quiet_cpu_below_pct = forms.FloatField(
        label="CPU use below (%)",
        required=False,
        min_value=0,
        initial=specs.DEFAULT_QUIET["cpu_below_pct"],
    )
    quiet_cool_below_c = forms.FloatField(
        label="SoC cooler than (°C)", required=False, min_value=0, help_text="Empty: any."
    )
    quiet_deadline_s = forms.FloatField(
        label="wait at most (s)",
        required=False,
        min_value=0,
        initial=specs.DEFAULT_QUIET["deadline_s"],
        help_text="After this the trial starts anyway; the run records that it was not quiet.",
    )
    rerun_suspect = forms.BooleanField(label="Re-run a suspect trial once", required=False)
    as_given = forms.BooleanField(
        label="Run short trials as given",
        required=False,
        help_text="By default a trial shorter than its benchmark's minimum (a few seconds) is "
        "lengthened, so that it repeats well. Either way a trial under the benchmark's noise "
        "floor is suspect.",
    )
    apply_mode = forms.ChoiceField(
        choices=Application.Mode.choices, initial=Application.Mode.TRIAL, widget=forms.RadioSelect
    )
    repeat = forms.ChoiceField(
        label="Start it",
        choices=[
            ("", "once, now"),
            ("every", "again and again, at an interval"),
            ("cron", "again and again, on a cron schedule"),
        ],
        required=False,
        initial="",
        widget=forms.RadioSelect,
        help_text="A schedule starts a new campaign each time; a start that finds the last one "
        "still running is skipped, saying so.",
    )
    repeat_every = forms.CharField(
        label="every", required=False, max_length=20, help_text='e.g. "90s", "15m", "6h", "1d"'
    )
    repeat_cron = forms.CharField(
        label="cron", required=False, max_length=120, help_text='five fields, e.g. "0 3 * * *"'
    )
    # Drawn when the form is drawn: the same form posted twice is the same spec, which the
    # view starts once (see campaigns.start_once).
    seed = forms.IntegerField(
        widget=forms.HiddenInput, required=False, min_value=0, max_value=SEED_LIMIT
    )
    # The template (benchmarks.questions) the form was filled from: its answer page reads it.
    question = forms.ChoiceField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, question: questions.Question | None = None, **kwargs):
        if question is not None:
            kwargs["initial"] = question_initial(question)
        super().__init__(*args, **kwargs)
        self.chosen_question = question  # its sentence and hint head the page
        self.fields["question"].choices = [("", ""), *((key, key) for key in questions.QUESTIONS)]
        boards = Board.objects.in_service().exclude(host_key="").order_by("name")
        self.fields["boards"].queryset = boards
        self.fields["peer"].choices = [("", "none"), (CONTROLLER, "the controller (this server)")]
        self.fields["peer"].choices += [(board.name, board.name) for board in boards]
        self.fields["presets"].choices = _preset_choices()
        self.fields["seed"].initial = random.SystemRandom().randrange(1, SEED_LIMIT)
        usable, self.unusable_benchmarks = custom.defined()
        self.benchmarks = [*catalog.BUILT_IN.values(), *usable]
        for benchmark in self.benchmarks:
            self.fields[use_field_name(benchmark)] = forms.BooleanField(
                label=benchmark.title, required=False
            )
            for param in benchmark.params:
                self.fields[param_field_name(benchmark, param)] = param_field(param)
                if varies(param):
                    self.fields[vary_field_name(benchmark, param)] = vary_field(param)
        self.spec: dict | None = None  # what the builder hands to campaigns.start()
        self.checked: specs.Checked | None = None

    def benchmark_groups(self):
        """(benchmark, its "include" box, its parameter fields each with its "also with" field
        or None), for the template."""
        return [
            (
                benchmark,
                self[use_field_name(benchmark)],
                [
                    (
                        self[param_field_name(benchmark, param)],
                        self[vary_field_name(benchmark, param)] if varies(param) else None,
                    )
                    for param in benchmark.params
                ],
            )
            for benchmark in self.benchmarks
        ]

    def clean(self):
        cleaned = super().clean()
        self._forget_unchosen_fields()
        items = self._items(cleaned)
        if self.errors:
            return cleaned
        spec = {
            "name": cleaned["name"],
            "boards": [board.name for board in cleaned["boards"]],
            "presets": cleaned["presets"],
            "benchmarks": items,
            "repetitions": self._repetitions(cleaned),
            "peer": cleaned.get("peer") or None,
            "order": cleaned["order"],
            "quiet": self._quiet(cleaned),
            "rerun_suspect": cleaned["rerun_suspect"],
            "apply_mode": cleaned["apply_mode"],
        }
        if cleaned.get("as_given"):
            spec["min_trial_s"] = 0
        if cleaned.get("seed") is not None:
            spec["seed"] = cleaned["seed"]
        if cleaned.get("question"):
            spec["question"] = cleaned["question"]
        self.spec = spec
        try:
            self.checked = specs.check(spec)
        except specs.SpecError as exc:
            raise forms.ValidationError(str(exc)) from None
        self._schedule(cleaned)
        return cleaned

    def _schedule(self, cleaned) -> None:
        """The spec's "schedule", as a spec file gives it, from the When fields."""
        kind = cleaned.get("repeat")
        if not kind:
            return
        field = f"repeat_{kind}"
        value = (cleaned.get(field) or "").strip()
        if not value:
            self.add_error(field, "Say when it repeats.")
            return
        try:
            schedules.check_timing({kind: value})
        except specs.SpecError as exc:
            self.add_error(field, str(exc))
            return
        self.spec["schedule"] = {kind: value}

    def _forget_unchosen_fields(self) -> None:
        """The parameter fields of a benchmark not chosen are not read: what they hold (the
        browser posts every prefilled value) must not refuse the form."""
        for benchmark in self.benchmarks:
            if not self.cleaned_data.get(use_field_name(benchmark)):
                for param in benchmark.params:
                    self.errors.pop(param_field_name(benchmark, param), None)
                    self.errors.pop(vary_field_name(benchmark, param), None)

    def _items(self, cleaned) -> list[dict]:
        items = []
        for benchmark in self.benchmarks:
            if not cleaned.get(use_field_name(benchmark)):
                continue
            params, vary = {}, {}
            for param in benchmark.params:
                field = param_field_name(benchmark, param)
                raw = cleaned.get(field)
                try:
                    params[param.name] = param.clean(
                        None if raw == "" and param.kind != "text" else raw
                    )
                except ParamError as exc:
                    self.add_error(field, str(exc))
                if varies(param):
                    vary[param.name] = self._other_values(benchmark, param, cleaned)
            try:
                items += specs.swept(benchmark, params, vary, listed=len(items))
            except specs.SpecError as exc:
                self.add_error(None, str(exc))
                return items
        if not items:
            self.add_error(None, "Choose at least one benchmark.")
        return items

    def _other_values(self, benchmark: Benchmark, param: Param, cleaned) -> list:
        """The values of its "also with" field, each checked by the parameter."""
        field = vary_field_name(benchmark, param)
        words = [word.strip() for word in (cleaned.get(field) or "").split(VALUE_SEPARATOR)]
        try:
            return [param.clean(word) for word in words if word]
        except ParamError as exc:
            self.add_error(field, str(exc))
            return []

    @staticmethod
    def _repetitions(cleaned):
        if cleaned["repetition_mode"] == "fixed":
            return cleaned.get("repetitions")
        fields = {
            "min": "repetitions_min",
            "max": "repetitions_max",
            "target_pct": "target_pct",
            "resolve_pct": "resolve_pct",
            "budget_s": "budget_s",
        }
        given = {key: cleaned.get(field) for key, field in fields.items()}
        return {key: value for key, value in given.items() if value is not None}

    @staticmethod
    def _quiet(cleaned):
        if not cleaned["quiet"]:
            return False
        given = {key: cleaned.get(f"quiet_{key}") for key in specs.DEFAULT_QUIET}
        # An empty "cooler than" means no limit, which None says; others fall to the defaults.
        return {k: v for k, v in given.items() if v is not None or k == "cool_below_c"}

    @property
    def trials(self) -> tuple[int, int]:
        """The fewest and the most trials the checked spec can run (adaptive: a range)."""
        checked = self.checked
        per_repetition = len(checked.boards) * len(checked.versions) * len(checked.items)
        repetitions = checked.repetitions
        return per_repetition * repetitions.minimum, per_repetition * repetitions.maximum


def question_initial(question: questions.Question) -> dict:
    """The builder's fields as the question's template fills them (boards are left to pick)."""
    spec = question.spec(boards=[])
    initial = {
        "name": spec["name"],
        "question": question.key,
        "presets": spec["presets"],
        "peer": spec["peer"],
        "repetition_mode": "fixed",
        "repetitions": spec["repetitions"],
        "order": spec["order"],
    }
    for sweep in question.sweeps:
        benchmark = catalog.lookup(sweep.benchmark)
        initial[use_field_name(benchmark)] = True
        for param in benchmark.params:
            if param.name in sweep.params:
                initial[param_field_name(benchmark, param)] = sweep.params[param.name]
        for name, values in sweep.vary.items():
            param = next(param for param in benchmark.params if param.name == name)
            first = sweep.params.get(name, values[0])
            initial[param_field_name(benchmark, param)] = first
            others = [str(value) for value in values if value != first]
            initial[vary_field_name(benchmark, param)] = f"{VALUE_SEPARATOR} ".join(others)
    return initial


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["name", "sees_addresses"]
        labels = {"sees_addresses": "May see board addresses"}
