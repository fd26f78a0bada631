from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from devices import tools
from devices.configtxt.rules import FAMILY_NAMES

register = template.Library()


@register.filter
def ago(moment) -> str:
    """'just now' for the last minute, else '3 minutes ago'."""
    if moment is None:
        return "never"
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def family_names(families) -> str:
    """Board families by name ("Pi 4B rev 1.4"), not by key ("pi4_r14")."""
    if isinstance(families, str):
        return FAMILY_NAMES.get(families, families)
    return ", ".join(FAMILY_NAMES.get(family, str(family)) for family in families or [])


@register.filter
def thousands(number) -> str:
    """99990 as "99,990"."""
    return f"{number:,}" if isinstance(number, int) else str(number)


@register.filter
def tool_words(tool: str) -> str:
    """A tool as the probe looks for it, in words: "7zz|7z" is "7zz or 7z"."""
    return tools.words(tool)
