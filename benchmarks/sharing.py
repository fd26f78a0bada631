"""Share links: a saved comparison as a read-only page for anyone with its URL.

Who may share: an operator or admin any comparison, anyone the ones they saved (a viewer reads
everything, but a share publishes beyond the login). What the page hides: it is built from
the same Result as the comparison's page, passed through Hider, which runs every text that
came from boards (group names, kernels, OS names, tool versions, campaign names) through the
API's Redactor, which hides IP addresses and every board's host, user@host, and the host name
and serial its latest probe found, and the boards' SSH user names alone; then replaces each
board's name with "board 1", "board 2"... (unless the link shows board names: then they are
shown as named, even a board named like its host).
"""

import dataclasses
import datetime
import re
from collections import Counter
from itertools import count

from django.utils import timezone

from benchmarks import comparisons, double_posts, retention
from benchmarks.api.redact import HIDDEN, NOT_A_PI_PRODUCT, Redactor
from benchmarks.models import Comparison, ShareLink
from devices.models import Board

PATH = "/s/"  # every shared comparison's URL begins with it (benchmarks.urls)
SHARE_PERMISSION = "benchmarks.add_sharelink"
EXPIRY_DAYS = (1, 7, 30)
# The furthest a chosen day may be, in years: a link for longer is one never to end (choose
# "never").
LONGEST_EXPIRY_YEARS = 5
WHEN = "%Y-%m-%d %H:%M %Z"  # with its time zone, as the page says when the link ends
# A group's environment that pifarm writes from numbers (no board's words): a board named "64"
# is not in its kernel's bits.
OUR_FIGURES = {"kernel bits", "userland bits", "measured Arm clock"}
# A unit after a number: the number is a figure, not a board named like it.
_UNIT = re.compile(r"\s?(?:[kKMGTP]i?B|[kMG]?Hz|[kMG]?bit|%|[mµn]?s)(?!\w)")


class Gone(Exception):
    """A link that was revoked or has expired: its page answers 410 with these words."""


def may_share(user, comparison: Comparison) -> bool:
    """Share it, and revoke its links: operators and admins, or the one who saved it."""
    if not user.is_authenticated:
        return False
    return user.has_perm(SHARE_PERMISSION) or comparison.owner_id == user.pk


def create(comparison: Comparison, user, expires=None, show_board_names=False) -> ShareLink:
    return ShareLink.objects.create(
        comparison=comparison, created_by=user, expires=expires, show_board_names=show_board_names
    )


def create_once(comparison: Comparison, user, expires=None, show_board_names=False):
    """(create(...), True), unless user made the same link of comparison within double_posts.WINDOW
    (a double click, a reload): then (that link, False), while it is live."""
    recent = comparison.shares.filter(
        created_by=user, revoked__isnull=True, show_board_names=show_board_names
    )
    return double_posts.made_once(
        user,
        recent,
        lambda found: found.live() and _ends_alike(found.expires, expires),
        lambda: create(comparison, user, expires, show_board_names),
    )


def _ends_alike(found, asked) -> bool:
    """Expiries of one choice: never, the end of the same day, or after as many days asked
    within double_posts.WINDOW of each other (different choices end a day or more apart)."""
    if found is None or asked is None:
        return found is asked
    return abs(asked - found) <= double_posts.WINDOW


def revoke(link: ShareLink) -> bool:
    """Revoke link; False if it was revoked already (a second click changes nothing)."""
    return bool(
        ShareLink.objects.filter(pk=link.pk, revoked__isnull=True).update(revoked=timezone.now())
    )


def expiry(days: int | None = None, on: datetime.date | None = None):
    """When a link made now ends: after `days`, or at the end of the day `on` (local time)."""
    if on is not None:
        midnight = datetime.datetime.combine(on + datetime.timedelta(days=1), datetime.time())
        return timezone.make_aware(midnight)
    return timezone.now() + datetime.timedelta(days=days) if days else None


def furthest_expiry(today: datetime.date) -> datetime.date:
    """The last day a link may be chosen to end on: the same day LONGEST_EXPIRY_YEARS on (a
    29 February's is the 28th), as a reader counts years; 5 x 365 days fell a day short."""
    year = today.year + LONGEST_EXPIRY_YEARS
    try:
        return today.replace(year=year)
    except ValueError:  # 29 February, in a year that has none
        return today.replace(year=year, day=28)


def newest_live(comparison: Comparison) -> ShareLink | None:
    now = timezone.now()
    return next((link for link in comparison.shares.all() if link.live(now)), None)


def live_link(token: str) -> ShareLink:
    """The link of token (ShareLink.DoesNotExist if none), Gone if it was revoked or expired."""
    link = ShareLink.objects.select_related("comparison").get(token=token)
    if link.revoked is not None:
        when = timezone.localtime(link.revoked).strftime(WHEN)
        raise Gone(f"This link was revoked on {when}: the comparison is no longer shared here.")
    if link.expired():
        when = timezone.localtime(link.expires).strftime(WHEN)
        raise Gone(f"This link expired on {when}: the comparison is no longer shared here.")
    if why := retention.gone_why(link.comparison):
        raise Gone(why)
    return link


def shown(link: ShareLink, result: comparisons.Result | None):
    """result as link's page shows it (None stays None), and the comparison's name as shown
    (its saver's words: they may name a host too)."""
    hider = Hider(result, link.show_board_names)
    return (None if result is None else hider.result(result)), hider.text(link.comparison.name)


class Hider:
    """What a share page shows of a comparison's result and of its name: the Redactor's text(),
    then each board's name, in any case, replaced by its alias: board 1, 2... for the boards
    of the result in the order of their names, then the lab's other boards (a comparison's
    name may name one), so stable for a page. result may be None (a comparison with no values
    any more): then the aliases are the lab's boards' in the order of their names."""

    def __init__(self, result: comparisons.Result | None, show_board_names: bool):
        self.redactor = Redactor(users_alone=True)
        names = [] if show_board_names else _board_names(result)
        self.aliases = {name: f"board {number}" for number, name in enumerate(names, 1)}
        self._by_lower = {}  # names in another case: "BENCH-A" is bench-a's alias too
        for name, alias in self.aliases.items():
            self._by_lower.setdefault(name.lower(), alias)
        # "board 42" is board 42's alias alone, not "board board 1".
        self.names = _words(self._by_lower, re.IGNORECASE, before=r"(?:board\s+)?")
        self._seen = {}

    def result(self, result: comparisons.Result) -> comparisons.Result:
        """result with every text hidden as text() hides it (the figures stay), each group
        under a name of its own: names that read the same once hidden are numbered."""
        text, keys = self.text, self._keys(result)
        groups = [
            dataclasses.replace(
                group,
                key=keys[group.key],
                boards={self.board(name): spread for name, spread in group.boards.items()},
                mixed=[self.board(name) for name in group.mixed],
                environment={
                    name: value if name in OUR_FIGURES else text(value)
                    for name, value in group.environment.items()
                },
            )
            for group in result.groups
        ]
        return dataclasses.replace(
            result,
            groups=groups,
            baseline=keys[result.baseline],
            comparisons={
                keys[key]: found.renamed(self.board, keys.__getitem__)  # its words name them
                for key, found in result.comparisons.items()
            },
            references=result.references and result.references.renamed(keys.__getitem__),
            emptied={text(key): count for key, count in result.emptied.items()},
            drift_notes=[text(note) for note in result.drift_notes],
        )

    def board(self, name: str) -> str:
        """A board's name as shown: its alias, or as named (the owner chose to show it, so it
        is not taken for a host or a user of the same name)."""
        return self.aliases.get(name, name)

    def _keys(self, result: comparisons.Result) -> dict[str, str]:
        """Each group's name as shown, by its real name: "nightly on [hidden] 1" and "... 2"
        for two that would read the same, so no group takes another's figures."""
        shown = self.board if result.group_by == "board" else self.text
        hidden = {group.key: shown(group.key) for group in result.groups}
        alike, taken = Counter(hidden.values()), set(hidden.values())
        return {
            key: _numbered(name, taken) if alike[name] > 1 else name for key, name in hidden.items()
        }

    def text(self, value: str) -> str:
        if (found := self._seen.get(value)) is None:
            found = self._seen[value] = self._hidden(value)
        return found

    def _hidden(self, value: str) -> str:
        if (alias := self._by_lower.get(value.lower())) is not None:  # a name alone
            return alias
        value = self.redactor.text(value)
        if self.names is None:
            return value
        return self.names.sub(self._alias, value)

    def _alias(self, match: re.Match) -> str:
        name = match["word"]
        if name.isdigit() and _UNIT.match(match.string, match.end()):
            return match[0]  # "42 MB" is a size, whatever a board is named
        return self._by_lower.get(name.lower(), HIDDEN)


def _board_names(result: comparisons.Result | None) -> list[str]:
    """The names of the result's boards in their order, then those of every other board of the
    lab (retired ones too)."""
    groups = result.groups if result is not None else ()
    found = sorted({name for group in groups for name in group.boards})
    others = set(Board.objects.values_list("name", flat=True)).difference(found)
    return found + sorted(others)


def _numbered(name: str, taken: set[str]) -> str:
    """name and the first number that no group's name has yet (taken gets it)."""
    found = next(f"{name} {number}" for number in count(1) if f"{name} {number}" not in taken)
    taken.add(found)
    return found


def _words(words, flags=0, before="") -> re.Pattern | None:
    """Any of words (the group "word") as a whole name, the longest first: not inside a longer
    one, "-", "_" and "." being part of a name ("pi" is not in "pi.local" nor "pi-4", but is in
    "on pi."). before: a pattern the match may begin with. None for no words."""
    longest_first = sorted(set(words), key=len, reverse=True)
    if not longest_first:
        return None
    names = "|".join(map(re.escape, longest_first))
    # A review saw "Raspberry Pi 4 Model B" shown as "Raspberry board 4 4 Model B".
    guard = NOT_A_PI_PRODUCT
    return re.compile(rf"(?<![\w.-]){guard}{before}(?P<word>{names})(?![\w-]|\.\w)", flags)
