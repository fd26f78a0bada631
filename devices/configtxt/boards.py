"""Which board a config.txt is checked for, and whether a line's filters apply to it."""

from __future__ import annotations

from dataclasses import dataclass

from devices.configtxt.parsing import filter_kind, strict_int
from devices.configtxt.rules import FAMILIES
from devices.revision import RevisionError, decode_revision

__all__ = ["MAYBE", "NO", "YES", "BoardContext", "applies", "board_context"]

YES, NO, MAYBE = "yes", "no", "maybe"

# A family name stands for its most common board, decoded like its revision code so the
# filters agree with devices.revision (codes from raspberry-pi.yaml:
# board_identification.new_style_revision_code.examples and revision-codes.adoc).
_REPRESENTATIVE = {
    "pi0": "900092",  # Zero
    "pi1": "900032",  # 1B+
    "pi2": "a01041",  # 2B
    "pi3": "a02082",  # 3B
    "pi3p": "a020d3",  # 3B+
    "pi4": "c03112",  # 4B rev 1.2
    "pi4_r14": "c03114",  # 4B rev 1.4
    "pi400": "c03130",  # 400
    "pi02": "902120",  # Zero 2 W
    "pi5": "d04170",  # 5
}
_ALIASES = {"pi3+": "pi3p"}


@dataclass(frozen=True)
class BoardContext:
    model: str  # as the caller gave it
    family: str  # raspberry-pi.yaml overclocking.options family key
    filters: tuple[str, ...]  # model filters the board matches ("pi4", "pi400", ...)
    board_type: int | None  # for [board-type=0xNN]; None when the code has no type field
    description: str


def board_context(model: str | BoardContext) -> BoardContext:
    """A family ("pi1" ... "pi5", "pi4_r14", "pi02", ...) or a revision code ("c03114")."""
    if isinstance(model, BoardContext):
        return model
    text = str(model).strip()
    family = _ALIASES.get(text.lower(), text.lower())
    code = _REPRESENTATIVE.get(family)
    if code is None and len(text.lower().removeprefix("0x")) < 4:
        # "5" or "4b" would decode as old-style codes of a Pi 1: refuse rather than guess.
        raise ValueError(_unknown(text))
    try:
        revision = decode_revision(code or text)
    except RevisionError:
        raise ValueError(_unknown(text)) from None
    filters = tuple(f for f in revision.config_filters if not f.startswith("board-type="))
    if revision.board_type == "CM4S":
        filters += ("cm4s",)  # COND documents [cm4s]; devices.revision does not list it
    if code is None:
        description = revision.describe()
    else:
        description = f"{family}, taken as a {revision.board_type} (a revision code is exact)"
    return BoardContext(text, revision.family, filters, revision.board_type_id, description)


def _unknown(text: str) -> str:
    return (
        f"unknown board {text[:40]!r}: give a family ({', '.join(FAMILIES)}) "
        "or a revision code such as c03114"
    )


def applies(filters: tuple[str, ...], board: BoardContext) -> str:
    """YES, NO or MAYBE (the filter depends on something only known at boot: EDID, GPIO...)."""
    verdict = YES
    for name in filters:
        one = _verdict(name, board)
        if one == NO:
            return NO
        if one == MAYBE:
            verdict = MAYBE
    return verdict


def _verdict(name: str, board: BoardContext) -> str:
    kind = filter_kind(name)
    if kind == "none":
        return NO
    if kind == "hdmi":
        return YES  # [HDMI:N] picks a port for the HDMI lines after it; it is not a condition
    if kind != "model":
        return MAYBE
    if name.startswith("board-type="):
        if board.board_type is None:
            return MAYBE
        return YES if strict_int(name.split("=", 1)[1].strip()) == board.board_type else NO
    return YES if name in board.filters else NO
