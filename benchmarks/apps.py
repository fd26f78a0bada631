from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """Benchmark catalog, campaigns, runs and their results."""

    name = "benchmarks"

    def ready(self):
        # Campaign lanes and board preparation as kinds of board work (devices.work), and
        # the classic questions a spec may name (benchmarks.specs); what listens to events;
        # retention's guard on deleting a campaign.
        from benchmarks import (  # noqa: F401
            canaries,
            events,
            lanes,
            notify,
            prepare,
            questions,
            retention,
        )
        from devices import events as board_events

        events.campaign_finished.connect(canaries.judge_finished_canary)
        events.campaign_finished.connect(notify.campaign_finished)
        events.board_drifted.connect(notify.board_drifted)
        events.canary_failed.connect(notify.canary_failed)
        board_events.board_needs_attention.connect(notify.board_needs_attention)
