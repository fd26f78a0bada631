"""What happened to a board, for whoever listens (Django signals): benchmarks.notify tells
people of it, and devices needs to know nothing of that.

board_needs_attention(board_id, reason): a board became "needs attention", after the commit.
"""

import logging

from django.dispatch import Signal

log = logging.getLogger(__name__)

board_needs_attention = Signal()


def send(signal: Signal, sender, **kwargs) -> None:
    """Tell every listener; one that fails is logged with its traceback, and the others are
    still told: a listener's failure is not the failure of what it listens to."""
    for receiver, outcome in signal.send_robust(sender, **kwargs):
        if isinstance(outcome, Exception):
            log.error("%s failed on %s %s", receiver, sender.__name__, kwargs, exc_info=outcome)
