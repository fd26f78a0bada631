"""Forms for presets: content as config.txt lines, checked against the firmware's rules."""

from django import forms

from devices import configtxt
from devices.models import Application, Board, Preset, PresetVersion

# raspberry-pi.yaml: overclocking.options (the family keys of its defaults tables)
FAMILY_CHOICES = [
    ("pi0", "Zero / Zero W"),
    ("pi1", "Pi 1"),
    ("pi2", "Pi 2"),
    ("pi3", "Pi 3B"),
    ("pi3p", "Pi 3A+ / 3B+"),
    ("pi02", "Zero 2 W"),
    ("pi4", "Pi 4B up to rev 1.3, CM4"),
    ("pi4_r14", "Pi 4B rev 1.4"),
    ("pi400", "Pi 400"),
    ("pi5", "Pi 5"),
]


class PresetForm(forms.ModelForm):
    """A preset and the content of its next version. "Check" shows findings; "save" saves
    unless a finding is an error."""

    families = forms.MultipleChoiceField(
        choices=FAMILY_CHOICES, widget=forms.CheckboxSelectMultiple,
        help_text="The boards it is meant for; the lines are checked for each.",
    )  # fmt: skip
    options = forms.CharField(
        label="config.txt lines",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "mono"}),
        help_text="One option=value a line, as in config.txt, e.g. arm_freq=900.",
    )
    governor = forms.ChoiceField(
        choices=[("", "leave as it is"), *PresetVersion.Governor.choices], required=False
    )
    acknowledge_warranty = forms.BooleanField(
        required=False,
        label="I know these settings set the permanent warranty (overclock) bit",
    )
    note = forms.CharField(max_length=300, required=False, help_text="What changed, and why.")

    class Meta:
        model = Preset
        fields = ["name", "description", "families"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.findings: list[tuple[str, configtxt.Finding]] = []
        latest = self.instance.latest if self.instance.pk else None
        if latest is not None:
            self.initial.setdefault("options", configtxt.settings_text(latest.options))
            self.initial.setdefault("governor", latest.governor)
            self.initial.setdefault("acknowledge_warranty", latest.acknowledge_warranty)

    @property
    def wants_save(self) -> bool:
        return self.data.get("action", "save") == "save"

    def clean(self):
        cleaned = super().clean()
        text = cleaned.get("options")
        families = cleaned.get("families") or []
        if not text or not families:
            return cleaned
        acknowledged = cleaned.get("acknowledge_warranty", False)
        try:
            cleaned["parsed_options"] = configtxt.preset_options(text)
        except ValueError as exc:
            self.add_error("options", str(exc))
            return cleaned
        for family in families:
            for finding in configtxt.validate_preset_text(text, family, acknowledged):
                self.findings.append((family, finding))
        if any(finding.severity == "error" for _, finding in self.findings):
            self.add_error(None, "Fix the errors below to save; warnings don't stop you.")
        return cleaned

    def version_fields(self) -> dict:
        data = self.cleaned_data
        return {
            "options": data["parsed_options"],
            "governor": data.get("governor", ""),
            "acknowledge_warranty": data.get("acknowledge_warranty", False),
            "note": data.get("note", ""),
        }


class PresetAdminForm(PresetForm):
    """In the admin the form always saves; errors still block it."""

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
