"""The benchmark catalog and campaign pages."""

from django.urls import path

from benchmarks.views import campaigns, catalog, comparisons, results, tokens

app_name = "benchmarks"

urlpatterns = [
    path("benchmarks/", catalog.catalog, name="catalog"),
    path("campaigns/", campaigns.campaign_list, name="campaigns"),
    path("campaigns/new/", campaigns.campaign_new, name="campaign_new"),
    path("campaigns/<uuid:code>/", campaigns.campaign_detail, name="campaign"),
    path("campaigns/<uuid:code>/status/", campaigns.campaign_status, name="campaign_status"),
    path("campaigns/<uuid:code>/cancel/", campaigns.campaign_cancel, name="cancel"),
    path("campaigns/<uuid:code>/retry/", campaigns.campaign_retry, name="retry"),
    path("campaigns/<uuid:code>/runs/<uuid:run>/cancel/", campaigns.run_cancel, name="cancel_run"),
    path("campaigns/<uuid:code>/runs.csv", results.runs_csv, name="runs_csv"),
    path("runs/<uuid:code>/telemetry.json", results.run_telemetry, name="run_telemetry"),
    path("comparisons/", comparisons.comparison_list, name="comparisons"),
    path("comparisons/new/", comparisons.comparison_new, name="comparison_new"),
    path("comparisons/save/", comparisons.comparison_save, name="comparison_save"),
    path("comparisons/<uuid:code>/", comparisons.comparison_detail, name="comparison"),
    path(
        "comparisons/<uuid:code>/comparison.csv",
        comparisons.comparison_export,
        {"kind": "csv"},
        name="comparison_csv",
    ),
    path(
        "comparisons/<uuid:code>/comparison.json",
        comparisons.comparison_export,
        {"kind": "json"},
        name="comparison_json",
    ),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<uuid:code>/revoke/", tokens.token_revoke, name="revoke_token"),
]
