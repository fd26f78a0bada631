"""What happened, for whoever listens (Django signals): the modules that act on an event
(benchmarks.canaries, benchmarks.notify) connect to it in BenchmarksConfig.ready, so that the
module where it happens needs to know none of them.

campaign_finished(campaign): sent once a campaign's last run ended, after the commit.
board_drifted(drift): a board's canary found a drift (benchmarks.canaries).
canary_failed(board, campaign): a canary campaign finished with runs failed or skipped.
"""

from django.dispatch import Signal

campaign_finished = Signal()
board_drifted = Signal()
canary_failed = Signal()
