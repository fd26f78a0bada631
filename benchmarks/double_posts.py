"""A form posted twice (a double click, a reload, a script's retry) makes one thing: the same
thing from the same user within WINDOW is the first one again.

Used by the campaign builder and the API's POST campaigns/ (the same spec, its seed included),
by saving a comparison (the same name and choices) and by sharing one (the same expiry and
choice of board names, while the link is live).
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

WINDOW = timedelta(minutes=10)


def made_once(user, recent, same, make):
    """(make(), True), unless one of recent (this user's things, with a `created` time) made
    within WINDOW is the same (same(found)): then (it, False)."""
    with transaction.atomic():
        # One at a time per user, so two posts of one form cannot both find nothing.
        list(get_user_model().objects.select_for_update().filter(pk=user.pk))
        for found in recent.filter(created__gte=timezone.now() - WINDOW):
            if same(found):
                return found, False
        return make(), True
