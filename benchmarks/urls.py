"""The benchmark catalog and campaign pages."""

from django.urls import path

from benchmarks.sharing import PATH
from benchmarks.views import (
    answers,
    campaigns,
    canaries,
    catalog,
    comparisons,
    prepare,
    results,
    schedules,
    shares,
    tokens,
)
from benchmarks.views.schedules import CONTROLS

app_name = "benchmarks"

SHARED = PATH.removeprefix("/")  # included at the root (pifarm/urls.py)


EXPORTS = ("csv", "json", "md")  # a comparison's files


def _each(route: str, view, name: str, argument: str, values) -> list:
    """A URL for each value of one of view's arguments: route and name with {} for it."""
    return [path(route.format(v), view, {argument: v}, name=name.format(v)) for v in values]


urlpatterns = [
    # On a board's page (devices): prepare it for benchmarks.
    path("boards/<uuid:code>/prepare/", prepare.prepare, name="prepare_board"),
    path("boards/<uuid:code>/canary/", canaries.canary_set_up, name="canary_set_up"),
    path("boards/<uuid:code>/drifts/<int:drift>/clear/", canaries.drift_clear, name="drift_clear"),
    path("benchmarks/", catalog.catalog, name="catalog"),
    path("campaigns/", campaigns.campaign_list, name="campaigns"),
    path("campaigns/new/", campaigns.campaign_new, name="campaign_new"),
    path("campaigns/<uuid:code>/", campaigns.campaign_detail, name="campaign"),
    path("campaigns/<uuid:code>/status/", campaigns.campaign_status, name="campaign_status"),
    path("campaigns/<uuid:code>/answer/", answers.campaign_answer, name="answer"),
    path("campaigns/<uuid:code>/cancel/", campaigns.campaign_cancel, name="cancel"),
    path("campaigns/<uuid:code>/retry/", campaigns.campaign_retry, name="retry"),
    path("campaigns/<uuid:code>/runs/<uuid:run>/cancel/", campaigns.run_cancel, name="cancel_run"),
    path("campaigns/<uuid:code>/runs.csv", results.runs_csv, name="runs_csv"),
    path("schedules/", schedules.schedule_list, name="schedules"),
    path("schedules/<uuid:code>/", schedules.schedule_detail, name="schedule"),
    *_each(
        "schedules/<uuid:code>/{}/", schedules.schedule_control, "schedule_{}", "control", CONTROLS
    ),
    path("runs/<uuid:code>/telemetry.json", results.run_telemetry, name="run_telemetry"),
    path("comparisons/", comparisons.comparison_list, name="comparisons"),
    path("comparisons/new/", comparisons.comparison_new, name="comparison_new"),
    path("comparisons/bitness/", answers.bitness, name="bitness"),
    path("comparisons/save/", comparisons.comparison_save, name="comparison_save"),
    path("comparisons/<uuid:code>/", comparisons.comparison_detail, name="comparison"),
    *_each(
        "comparisons/<uuid:code>/comparison.{}",
        comparisons.comparison_export,
        "comparison_{}",
        "kind",
        EXPORTS,
    ),
    path("comparisons/<uuid:code>/share/", shares.share_create, name="share_create"),
    path(
        "comparisons/<uuid:code>/share/<int:link>/revoke/",
        shares.share_revoke,
        name="share_revoke",
    ),
    # A shared comparison: no login; the token is the only key (benchmarks.sharing).
    path(f"{SHARED}<str:token>/", shares.share_page, name="share"),
    *_each(SHARED + "<str:token>/comparison.{}", shares.share_export, "share_{}", "kind", EXPORTS),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<uuid:code>/revoke/", tokens.token_revoke, name="revoke_token"),
]
