"""Preset versions are only ever added: every edit, clone or import makes a new one.

Every version is checked as the preset form checks it, whichever path makes it (form, admin,
clone, a board's config.txt), so no stored version holds what a page or a board cannot take.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from devices import configtxt, work
from devices.configtxt.board_checks import underclock_warnings
from devices.configtxt.parsing import leading_int
from devices.configtxt.rules import FAMILIES, FAMILY_NAMES, rule_for
from devices.models import Application, Board, FactSnapshot, Preset, PresetVersion
from devices.probe import config_path_problem


@dataclass(frozen=True)
class ExamplePreset:
    name: str
    families: list[str]
    options: dict
    governor: str
    description: str = "An example."


# The classic dynamic overclock of the 100 Mbit/s Pis (1, 2 and 3 Model B): full speed when
# busy, slow when idle. `make demo` offers it, and the network question runs it. The GPU's
# minimums stay at their defaults (no gpu_freq_min), as the campaigns already run with it had.
CLASSIC_OVERCLOCK = ExamplePreset(
    "Dynamic overclock (classic)",
    ["pi1", "pi2", "pi3"],
    {
        "arm_freq_min": 500, "arm_freq": 900, "core_freq_min": 200, "core_freq": 300,
        "sdram_freq_min": 350, "sdram_freq": 450,
    },
    "ondemand",
)  # fmt: skip
EXAMPLE_PRESETS = [
    CLASSIC_OVERCLOCK,
    ExamplePreset("Pi 4 mild overclock", ["pi4_r14"], {"arm_freq": 1700}, "performance"),
]

# The firmware's defaults, as a preset: no lines (applying it removes pifarm's block, see
# configtxt.apply_block) and the default governor. raspberry-pi.yaml: governor.default
# "ondemand on current kernels (PR6458); older images booted powersave and the raspi-config
# init script switched to ondemand": a stock board runs ondemand either way.
STOCK_GOVERNOR = "ondemand"
STOCK = ExamplePreset(
    "Stock (firmware defaults)",
    list(FAMILIES),
    {},
    STOCK_GOVERNOR,
    description="The board as its firmware and OS leave it: pifarm's block removed from "
    f"config.txt, and the {STOCK_GOVERNOR} governor. The board's own lines stay as they are.",
)


def example_version(example: ExamplePreset) -> PresetVersion:
    """The version of the example's preset that holds the example, made (with the preset if
    need be) when none does: someone may have edited the preset since."""
    preset, _ = Preset.objects.get_or_create(
        name=example.name,
        defaults={"families": example.families, "description": example.description},
    )
    content = {
        "options": example.options,
        "governor": example.governor,
        "acknowledge_warranty": False,
    }
    for version in preset.versions.order_by("-number"):
        if same_content(version, **content):
            return version
    return new_version(preset, options=example.options, governor=example.governor, note="example")


def stock_version() -> PresetVersion:
    """The version that restores a board's firmware defaults (see STOCK)."""
    return example_version(STOCK)


def render_config(original: bytes, version: PresetVersion) -> bytes:
    """config.txt with the version's settings as the managed block at its end (and no block
    for a version of no lines)."""
    text = configtxt.settings_text(version.options, version.acknowledge_warranty)
    return configtxt.apply_block(original, text, f"{version.preset.name} v{version.number}")


def probed_config_txt(snapshot: FactSnapshot | None) -> str | None:
    """The config.txt a probe stored, unless the board put it where config.txt cannot live
    (snapshots taken before the probe checked paths may hold such a one)."""
    facts = snapshot.facts if snapshot else {}
    if facts.get("config_txt") is None or config_path_problem(facts.get("config_path") or ""):
        return None
    return facts["config_txt"]


def is_at_stock(board: Board) -> tuple[bool, str]:
    """Whether the board runs its firmware defaults (no overclock lines in config.txt, the
    default governor), and why, in a sentence for a page. It reads the latest probe and the
    applications verified since (each wrote exactly render_config); False whenever that
    cannot be known."""
    unfinished = board.applications.filter(state__in=Application.UNFINISHED).first()
    if unfinished is not None:
        return False, (
            f"{board.name} may not be at stock: an application of {unfinished.version} is "
            f"{unfinished.get_state_display()}."
        )
    snapshot = board.latest_snapshot
    if snapshot is None:
        return False, f"{board.name} has not been probed, so whether it is at stock is unknown."
    config_txt = probed_config_txt(snapshot)
    family = (snapshot.facts.get("revision") or {}).get("family")
    if config_txt is None or family not in FAMILIES:
        missing = "no config.txt" if config_txt is None else "no board model pifarm knows"
        return False, (
            f"{board.name}'s last probe found {missing}, so whether it is at stock is unknown."
        )
    config, governor = config_txt.encode(), snapshot.facts.get("governor") or ""
    basis = f"as probed at {timezone.localtime(snapshot.taken_at):%Y-%m-%d %H:%M}"
    since = board.applications.filter(finished__gt=snapshot.taken_at).exclude(
        state__in=(Application.State.ROLLED_BACK, Application.State.FAILED)
    )
    for application in since.select_related("version__preset").order_by("finished"):
        if application.state != Application.State.VERIFIED:
            return False, (
                f"{board.name} may not be at stock: the application of {application.version} "
                f"ended “{application.get_state_display()}” after its last probe."
            )
        config = render_config(config, application.version)
        governor = application.version.governor or governor
        basis = f"its last probe, with {application.version} applied since"
    found = _not_stock(config, governor, family)
    if found:
        return False, f"{board.name} is not at stock: {'; '.join(found)} ({basis})."
    return True, (
        f"{board.name} is at stock: no overclock lines in config.txt and the {STOCK_GOVERNOR} "
        f"governor ({basis})."
    )


def _not_stock(config: bytes, governor: str, family: str) -> list[str]:
    """What keeps config.txt and the governor from the firmware's defaults, in words."""
    try:
        own = configtxt.remove_block(config)
    except ValueError as exc:  # damaged markers
        return [str(exc)]
    found = []
    managed = configtxt.managed_settings(config)
    if managed:
        found.append(f"pifarm's block sets {_listed(managed)}")
    own_settings = configtxt.overclock_settings(own, family)
    changed = {
        key: value for key, value in own_settings.items() if not _stock_value(key, value, family)
    }
    if changed:
        found.append(
            f"its own config.txt sets {_listed(changed)} (outside pifarm's block: Restore stock "
            "leaves those)"
        )
    if governor != STOCK_GOVERNOR:
        running = f"the {governor} governor" if governor else "an unknown governor"
        found.append(f"it runs {running} (stock: {STOCK_GOVERNOR})")
    return found


def _stock_value(key: str, value: str, family: str) -> bool:
    """Set, but as stock: a line the stock OS files set (arm_boost...), or the default value."""
    rule = rule_for(key)
    if rule is None:
        return False
    default = rule.defaults.get(family)
    return rule.stock or (default is not None and leading_int(value) == default)


ARM_BOOST_MHZ = 1800  # raspberry-pi.yaml: arm_boost, for a Pi 4B rev 1.4


def underclocks_on(board: Board, version: PresetVersion) -> list[str]:
    """The version's busy clocks below the board's own defaults (board_checks.
    underclock_warnings), for the model its latest probe found; [] when none is known yet."""
    snapshot = board.latest_snapshot
    if snapshot is None or not snapshot.revision:
        return []
    try:
        return underclock_warnings(version.options, snapshot.revision, _boosted(snapshot))
    except ValueError:  # a model pifarm does not know: nothing to compare with
        return []


def _boosted(snapshot: FactSnapshot) -> dict[str, int]:
    """A Pi 4 rev 1.4 whose own config.txt (pifarm's block aside) sets arm_boost=1 runs at
    1800 MHz at stock, not 1500 (raspberry-pi.yaml: arm_freq.defaults.pi4_r14, "1500, 1800
    with arm_boost=1"; stock Raspberry Pi OS sets it)."""
    config_txt = probed_config_txt(snapshot)
    if config_txt is None:
        return {}
    try:
        own = configtxt.remove_block(config_txt.encode())
        settings = configtxt.effective_settings(own, snapshot.revision)
    except ValueError:
        return {}
    if configtxt.board_context(snapshot.revision).family != "pi4_r14":
        return {}
    if settings.get("arm_boost") == "1" and "arm_freq" not in settings:
        return {"arm_freq": ARM_BOOST_MHZ}
    return {}


def _listed(settings: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in settings.items())


class AlreadyApplying(Exception):
    """A board with an application queued, waiting or running refuses a second one."""

    def __init__(self, board: Board, unfinished: Application):
        super().__init__(
            f"{board.name} already has an application of {unfinished.version} "
            f"({unfinished.get_state_display()}); it was not started again."
        )
        self.unfinished = unfinished


class InvalidPreset(ValueError):
    """The content cannot be a version: the message says why, for the user."""


def findings_for(
    text: str, families: list[str], acknowledge_warranty: bool, acknowledge_boot: bool
) -> list[tuple[str, configtxt.Finding]]:
    """(family, finding) for a preset's lines on each family it is meant for."""
    each = configtxt.validate_each(
        text, families, acknowledge_warranty, preset=True, acknowledge_boot=acknowledge_boot
    )
    return [
        (family, finding) for family, found in zip(families, each, strict=True) for finding in found
    ]


def checked_options(
    options: dict,
    families: list[str],
    acknowledge_warranty: bool = False,
    acknowledge_boot: bool = False,
) -> dict[str, str]:
    """options as the lines they write, or InvalidPreset naming the first errors. A preset
    meant for no family in particular is held to what is an error on every family."""
    try:
        text = configtxt.settings_text(options, acknowledge_warranty)
        lines = configtxt.preset_options(text)
    except ValueError as exc:
        raise InvalidPreset(str(exc)) from None
    try:
        found = findings_for(
            text, families or list(FAMILIES), acknowledge_warranty, acknowledge_boot
        )
    except ValueError as exc:  # a family pifarm does not know
        raise InvalidPreset(str(exc)) from None
    errors = _errors(found, everywhere=not families)
    if errors:
        shown = "; ".join(
            f"{FAMILY_NAMES[family]}, line {f.line}: {f.message}" for family, f in errors[:3]
        )
        more = f" (and {len(errors) - 3:,} more)" if len(errors) > 3 else ""
        raise InvalidPreset(f"{shown}{more}")
    return lines


def findings_on_board(version: PresetVersion, revision_code: str) -> list[configtxt.Finding]:
    """The version's own lines by configtxt's rules for one exact board (its revision code):
    what an application checks on the board before it changes anything, and what a campaign's
    spec is checked by before it is accepted. ValueError when the lines cannot be written or
    the code names no board pifarm knows."""
    return configtxt.validate_preset(
        version.options, revision_code, version.acknowledge_warranty, version.acknowledge_boot
    )


def _errors(found: list[tuple[str, configtxt.Finding]], everywhere: bool) -> list:
    """The errors; with everywhere, only those on lines in error for every family."""
    errors = [(family, f) for family, f in found if f.severity == "error"]
    if everywhere:
        per_family = [{f.line for family, f in errors if family == one} for one in FAMILIES]
        errors = [(family, f) for family, f in errors if f.line in set.intersection(*per_family)]
    return errors


def new_version(
    preset: Preset,
    *,
    options: dict,
    governor: str = "",
    note: str = "",
    acknowledge_warranty: bool = False,
    acknowledge_boot: bool = False,
    author=None,
    parent: PresetVersion | None = None,
) -> PresetVersion:
    """The next version of preset, numbered in order even when two people save at once.
    Raises InvalidPreset when the content has an error for the preset's families."""
    if governor and governor not in PresetVersion.Governor.values:
        raise InvalidPreset(f"{governor!r} is not a CPU governor")
    options = checked_options(options, preset.families, acknowledge_warranty, acknowledge_boot)
    with transaction.atomic():
        Preset.objects.select_for_update().filter(pk=preset.pk).get()
        last = preset.versions.aggregate(last=Max("number"))["last"] or 0
        return PresetVersion.objects.create(
            preset=preset,
            number=last + 1,
            options=options,
            governor=governor,
            note=note,
            acknowledge_warranty=acknowledge_warranty,
            acknowledge_boot=acknowledge_boot,
            author=author,
            parent=parent if parent is not None else preset.latest,
        )


def same_content(
    version: PresetVersion | None,
    *,
    options: dict,
    governor: str,
    acknowledge_warranty: bool,
    acknowledge_boot: bool = False,
    **ignored,
) -> bool:
    """Would a new version repeat this one? Then saving makes none."""
    return (
        version is not None
        and version.options == {key: str(value).strip() for key, value in options.items()}
        and version.governor == governor
        and version.acknowledge_warranty == acknowledge_warranty
        and version.acknowledge_boot == acknowledge_boot
    )


def start_application(board: Board, version: PresetVersion, mode: str, user=None) -> Application:
    """Record the application and queue it on the board's worker queue after commit.

    The database refuses a second unfinished application of a board (a form posted twice),
    whichever process adds it: that raises AlreadyApplying.
    """
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on
            application = Application.objects.create(
                board=board, version=version, mode=mode, requested_by=user
            )
    except IntegrityError:
        unfinished = board.applications.filter(state__in=Application.UNFINISHED).first()
        if unfinished is None:
            raise
        raise AlreadyApplying(board, unfinished) from None
    work.queue(application)
    return application
