"""Make a pifarm user with one of its roles (see devices/roles.py)."""

import argparse
import getpass
import secrets
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from devices import roles

PROMPT_TRIES = 3


class Command(BaseCommand):
    help = (
        "Make a user with a role: viewer (reads everything), operator (also probes boards and "
        "applies presets) or admin (also manages boards, presets and users). The password comes "
        "from --password-file, or is asked for, or is generated and printed once (--no-input, "
        "or no terminal). It is never taken from the command line, which other users can see."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # Else "--password SECRET" would pass as an abbreviation of --password-file.
        return super().create_parser(prog_name, subcommand, allow_abbrev=False, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--role", required=True, choices=list(roles.ROLES))
        parser.add_argument("--email", default="")
        parser.add_argument("--password-file", type=Path, help="file holding the password")
        parser.add_argument(
            "--no-input",
            action="store_false",
            dest="interactive",
            help="generate the password instead of asking for it",
        )
        # Only to say why not, without repeating the password back.
        parser.add_argument("--password", help=argparse.SUPPRESS)

    def handle(self, *args, name, role, email, password_file, interactive, password, **options):
        if password is not None:
            raise CommandError(
                "a password on the command line is visible to every user of this machine; "
                "use --password-file or the prompt"
            )
        user = get_user_model()(username=name, email=email)
        _check(lambda: user.full_clean(exclude=["password"]))
        if password_file:
            password, generated = _read_password(password_file), False
            _check(lambda: validate_password(password, user))
        elif interactive and sys.stdin.isatty():
            password, generated = self._ask_password(user)
        else:
            password, generated = secrets.token_urlsafe(15), True
        with transaction.atomic():
            user.set_password(password)
            user.save()
            roles.assign(user, roles.ROLES[role])
        self.stdout.write(f"made {name}, {role} ({roles.ROLES[role].summary})")
        if generated:
            self.stdout.write(f"password, shown this once and kept only as a hash: {password}")

    def _ask_password(self, user) -> tuple[str, bool]:
        for _ in range(PROMPT_TRIES):
            password = getpass.getpass("Password (empty: generate one): ")
            if not password:
                return secrets.token_urlsafe(15), True
            if getpass.getpass("Password again: ") != password:
                self.stderr.write("The passwords differ.")
                continue
            try:
                validate_password(password, user)
            except ValidationError as exc:
                self.stderr.write(" ".join(exc.messages))
                continue
            return password, False
        raise CommandError("no password after 3 tries; nobody was made")


def _read_password(path: Path) -> str:
    try:
        return path.read_text().rstrip("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _check(validate) -> None:
    try:
        validate()
    except ValidationError as exc:
        raise CommandError(f"{' '.join(exc.messages)} Nobody was made.") from None
