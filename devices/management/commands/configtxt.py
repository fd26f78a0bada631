"""config.txt checks for files kept in git or on SD cards, without a database or a board."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from devices import configtxt

# Far above any real config.txt (validate flags anything over 64 KiB); stops a wrong path to
# a disk image from being read into memory whole.
MAX_READ = 1024 * 1024
# Findings printed; the rest are counted (a flood of bad lines needs its first ones fixed).
SHOWN_FINDINGS = 100
# The summary says which rules a file was held to: the same file passes as a board's own and
# fails as a preset (kernel=, [pi4], include), and a person must know which was asked.
RULES_APPLIED = {
    "preset": "checked as a preset (option=value lines only, boot options {boot}, "
    "underclocks warned): what the preset form checks",
    "board": "checked as a board's whole config.txt (filters, include and boot options "
    "allowed): what the firmware reads",
}


class Command(BaseCommand):
    # Checking a file needs neither the database nor the URL conf, whose imports (the API,
    # the statistics) would cost more than the check itself.
    requires_system_checks = []
    help = (
        "validate FILE --board MODEL [--as preset|board]: one finding a line as "
        "'LINE: error|warning: message', exit status 1 when there is an error. "
        "diff A B: a unified diff of two files."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        check = actions.add_parser("validate", help="check a config.txt for a board")
        check.add_argument("file", help="the config.txt to check ('-' reads standard input)")
        check.add_argument(
            "--board",
            required=True,
            help="a family (pi0, pi02, pi1, pi2, pi3, pi3p, pi4, pi4_r14, pi400, pi5) "
            "or a revision code such as c03114",
        )
        check.add_argument(
            "--as",
            dest="role",
            choices=sorted(RULES_APPLIED),
            default="preset",
            help="preset (the default): the lines of a preset, held to the preset form's rules; "
            "board: a board's whole config.txt ([filters], include and kernel= allowed)",
        )
        check.add_argument(
            "--acknowledge-boot",
            action="store_true",
            help="with --as preset: accept options that decide what boots (warn, do not fail)",
        )
        check.add_argument(
            "--acknowledge-warranty",
            action="store_true",
            help="accept settings that set the permanent warranty bit (warn, do not fail)",
        )
        compare = actions.add_parser("diff", help="compare two config.txt files")
        compare.add_argument("a")
        compare.add_argument("b")
        compare.add_argument("--side-by-side", action="store_true", help="two columns")

    def handle(self, *args, **opts):
        if opts["action"] == "validate":
            acknowledged = opts["acknowledge_warranty"], opts["acknowledge_boot"]
            self._validate(opts["file"], opts["board"], opts["role"], *acknowledged)
        else:
            self._diff(opts["a"], opts["b"], opts["side_by_side"])

    def _validate(
        self, path: str, board: str, role: str, warranty_acknowledged: bool, boot_acknowledged: bool
    ) -> None:
        try:
            context = configtxt.board_context(board)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if boot_acknowledged and role != "preset":
            raise CommandError("--acknowledge-boot is for --as preset: a board's file may boot")
        data = _read(path)
        if role == "preset":
            findings = configtxt.validate_preset_text(
                data, context, warranty_acknowledged, boot_acknowledged
            )
        else:
            findings = configtxt.validate(data, context, warranty_acknowledged)
        for finding in findings[:SHOWN_FINDINGS]:
            self.stdout.write(str(finding))
        if len(findings) > SHOWN_FINDINGS:
            self.stdout.write(f"... and {len(findings) - SHOWN_FINDINGS:,} more")
        errors = sum(finding.severity == "error" for finding in findings)
        summary = (
            f"{errors} error(s), {len(findings) - errors} warning(s) for {context.description}, "
            + RULES_APPLIED[role].format(boot="acknowledged" if boot_acknowledged else "refused")
        )
        if errors:
            raise CommandError(summary, returncode=1)
        self.stderr.write(summary)

    def _diff(self, a: str, b: str, side_by_side: bool) -> None:
        left, right = _read(a), _read(b)
        if not side_by_side:
            self.stdout.write(configtxt.unified_diff(left, right, a, b), ending="")
            return
        rows = configtxt.side_by_side(left, right)
        width = max([len(row.left or "") for row in rows] + [10])
        marks = {"same": " ", "changed": "|", "added": ">", "removed": "<"}
        for row in rows:
            left_text = f"{row.left_no or '':>4} {row.left or ''}"
            right_text = f"{row.right_no or '':>4} {row.right or ''}"
            self.stdout.write(f"{left_text:<{width + 5}} {marks[row.kind]} {right_text}".rstrip())


def _read(path: str) -> bytes:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_READ + 1)
        else:
            with Path(path).open("rb") as file:
                data = file.read(MAX_READ + 1)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_READ:
        raise CommandError(f"{path} is over 1 MiB: not a config.txt")
    return data
