"""Campaigns: the list, the builder, a campaign's page and its live status, cancel and retry.

Views only write rows and queue lanes through benchmarks.campaigns; the work runs in the
workers, and the page follows it by polling campaign_status.
"""

import hashlib
import json
from datetime import UTC, timedelta

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from benchmarks import answers, campaigns, plans, progress, questions, results, schedules, specs
from benchmarks.forms import CampaignForm
from benchmarks.models import Campaign, Run
from devices.views.access import permission_required
from devices.views.responses import json_response

CAMPAIGNS_PER_PAGE = 100
# A page of the results table: a campaign may have tens of thousands of runs (the CSV has them
# all), and the status sends at most the rows of the page being looked at.
RUNS_PER_PAGE = 100
SEED_DIGITS = 10  # a seed is below 2**31; longer digits are no preview's
# Rows the status sends again, before its last answer: a run that finished while that answer
# was being made may have committed a moment later.
STATUS_OVERLAP = timedelta(seconds=10)


def _get_campaign(code) -> Campaign:
    return get_object_or_404(Campaign.objects.select_related("created_by"), code=code)


@permission_required("benchmarks.view_campaign")
@require_safe
def campaign_list(request):
    counts = {f"n_{state}": Count("runs", filter=Q(runs__state=state)) for state in Run.State}
    # Newest first, said again: a query with Count() groups by, and then Django drops Meta.ordering.
    listed = (
        Campaign.objects.filter(archived__isnull=True)
        .select_related("created_by")
        .annotate(**counts)
        .order_by("-created", "-pk")
    )
    page = Paginator(listed, CAMPAIGNS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        (
            campaign,
            [
                (state, getattr(campaign, f"n_{state}"))
                for state in Run.State.values
                if getattr(campaign, f"n_{state}")
            ],
        )
        for campaign in page.object_list
    ]
    return render(request, "benchmarks/campaigns.html", {"rows": rows, "page": page})


@permission_required("benchmarks.run_campaign")
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_new(request):
    """Preview first: Start is offered with the figures, and starts only what they were for."""
    data = request.POST if request.method == "POST" else None
    # A template of benchmarks.questions fills the form (?question=network), or posted it.
    question = questions.QUESTIONS.get((data or request.GET).get("question", ""))
    form = CampaignForm(data, question=question)
    if request.method != "POST":  # GET or HEAD
        context = {"form": form, "questions": questions.QUESTIONS.values()}
        return render(request, "benchmarks/campaign_form.html", context)
    if not form.is_valid():
        return render(request, "benchmarks/campaign_form.html", {"form": form}, status=400)
    previewed = request.POST.get("previewed", "")
    spec = _seeded(form, previewed)
    token = preview_token(spec)
    wants_start = request.POST.get("action") == "start"
    if wants_start and previewed == token:
        try:
            if "schedule" in spec:
                made, new = schedules.create_once(spec, request.user)
            else:
                made, new = campaigns.start_once(spec, request.user)
        except specs.SpecError as exc:  # a board retired since the preview, say
            form.add_error(None, str(exc))
            return render(request, "benchmarks/campaign_form.html", {"form": form}, status=400)
        if new and "schedule" in spec:
            messages.success(request, f"Scheduled {made.name}: {schedules.timing_words(made)}.")
        elif new:
            messages.success(request, f"Started {made.name}.")
        return redirect(made)
    preview = _preview(form, spec, token, changed=wants_start)
    return render(request, "benchmarks/campaign_form.html", {"form": form, "preview": preview})


def _preview(form: CampaignForm, spec: dict, token: str, changed: bool) -> dict:
    """The figures shown before a start; changed: Start was pressed on an edited form. A
    spec with a schedule: its timing in words and its first starts too."""
    timing, starts = schedules.first_starts(spec["schedule"]) if "schedule" in spec else ("", [])
    # A cron schedule's first start is at its time: what runs now says nothing of then (and
    # its words name the time zone already).
    starts_now = "cron" not in spec.get("schedule", {})
    return {
        "timing": timing,
        "starts": starts,
        "zone": timezone.get_current_timezone_name() if starts_now else "",
        "trials": form.trials,
        "boards": len(form.checked.boards),
        "estimate_s": plans.estimate_s(form.checked),
        "spec": json.dumps(spec, indent=2),
        "digest": token,
        "changed": changed,
        "warnings": plans.warnings(form.checked, starts_now=starts_now),
        "lengthened": [item.lengthened for item in form.checked.items if item.lengthened],
    }


def _seeded(form: CampaignForm, previewed: str) -> dict:
    """The form's spec with its shuffle seed: the form's, else the one its preview fixed (in
    the token it posts back), else the one checking it drew. A post without a seed (a script
    leaves the hidden field out) then starts what was previewed, and once however often it is
    posted: start_once finds the same spec."""
    if "seed" in form.spec:
        return form.spec
    seed = _token_seed(previewed)
    return {**form.spec, "seed": form.checked.seed if seed is None else seed}


def preview_token(spec: dict) -> str:
    """What Start posts back: the digest of the spec previewed, seed included, then the seed."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    return f"{digest}-{spec['seed']}"


def _token_seed(token: str) -> int | None:
    """The seed a preview token carries; the digest before it decides whether it is the one
    previewed (a seed changed by hand no longer matches)."""
    _, _, seed = token.rpartition("-")
    return int(seed) if seed.isdigit() and len(seed) <= SEED_DIGITS else None


@permission_required("benchmarks.view_campaign")
@require_safe
def campaign_detail(request, code):
    campaign = _get_campaign(code)
    retrying = campaigns.retrying(campaign)
    page = Paginator(results.runs_of(campaign), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "campaign": campaign,
        "progress": progress.of(campaign),
        "page": page,
        "runs": page.object_list,
        "retryable": campaigns.retryable(campaign),
        "retrying": retrying,
        "lengthened": specs.lengthened(campaign.spec),
        "question": answers.question_of(campaign),  # its answer page is linked
        # a retry job's progress is followed like a running campaign's
        "running": campaign.finished is None or retrying is not None,
        "since": (timezone.now() - STATUS_OVERLAP).isoformat(),  # the first poll's
    }
    return render(request, "benchmarks/campaign.html", context)


@permission_required("benchmarks.view_campaign", json=True)
@require_safe
def campaign_status(request, code):
    """Progress, lanes, and the rows of the page's runs that changed since its last poll."""
    campaign = _get_campaign(code)
    now = timezone.now()
    state = progress.of(campaign)
    return json_response(
        {
            "state": campaign.state,
            "label": campaign.get_state_display(),
            "finished": campaign.finished is not None,
            "total": state.total,
            "ended": state.ended,
            "percent": state.percent,
            "counts": state.counts,
            "eta": progress.duration_words(state.eta_s),
            "lanes": [_lane_status(lane) for lane in state.lanes],
            "runs": _changed_rows(request, campaign),
            "retrying": campaigns.retrying(campaign),
            "since": (now - STATUS_OVERLAP).isoformat(),
        }
    )


def _lane_status(item: progress.LaneProgress) -> dict:
    lane = item.lane
    return {
        "board": lane.board.name,
        "state": lane.state,
        "label": lane.get_state_display(),
        "step": lane.step,
        "log_tail": lane.log_tail,
        "error": lane.reason,
        "runs": f"{item.ended}/{item.total}",
        "eta": progress.duration_words(item.eta_s),
    }


def _changed_rows(request, campaign: Campaign) -> list[dict]:
    """Only rows of the page shown (?page=), so never more than a page: every run of a campaign
    ends at once when it is cancelled, and ?since= may be any time at all."""
    since = _since(request.GET.get("since") or "")
    if since is None:
        return []  # the page was rendered with its rows as they are
    in_order = campaign.runs.order_by(*results.TABLE_ORDER).values_list("pk", flat=True)
    shown = Paginator(in_order, RUNS_PER_PAGE).get_page(request.GET.get("page")).object_list
    changed = results.runs_of(campaign).filter(
        Q(state=Run.State.RUNNING) | Q(started__gte=since) | Q(finished__gte=since),
        pk__in=list(shown),
    )
    return [
        {"code": str(run.code), "state": run.state, "html": _run_row(request, campaign, run)}
        for run in changed
    ]


def _since(text: str):
    """The time ?since= gives, in UTC; None for anything but what a status answer sends (an
    ISO time with its offset) that the database can compare: a time naive, made up or out of
    range once in UTC (0001-01-01T00:00:00+23:59) is no since at all."""
    try:
        since = parse_datetime(text)
        return since.astimezone(UTC) if since and since.tzinfo else None
    except (ValueError, OverflowError):
        return None


def _run_row(request, campaign: Campaign, run: Run) -> str:
    context = {"campaign": campaign, "run": run, "running": campaign.finished is None}
    return render_to_string("benchmarks/_run_row.html", context, request=request)


@permission_required("benchmarks.run_campaign")
@require_POST
def campaign_cancel(request, code):
    campaign = _get_campaign(code)
    cancelled = campaigns.cancel(campaign, request.user)
    if cancelled is None:  # a second post, or a page left open since the campaign ended
        messages.info(request, campaigns.why_not_cancelled(campaign))
    else:
        messages.success(request, f"Cancelled {campaign.name}: {cancelled.words}.")
    return redirect(campaign)


@permission_required("benchmarks.run_campaign")
@require_POST
def campaign_retry(request, code):
    campaign = _get_campaign(code)
    again, in_background = campaigns.start_retry(campaign)
    if in_background:
        messages.success(request, f"Retrying {again:,} runs: this page shows how far it is.")
    elif again:
        messages.success(request, f"Queued {again} run(s) again.")
    else:
        messages.info(request, "No failed, cancelled or skipped run is left to retry.")
    return redirect(campaign)


@permission_required("benchmarks.run_campaign")
@require_POST
def run_cancel(request, code, run):
    runs = Run.objects.select_related("campaign", "board")
    run = get_object_or_404(runs, code=run, campaign__code=code)
    was_running = run.state == Run.State.RUNNING
    if campaigns.cancel_run(run, request.user):
        messages.success(request, f"Stopping {run}." if was_running else f"Cancelled {run}.")
    else:
        messages.info(request, campaigns.why_run_not_cancelled(run))
    page = results.position_of(run) // RUNS_PER_PAGE + 1
    return redirect(f"{run.campaign.get_absolute_url()}?page={page}#run-{run.code}")
