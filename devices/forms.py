from django import forms
from django.conf import settings

from devices import ssh
from devices.models import Board


class SecretTextarea(forms.Textarea):
    """A textarea that never sends its value back to the browser (private keys)."""

    def format_value(self, value):
        return None


def served_queue(queue: str) -> str:
    """A queue some worker serves (PIFARM_QUEUES); work on any other would never run."""
    if queue not in settings.RQ_QUEUE_NAMES:
        known = ", ".join(settings.RQ_QUEUE_NAMES)
        raise forms.ValidationError(f"No worker queue is named {queue!r}; known: {known}.")
    return queue


class BoardAdminForm(forms.ModelForm):
    """The admin's board form: the same check of the queue as the pages."""

    def clean_queue(self):
        return served_queue(self.cleaned_data["queue"])


class BoardForm(forms.ModelForm):
    """Register a board, or (with keep_credential_if_blank) change how pifarm reaches it."""

    auth_method = forms.ChoiceField(
        choices=Board.AuthMethod.choices, initial=Board.AuthMethod.KEY, widget=forms.RadioSelect
    )
    private_key = forms.CharField(
        required=False,
        strip=False,
        widget=SecretTextarea(attrs={"rows": 6, "autocomplete": "off", "spellcheck": "false"}),
        help_text="An unencrypted OpenSSH private key (Ed25519, ECDSA or RSA). "
        "Stored encrypted; never shown again.",
    )
    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted; never shown again.",
    )

    class Meta:
        model = Board
        fields = ["name", "host", "port", "username", "tags", "queue"]

    def __init__(self, *args, keep_credential_if_blank=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.keep_credential_if_blank = keep_credential_if_blank
        if self.instance.pk:
            self.initial.setdefault("auth_method", self.instance.auth_method)
        if keep_credential_if_blank:
            for name in ("private_key", "password"):
                self.fields[name].help_text = "Leave empty to keep the stored one."

    def clean_queue(self):
        return served_queue(self.cleaned_data["queue"])

    def clean(self):
        cleaned = super().clean()
        method = cleaned.get("auth_method")
        field = "private_key" if method == Board.AuthMethod.KEY else "password"
        secret = cleaned.get(field) or ""
        if method == Board.AuthMethod.KEY:
            secret = secret.strip() + "\n" if secret.strip() else ""
        keeping = (
            not secret and self.keep_credential_if_blank and method == self.instance.auth_method
        )
        if keeping:
            cleaned["secret"] = None
        elif not secret:
            self.add_error(field, _MISSING[field])
        elif method == Board.AuthMethod.KEY:
            try:
                ssh.parse_private_key(secret)
            except ssh.SSHError as exc:
                self.add_error(field, str(exc))
        cleaned["secret"] = secret or None
        if self.errors and self.data.get(self.add_prefix("private_key"), "").strip():
            # The key is never sent back to the browser, so say why the box is empty.
            self.add_error(
                None, "Nothing was saved. For safety the private key was not kept: paste it again."
            )
        return cleaned

    def save(self, commit=True):
        board = super().save(commit=False)
        if self.cleaned_data["secret"] is not None:
            board.set_credential(self.cleaned_data["auth_method"], self.cleaned_data["secret"])
        if commit:
            board.save()
        return board

    @property
    def connection_changed(self) -> bool:
        """A new address means a new host key to confirm."""
        return bool({"host", "port"} & set(self.changed_data))


_MISSING = {
    "private_key": "Paste the private key pifarm should log in with.",
    "password": "Enter the password of this user on the board.",
}
