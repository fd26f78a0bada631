from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from devices import remote, ssh, tasks
from devices.models import Board, BoardTask


class Command(BaseCommand):
    help = (
        "Register a board from the command line. The host key is fetched and pinned only if "
        "its fingerprint equals --fingerprint (as `ssh-keygen -lf` prints it on the board)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("host")
        parser.add_argument("--port", type=int, default=22)
        parser.add_argument("--user", default="pi")
        parser.add_argument("--key-file", type=Path, help="private key to log in with")
        parser.add_argument("--password-file", type=Path, help="file holding the password")
        parser.add_argument(
            "--fingerprint", required=True, help="expected SHA256:... of the host key"
        )
        parser.add_argument("--tags", default="")
        parser.add_argument("--queue", default="default")
        parser.add_argument(
            "--no-probe",
            action="store_true",
            help="do not queue a probe (the host key is still fetched, to check --fingerprint)",
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="update the board of that name (new address, key or credential), keeping history",
        )

    def handle(self, *args, **opts):
        kind, secret = self._credential(opts["key_file"], opts["password_file"])
        board = None
        if opts["replace"]:
            board = Board.objects.in_service().filter(name=opts["name"]).first()
        board = board or Board(name=opts["name"])
        board.host, board.port, board.username = opts["host"], opts["port"], opts["user"]
        board.tags, board.queue = opts["tags"], opts["queue"]
        board.set_credential(kind, secret)
        # Validate before connecting: a host such as "-oProxyCommand=..." never reaches a socket.
        self._validate(board, exclude=["host_key"])
        offered = self._fetch_key(board.host, board.port)
        if ssh.fingerprint(offered) != opts["fingerprint"]:
            raise CommandError(
                f"{board.host} offered {ssh.fingerprint(offered)}, not {opts['fingerprint']}; "
                "nothing was registered"
            )
        board.host_key = offered
        with transaction.atomic():
            board.save()
            if not opts["no_probe"]:
                tasks.start(board, BoardTask.Kind.PROBE)
        self.stdout.write(f"registered {board.name} ({ssh.fingerprint(offered)})")

    def _validate(self, board: Board, exclude: list[str]) -> None:
        try:
            board.full_clean(exclude=exclude)
        except ValidationError as exc:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            raise CommandError(problems) from None
        if board.queue not in settings.RQ_QUEUE_NAMES:
            raise CommandError(f"no worker queue is named {board.queue!r}")

    def _credential(self, key_file, password_file):
        if bool(key_file) == bool(password_file):
            raise CommandError("give exactly one of --key-file and --password-file")
        path = key_file or password_file
        try:
            text = path.read_text()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        if key_file:
            try:
                ssh.parse_private_key(text)
            except ssh.SSHError as exc:
                raise CommandError(str(exc)) from None
            return Board.AuthMethod.KEY, text
        return Board.AuthMethod.PASSWORD, text.rstrip("\n")

    def _fetch_key(self, host, port):
        try:
            return ssh.fetch_host_key(host, port, remote.timeouts())
        except ssh.SSHError as exc:
            raise CommandError(str(exc)) from None
