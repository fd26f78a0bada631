"""What the ids of a comparison's runs stand for: each group's name, its environment (the
boards' models, kernels, OS, firmware, preset versions) and what ran board by board, read once
per comparison with one small query each (benchmarks.comparisons)."""

import json
from collections import defaultdict

from benchmarks import effective
from benchmarks.models import Campaign, Run
from benchmarks.results import value_text
from devices.models import Board, FactSnapshot, PresetVersion

AS_IS = "as the board is"
UNKNOWN = "unknown"
# A probe's facts that a group's environment shows, and their columns.
FACTS = {
    "board model": "model", "kernel": "facts__kernel_release", "kernel bits": "kernel_bits",
    "userland bits": "userland_bits", "OS": "os_name",
    "firmware": "facts__firmware_version__version", "governor": "facts__governor",
}  # fmt: skip
# Read with the facts above, shown as the page's note on simulated boards, not as a fact.
SIMULATED = "facts__simulated"


def json_value(raw):
    """A JSON key's value as a raw row holds it, decoded as Django decodes it. SQLite's
    json_extract gives a number or a string as such, but true, false and null as those words
    (Django asks for them so) and a list as its JSON text; PostgreSQL gives every value as
    JSON text (Django has psycopg load jsonb as text): '"AES-256-CBC"', '1500'."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:  # SQLite's string as such: "AES-256-CBC"
        return raw


class GroupNames:
    """What the runs' ids stand for (their boards, probes, preset versions, campaigns), read
    once per comparison with a query each, and so each group's name and environment."""

    def __init__(self, group_by: str, board_ids: set, shared: list[tuple], first_runs=None):
        """shared: compare()'s distinct rows of key, suspect, and the ids of the run's probe,
        preset version and campaign, its tool version, board and configuration's fingerprint;
        first_runs: a run of each configuration's fingerprint, which tells what that was."""
        self.group_by = group_by
        states = configurations(first_runs) if first_runs else {}
        self.ran = {fp: effective.words(state) for fp, state in states.items()}
        self.short = {fp: effective.short(state, fp) for fp, state in states.items()}
        snapshot_ids, version_ids, campaign_ids = (
            {row[column] for row in shared} for column in range(2, 5)
        )
        boards = Board.objects.filter(pk__in=board_ids).order_by("name")
        self.boards = dict(boards.values_list("pk", "name"))  # by name: the spread's order
        probes = FactSnapshot.objects.filter(pk__in=snapshot_ids).values_list(
            "pk", SIMULATED, *FACTS.values()
        )
        self.facts = {row[0]: dict(zip(FACTS, row[2:], strict=True)) for row in probes}
        self.simulated = any(bool(json_value(row[1])) for row in probes)
        versions = PresetVersion.objects.filter(pk__in=version_ids).order_by()
        rows = versions.values_list("pk", "preset__name", "number")
        self.versions = {pk: f"{name} v{number}" for pk, name, number in rows}
        self.campaigns = {}
        if group_by == "campaign":
            campaigns = Campaign.objects.filter(pk__in=campaign_ids).order_by()
            self.campaigns = dict(campaigns.values_list("pk", "name"))
        self._labels = {}  # tens of thousands of rows share a few keys

    def label(self, key) -> str:
        """A group's name, from the key column's value: on the page, in the CSV, as a saved
        comparison's baseline."""
        if (found := self._labels.get(key)) is None:
            found = self._labels[key] = self._name(key)
        return found

    def _name(self, key) -> str:
        by = self.group_by
        if by == "preset":
            return self.versions.get(key, AS_IS)
        if by == "board":
            return self.boards.get(key, UNKNOWN)
        if by == "campaign":
            return self.campaigns.get(key, UNKNOWN)
        if by == "configuration":
            return self.short.get(key) or "not recorded (a run of an older pifarm)"
        facts = self.facts.get(key, {})
        if by == "userland":
            bits = facts.get("userland bits")
            return f"{bits}-bit userland" if bits else UNKNOWN
        if by == "bits":
            kernel, userland = (
                f"{facts[name]}-bit" if facts.get(name) else UNKNOWN
                for name in ("kernel bits", "userland bits")
            )
            return f"{kernel} kernel, {userland} userland"
        value = facts.get("board model") if by == "board_model" else json_value(key)
        if value is None or value == "":
            return UNKNOWN
        return value_text(value)

    def board_names(self, board_ids) -> list[str]:
        """Each id's board name (a board deleted since keeps its id, as words)."""
        return [self.boards.get(pk) or f"board {pk}" for pk in board_ids]

    def environment(self, snapshot_ids, version_ids) -> dict[str, str]:
        """The boards' models, kernels, OS... (the probes the runs were made with) in words."""
        known = [self.facts[pk] for pk in snapshot_ids if pk in self.facts]
        words = {name: joined(facts[name] for facts in known) for name in FACTS}
        labels = [self.versions.get(pk, AS_IS) for pk in version_ids]
        return words | {"preset version": joined(labels)}

    def what_ran(self, ran: set[tuple]) -> str:
        """Each board's configuration(s) in words (benchmarks.effective), board by board."""
        by_board = defaultdict(set)
        for board, fingerprint in ran:
            by_board[self.boards.get(board) or f"board {board}"].add(fingerprint or "")
        lines = []
        for board in sorted(by_board):
            words = sorted(
                self.ran.get(fp) or "not recorded (a run of an older pifarm)"
                for fp in by_board[board]
            )
            if len(words) == 1:
                lines.append(f"{board}: {words[0]}")
            else:
                lines.append(f"{board}: {len(words)} configurations: " + " / ".join(words))
        return "; ".join(lines) or UNKNOWN

    def mixed(self, ran: set[tuple]) -> list[str]:
        by_board = defaultdict(set)
        for board, fingerprint in ran:
            by_board[board].add(fingerprint or "")
        return sorted(
            self.boards.get(board) or f"board {board}"
            for board, found in by_board.items()
            if len(found) > 1
        )

    def stratum(self, snapshot_id, version_id) -> str:
        """What an overview pairs like with like by, in words: "on <model>, <preset>", but for
        the factor grouped by."""
        model = (self.facts.get(snapshot_id) or {}).get("board model") or UNKNOWN
        words = [] if self.group_by in ("board_model", "board") else [f"on {model}"]
        if self.group_by != "preset":
            words.append(self.versions.get(version_id, AS_IS))
        return ", ".join(words)


def configurations(first_runs: dict[str, int]) -> dict[str, dict]:
    """Each fingerprint's effective state (benchmarks.effective), from the run given for it
    (one query)."""
    wanted = [run for fingerprint, run in first_runs.items() if fingerprint]
    found = Run.objects.filter(pk__in=wanted).values_list(
        "config_fingerprint", "environment__effective"
    )
    states = {}
    for fingerprint, state in found:
        state = json_value(state)
        states[fingerprint] = state if isinstance(state, dict) else {}
    return states


def joined(values) -> str:
    """Distinct values, sorted, joined: "6.6.31-v8+; 6.6.51-v8+"; "unknown" for none."""
    seen = sorted({str(value) for value in values if value not in (None, "")})
    return "; ".join(seen) or UNKNOWN
