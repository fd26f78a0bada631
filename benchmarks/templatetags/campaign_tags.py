"""Filters for the campaign pages: durations, parameters and environments in words."""

from django import template

from benchmarks import progress, results

register = template.Library()


@register.filter
def duration(seconds) -> str:
    return progress.duration_words(seconds)


@register.filter
def params_text(params: dict) -> str:
    return results.params_text(params)


@register.filter
def param_value(value) -> str:
    return results.value_text(value)


@register.filter
def tool_version(run) -> str:
    return results.tool_version(run)


@register.filter
def bits_text(run) -> str:
    """'64-bit kernel, 32-bit userland', from the run's snapshot."""
    kernel, userland = results.bits(run)
    if kernel is None and userland is None:
        return ""
    return f"{kernel or '?'}-bit kernel, {userland or '?'}-bit userland"


@register.filter
def number(value) -> str:
    """A measured value, readable: 4 significant digits, thousands grouped when large."""
    if value is None:
        return ""
    if abs(value) >= 10_000:
        return f"{value:,.0f}"
    return f"{value:.4g}"
