"""Share links: a saved comparison as a read-only page for anyone with its URL.

Who may share: an operator or admin any comparison, anyone the ones they saved (a viewer reads
everything, but a share publishes beyond the login). What the page hides: it is built from
the same Result as the comparison's page, passed through Hider, which replaces each board's
name with "board 1", "board 2"... (unless the link shows board names) and runs every text that
came from boards (group names, kernels, OS names, tool versions, campaign names) through the
API's Redactor, which hides IP addresses and every board's host, user@host, and the host name
and serial its latest probe found; then the boards' SSH user names alone.
"""

import dataclasses
import datetime
import re
from collections import Counter
from itertools import count

from django.utils import timezone

from benchmarks import comparisons
from benchmarks.api.redact import HIDDEN, Redactor
from benchmarks.models import Comparison, ShareLink
from devices.models import Board

SHARE_PERMISSION = "benchmarks.add_sharelink"
EXPIRY_DAYS = (1, 7, 30)


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


def revoke(link: ShareLink) -> bool:
    """Revoke link; False if it was revoked already (a second click changes nothing)."""
    return bool(ShareLink.objects.filter(pk=link.pk, revoked__isnull=True).update(
        revoked=timezone.now()
    ))  # fmt: skip


def expiry(days: int | None = None, on: datetime.date | None = None):
    """When a link made now ends: after `days`, or at the end of the day `on` (local time)."""
    if on is not None:
        midnight = datetime.datetime.combine(on + datetime.timedelta(days=1), datetime.time())
        return timezone.make_aware(midnight)
    return timezone.now() + datetime.timedelta(days=days) if days else None


def newest_live(comparison: Comparison) -> ShareLink | None:
    now = timezone.now()
    return next((link for link in comparison.shares.all() if link.live(now)), None)


def live_link(token: str) -> ShareLink:
    """The link of token (ShareLink.DoesNotExist if none), Gone if it was revoked or expired."""
    link = ShareLink.objects.select_related("comparison").get(token=token)
    if link.revoked is not None:
        when = timezone.localtime(link.revoked).strftime("%Y-%m-%d %H:%M")
        raise Gone(f"This link was revoked on {when}: the comparison is no longer shared here.")
    if link.expired():
        when = timezone.localtime(link.expires).strftime("%Y-%m-%d %H:%M")
        raise Gone(f"This link expired on {when}: the comparison is no longer shared here.")
    return link


def shown(link: ShareLink, result: comparisons.Result | None):
    """result as link's page shows it (None stays None), and the comparison's name as shown
    (its saver's words: they may name a host too)."""
    hider = Hider(result, link.show_board_names)
    return (None if result is None else hider.result(result)), hider.text(link.comparison.name)


class Hider:
    """What a share page shows of a comparison's result and of its name: the Redactor's text(),
    then each board's name replaced by its alias, board 1, 2... in the order of the names
    (stable for a page: the same result gives the same aliases). result may be None (a
    comparison with no values any more): then only the Redactor hides."""

    def __init__(self, result: comparisons.Result | None, show_board_names: bool):
        self.redactor = Redactor()
        self.users = _users()
        groups = result.groups if result is not None else ()
        names = sorted({name for group in groups for name in group.boards})
        self.aliases = {} if show_board_names else {
            name: f"board {number}" for number, name in enumerate(names, 1)
        }  # fmt: skip
        longest_first = sorted(self.aliases, key=len, reverse=True)
        self.names = (
            re.compile(rf"(?<![\w.-])(?:{'|'.join(map(re.escape, longest_first))})(?![\w-])")
            if self.aliases
            else None
        )
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
                environment={name: text(value) for name, value in group.environment.items()},
            )
            for group in result.groups
        ]
        return dataclasses.replace(
            result,
            groups=groups,
            baseline=keys[result.baseline],
            comparisons={keys[key]: found for key, found in result.comparisons.items()},
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
        return {key: _numbered(name, taken) if alike[name] > 1 else name
                for key, name in hidden.items()}  # fmt: skip

    def text(self, value: str) -> str:
        if (found := self._seen.get(value)) is None:
            found = self._seen[value] = self._hidden(value)
        return found

    def _hidden(self, value: str) -> str:
        if value in self.aliases:  # a group of one board, when grouped by board
            return self.aliases[value]
        value = self.redactor.text(value)
        if self.users is not None:
            value = self.users.sub(HIDDEN, value)
        if self.names is None:
            return value
        return self.names.sub(lambda match: self.aliases[match[0]], value)


def _numbered(name: str, taken: set[str]) -> str:
    """name and the first number that no group's name has yet (taken gets it)."""
    found = next(f"{name} {number}" for number in count(1) if f"{name} {number}" not in taken)
    taken.add(found)
    return found


def _users() -> re.Pattern | None:
    """The boards' SSH user names as words, in their own case: the Redactor hides them only as
    user@host, and a share page hides them alone too ("pi" in "/home/pi", not in "Raspberry
    Pi")."""
    users = sorted(set(Board.objects.values_list("username", flat=True)), key=len, reverse=True)
    if not users:
        return None
    return re.compile(rf"(?<![\w.-])(?:{'|'.join(map(re.escape, users))})(?![\w-])")
