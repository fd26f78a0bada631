"""Presets: list, versions and diffs, edit (a new version), clone, apply, application progress."""

import uuid

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from devices import configtxt, presets
from devices.forms_presets import ApplyForm, PresetForm
from devices.models import Application, Board, Preset, PresetVersion
from devices.views.access import permission_required
from devices.views.boards import get_board
from devices.views.responses import json_response


def _get_preset(code) -> Preset:
    return get_object_or_404(Preset, code=code)


def _get_version(code, number) -> PresetVersion:
    return get_object_or_404(PresetVersion, preset__code=code, number=number)


@permission_required("devices.view_preset")
@require_safe
def preset_list(request):
    return render(
        request, "devices/presets.html", {"presets": Preset.objects.prefetch_related("versions")}
    )


@permission_required("devices.add_preset")
def preset_new(request):
    form = PresetForm(request.POST or None, staff=request.user.is_staff)
    if request.method == "POST" and form.is_valid() and form.wants_save:
        with transaction.atomic():
            preset = form.save(commit=False)
            preset.created_by = request.user
            preset.save()
            presets.new_version(preset, author=request.user, **form.version_fields())
        messages.success(request, f"Saved {preset.name} v1.")
        return redirect(preset)
    return render(request, "devices/preset_form.html", {"form": form, "preset": None})


@permission_required("devices.change_preset")
def preset_edit(request, code):
    preset = _get_preset(code)
    form = PresetForm(request.POST or None, instance=preset, staff=request.user.is_staff)
    if request.method == "POST" and form.is_valid() and form.wants_save:
        fields = form.version_fields()
        with transaction.atomic():
            form.save()
            if presets.same_content(preset.latest, **fields):
                messages.info(request, "Saved; the settings did not change, so no new version.")
                return redirect(preset)
            version = presets.new_version(preset, author=request.user, **fields)
        messages.success(request, f"Saved {version}.")
        return redirect(preset)
    return render(request, "devices/preset_form.html", {"form": form, "preset": preset})


@permission_required("devices.view_preset")
@require_safe
def preset_detail(request, code):
    preset = _get_preset(code)
    versions = list(preset.versions.select_related("author").order_by("-number"))
    diff = _diff_context(versions, request.GET.get("a"), request.GET.get("b"))
    return render(
        request,
        "devices/preset.html",
        {"preset": preset, "versions": versions, **diff},
    )


def _diff_context(versions, a, b) -> dict:
    """The side-by-side diff of two versions (default: the latest against its parent)."""
    by_number = {str(version.number): version for version in versions}
    if len(versions) < 2:
        return {"diff_rows": None}
    left = by_number.get(a) or versions[1]
    right = by_number.get(b) or versions[0]
    return {
        "diff_left": left,
        "diff_right": right,
        "diff_rows": configtxt.fold(
            configtxt.side_by_side(_compare_text(left), _compare_text(right))
        ),
    }


def _compare_text(version: PresetVersion) -> bytes:
    """The lines a version writes, and its governor, so that no change goes unseen."""
    governor = version.governor or "left as it is"
    return f"{version_text(version)}\n# CPU governor: {governor}\n".encode()


def version_text(version: PresetVersion) -> str:
    """The lines as a page shows them (escaped if an older pifarm stored a bad value)."""
    return configtxt.shown_settings_text(version.options, version.acknowledge_warranty)


@permission_required("devices.view_presetversion")
@require_safe
def version_detail(request, code, number):
    version = _get_version(code, number)
    boards = Board.objects.in_service().exclude(host_key="").order_by("name")
    board = boards.filter(code=_uuid_or_none(request.GET.get("board"))).first()
    return render(
        request,
        "devices/preset_version.html",
        {
            "version": version,
            "preset": version.preset,
            "text": version_text(version),
            "boards": boards,
            "board": board,
            "underclocks": presets.underclocks_on(board, version) if board else [],
            **_board_diff(version, board),
        },
    )


def _uuid_or_none(value: str | None) -> uuid.UUID | None:
    """A board code from the query string; anything else (typed, truncated) picks no board."""
    try:
        return uuid.UUID(value) if value else None
    except ValueError:
        return None


def _board_diff(version: PresetVersion, board: Board | None) -> dict:
    """What applying version would change in board's config.txt, as last probed."""
    snapshot = board.latest_snapshot if board else None
    config_txt = presets.probed_config_txt(snapshot)
    if config_txt is None:
        return {"board_rows": None}
    current = config_txt.encode()
    try:
        after = configtxt.apply_block(current, version_text(version), str(version))
    except ValueError as exc:  # a damaged managed block on the board
        return {"board_rows": None, "board_error": str(exc)}
    return {
        "board_rows": configtxt.fold(configtxt.side_by_side(current, after)),
        "board_snapshot": snapshot,
    }


@permission_required("devices.add_preset")
@require_POST
def preset_clone(request, code, number):
    version = _get_version(code, number)
    try:
        clone = _clone(version, request.user)
    except presets.InvalidPreset as exc:
        messages.error(request, f"{version} cannot be copied: {exc}")
        return redirect(version)
    messages.success(request, f"{clone.name} is a copy of {version}.")
    return redirect(clone)


def _clone(version: PresetVersion, user) -> Preset:
    """A new preset whose v1 is version, checked as any new version is."""
    with transaction.atomic():
        clone = Preset.objects.create(
            name=_free_name(version.preset.name, " (copy)"),
            description=version.preset.description,
            families=version.preset.families,
            created_by=user,
        )
        presets.new_version(
            clone,
            options=version.options,
            governor=version.governor,
            acknowledge_warranty=version.acknowledge_warranty,
            # only staff may acknowledge boot options, also by copying them
            acknowledge_boot=version.acknowledge_boot and user.is_staff,
            note=f"cloned from {version}",
            author=user,
        )
    return clone


def _free_name(base: str, suffix: str) -> str:
    """base + suffix, numbered if taken, with base cut to fit the name field."""
    limit = Preset._meta.get_field("name").max_length
    name, n = base[: limit - len(suffix)] + suffix, 2
    while Preset.objects.filter(name=name).exists():
        tail = f"{suffix} {n}"
        name, n = base[: limit - len(tail)] + tail, n + 1
    return name


@permission_required("devices.add_preset")
@require_POST
def preset_from_board(request, code):
    board = get_board(code)
    snapshot = board.latest_snapshot
    if snapshot is None:
        raise Http404("this board has not been probed yet")
    config_txt = presets.probed_config_txt(snapshot)
    if not config_txt:
        messages.error(request, f"The last probe of {board.name} found no config.txt to use.")
        return redirect(board)
    family = (snapshot.facts.get("revision") or {}).get("family") or "pi4"
    options = configtxt.overclock_settings(config_txt.encode(), family)
    try:
        preset = _preset_from(board, snapshot, family, options, request.user)
    except presets.InvalidPreset as exc:
        messages.error(request, f"{board.name}'s config.txt cannot be a preset: {exc}")
        return redirect(board)
    messages.success(request, f"Made {preset.name} from {board.name}'s config.txt.")
    return redirect(preset)


def _preset_from(board, snapshot, family: str, options: dict, user) -> Preset:
    """A new preset of what the board runs; checked like any other (board output is
    untrusted), so nothing is made when a setting is wrong."""
    with transaction.atomic():
        preset = Preset.objects.create(
            name=_free_name(board.name, " as found"),
            description=f"The overclock settings of {board.name}'s config.txt "
            f"({snapshot.facts.get('config_path', '')}), "
            f"probed {snapshot.taken_at:%Y-%m-%d %H:%M}.",
            families=[family],
            created_by=user,
        )
        presets.new_version(
            preset,
            options=options,
            governor=_known_governor(snapshot.facts.get("governor")),
            note=f"imported from {board.name}",
            author=user,
        )
    return preset


def _known_governor(name) -> str:
    """A governor read from a board, if it is one pifarm knows (board output is untrusted)."""
    return name if name in PresetVersion.Governor.values else ""


@permission_required("devices.apply_preset")
def apply(request, code, number):
    version = _get_version(code, number)
    form = ApplyForm(request.POST or None, version=version)
    if request.method == "POST" and form.is_valid():
        started, refused = _start_applications(request, version, form.cleaned_data)
        if started:
            messages.success(request, f"Applying {version} to {len(started)} board(s).")
        if len(started) == 1:
            return redirect(started[0])
        if not started and len(refused) == 1:  # a form posted twice: show the first one
            return redirect(refused[0])
        return redirect("devices:applications")
    return render(request, "devices/apply.html", {"form": form, "version": version})


def _start_applications(request, version, data) -> tuple[list, list]:
    """Start one application per board: those queued, and the unfinished ones that refused."""
    started, refused = [], []
    with transaction.atomic():
        for board in data["boards"]:
            try:
                started.append(
                    presets.start_application(board, version, data["mode"], request.user)
                )
            except presets.AlreadyApplying as exc:
                messages.error(request, str(exc))
                refused.append(exc.unfinished)
    for application in started:
        application.refresh_from_db(fields=["state", "reason"])
        if application.state == Application.State.FAILED:  # it could not be queued
            messages.error(request, f"{application.board.name}: {application.reason}")
    queued = [a for a in started if a.state != Application.State.FAILED]
    return queued, refused


@permission_required("devices.view_application")
@require_safe
def application_list(request):
    applications = Application.objects.select_related("board", "version__preset")[:100]
    return render(request, "devices/applications.html", {"applications": applications})


@permission_required("devices.view_application")
@require_safe
def application_detail(request, code):
    application = get_object_or_404(Application, code=code)
    context = {"application": application, "backups_kept": settings.PIFARM_BOARD_BACKUPS_KEPT}
    return render(request, "devices/application.html", context)


@permission_required("devices.view_application", json=True)
@require_safe
def application_status(request, code):
    application = get_object_or_404(Application, code=code)
    return json_response(
        {
            "state": application.state,
            "label": application.get_state_display(),
            "step": application.waiting_words or application.step,
            "waiting": application.waiting_words,
            "outcome": application.reason,
            "finished": application.is_finished,
            "verification": application.verification,
        }
    )
