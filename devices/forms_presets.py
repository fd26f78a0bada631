"""Forms for presets: content as config.txt lines, checked against the firmware's rules."""

from django import forms

from devices import configtxt, presets
from devices.configtxt.rules import FAMILY_NAMES
from devices.configtxt.validation import MAX_BYTES
from devices.models import Application, Board, Preset, PresetVersion

# Findings listed per family; the rest are counted. A file of errors needs its first ones fixed.
SHOWN_FINDINGS = 20

# raspberry-pi.yaml: overclocking.options (the family keys of its defaults tables)
FAMILY_CHOICES = list(FAMILY_NAMES.items())


def _acknowledgement(name: str, **options) -> forms.BooleanField:
    """A version's acknowledgement, in the words the version keeps it with."""
    sentence = PresetVersion._meta.get_field(name).help_text.removesuffix(".")
    return forms.BooleanField(required=False, label=sentence, **options)


class PresetForm(forms.ModelForm):
    """A preset and the content of its next version. "Check" shows findings; "save" saves
    unless a finding is an error."""

    families = forms.MultipleChoiceField(
        choices=FAMILY_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        help_text="The boards it is meant for; the lines are checked for each.",
    )
    options = forms.CharField(
        label="config.txt lines",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "mono"}),
        help_text="One option=value a line, as in config.txt, e.g. arm_freq=900.",
    )
    governor = forms.ChoiceField(
        choices=[("", "leave as it is"), *PresetVersion.Governor.choices], required=False
    )
    acknowledge_warranty = _acknowledgement("acknowledge_warranty")
    acknowledge_boot = _acknowledgement(
        "acknowledge_boot", help_text="Only staff users are offered this."
    )
    note = forms.CharField(max_length=300, required=False, help_text="What changed, and why.")

    class Meta:
        model = Preset
        fields = ["name", "description", "families"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, staff: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.findings: list[tuple[str, configtxt.Finding]] = []
        self.more_findings: list[tuple[str, int]] = []  # (family, findings not listed)
        if not staff:
            del self.fields["acknowledge_boot"]
        latest = self.instance.latest if self.instance.pk else None
        if latest is not None:
            self.initial.setdefault("options", configtxt.shown_settings_text(latest.options))
            self.initial.setdefault("governor", latest.governor)
            self.initial.setdefault("acknowledge_warranty", latest.acknowledge_warranty)
            self.initial.setdefault("acknowledge_boot", latest.acknowledge_boot)

    @property
    def wants_save(self) -> bool:
        return self.data.get("action", "save") == "save"

    def clean_options(self):
        """Refused before it is read: checking costs time with every line."""
        text = self.cleaned_data["options"]
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_BYTES:
            raise forms.ValidationError(
                f"These lines are {size:,} bytes; a preset holds at most {MAX_BYTES // 1024} KiB "
                "(a whole config.txt is a few KiB). Nothing was checked."
            )
        return text

    def clean(self):
        cleaned = super().clean()
        text = cleaned.get("options")
        families = cleaned.get("families") or []
        if not text or not families:
            return cleaned
        try:
            cleaned["parsed_options"] = configtxt.preset_options(text)
        except ValueError as exc:
            self.add_error("options", str(exc))
            return cleaned
        found = presets.findings_for(
            text,
            families,
            cleaned.get("acknowledge_warranty", False),
            cleaned.get("acknowledge_boot", False),
        )
        self._keep_first(found)
        if any(finding.severity == "error" for _, finding in found):
            self.add_error(None, "Fix the errors below to save; warnings don't stop you.")
        return cleaned

    def _keep_first(self, found: list[tuple[str, configtxt.Finding]]) -> None:
        """The first SHOWN_FINDINGS of each family, in order; the rest only counted."""
        per_family: dict[str, int] = {}
        for family, finding in found:
            per_family[family] = per_family.get(family, 0) + 1
            if per_family[family] <= SHOWN_FINDINGS:
                self.findings.append((family, finding))
        self.more_findings = [
            (family, count - SHOWN_FINDINGS)
            for family, count in per_family.items()
            if count > SHOWN_FINDINGS
        ]

    def version_fields(self) -> dict:
        data = self.cleaned_data
        return {
            "options": data["parsed_options"],
            "governor": data.get("governor", ""),
            "acknowledge_warranty": data.get("acknowledge_warranty", False),
            "acknowledge_boot": data.get("acknowledge_boot", False),
            "note": data.get("note", ""),
        }


class PresetAdminForm(PresetForm):
    """In the admin the form always saves; errors still block it. Only staff reach the
    admin, so the boot acknowledgment is offered."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, staff=True, **kwargs)

    def clean(self):
        """The admin has no findings list: the errors go under the lines."""
        cleaned = super().clean()
        for family, finding in self.findings:
            if finding.severity == "error":
                where = f"line {finding.line}" if finding.line else "preset"
                self.add_error("options", f"{FAMILY_NAMES[family]}, {where}: {finding.message}")
        for family, count in self.more_findings:
            self.add_error("options", f"{FAMILY_NAMES[family]}: and {count:,} more findings")
        return cleaned

    @property
    def wants_save(self) -> bool:
        return True


class ApplyForm(forms.Form):
    # Boards a person must look at first (needs attention, maintenance) are not offered, nor
    # retired ones.
    boards = forms.ModelMultipleChoiceField(
        queryset=Board.objects.in_service()
        .exclude(host_key="")
        .exclude(status__in=[Board.Status.NEEDS_ATTENTION, Board.Status.MAINTENANCE])
        .order_by("name"),
        widget=forms.CheckboxSelectMultiple,
    )
    mode = forms.ChoiceField(
        choices=Application.Mode.choices,
        initial=Application.Mode.TRIAL,
        widget=forms.RadioSelect,
        help_text="A trial boot falls back to the old config.txt by itself if the board "
        "does not come up.",
    )

    def __init__(self, *args, version: PresetVersion, **kwargs):
        super().__init__(*args, **kwargs)
        self.version = version


class RestoreStockForm(forms.Form):
    """Restore stock on one board: the stock version, applied in the mode chosen."""

    mode = forms.ChoiceField(
        choices=Application.Mode.choices,
        initial=Application.Mode.TRIAL,
        required=False,  # a bare button takes the safe way
        widget=forms.RadioSelect,
        help_text=ApplyForm.base_fields["mode"].help_text,
    )

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or Application.Mode.TRIAL
