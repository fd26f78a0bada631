from django import forms
from django.conf import settings

from devices import ssh
from devices.models import Board


class SecretTextarea(forms.Textarea):
    """A textarea that never sends its value back to the browser (private keys)."""

    def format_value(self, value):
        return None


class BoardForm(forms.ModelForm):
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

    def clean_queue(self):
        queue = self.cleaned_data["queue"]
        if queue not in settings.RQ_QUEUE_NAMES:
            known = ", ".join(settings.RQ_QUEUE_NAMES)
            raise forms.ValidationError(f"No worker queue is named {queue!r}; known: {known}.")
        return queue

    def clean(self):
        cleaned = super().clean()
        method = cleaned.get("auth_method")
        if method == Board.AuthMethod.KEY:
            key = (cleaned.get("private_key") or "").strip()
            if not key:
                self.add_error("private_key", "Paste the private key pifarm should log in with.")
            else:
                try:
                    ssh.parse_private_key(key + "\n")
                except ssh.SSHError as exc:
                    self.add_error("private_key", str(exc))
                cleaned["secret"] = key + "\n"
        elif method == Board.AuthMethod.PASSWORD:
            if not cleaned.get("password"):
                self.add_error("password", "Enter the password of this user on the board.")
            cleaned["secret"] = cleaned.get("password")
        return cleaned

    def save(self, commit=True):
        board = super().save(commit=False)
        board.set_credential(self.cleaned_data["auth_method"], self.cleaned_data["secret"])
        if commit:
            board.save()
        return board
