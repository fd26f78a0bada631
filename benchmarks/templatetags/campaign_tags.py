"""Filters for the campaign pages: durations, parameters and environments in words."""

from django import template

from benchmarks import plans, progress, results

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


@register.filter
def percent(value) -> str:
    """A percent change with its sign: "+12.3 %", "-0.41 %"."""
    return "" if value is None else f"{value:+.3g} %"


@register.filter
def share(fraction) -> str:
    """A fraction as a percentage: 0.0123 is "1.2 %"."""
    return "" if fraction is None else f"{fraction * 100:.2g} %"


@register.filter
def p_text(value) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3g}"


@register.filter
def repetitions_text(repetitions) -> str:
    """A spec's repetitions: '3', or 'adaptive: 3 to 10 until the CI is within ± 2 %'."""
    if not isinstance(repetitions, dict):
        return "each benchmark's default" if repetitions is None else str(repetitions)
    until = []
    if repetitions.get("target_pct") is not None:
        until.append(f"the 95 % CI is within ± {repetitions['target_pct']:g} % of the mean")
    if repetitions.get("resolve_pct") is not None:
        until.append(f"a change of {repetitions['resolve_pct']:g} % can be seen at the noise")
    words = f"adaptive: {repetitions.get('min')} to {repetitions.get('max')}, until " + " or ".join(
        until
    )
    budget = repetitions.get("budget_s")
    return f"{words}, within {progress.duration_words(budget)}" if budget else words


@register.filter
def order_text(campaign) -> str:
    """The order a campaign's runs took on each board, e.g. "presets in counterbalanced
    rounds: A, B | B, A | A, B (every other board starts with B); benchmarks in the spec's
    order"."""
    spec = campaign.spec if isinstance(campaign.spec, dict) else {}
    names = [str(name) for name in spec.get("presets") or []]
    repetitions = spec.get("repetitions")
    rounds = repetitions.get("min") if isinstance(repetitions, dict) else repetitions
    within = campaign.get_order_display()
    if len(names) < 2 or not isinstance(rounds, int):
        return f"{within} (seed {campaign.seed})"
    shown = " | ".join(
        ", ".join(names[index] for index in presets_in_round)
        for presets_in_round in plans.preset_rounds(len(names), min(rounds, 4))
    )
    more = " | ..." if rounds > 4 else ""
    shuffled = "shuffled anew in each round" if spec.get("order") == "shuffled" else "in order"
    return (
        f"presets in counterbalanced rounds, one per repetition: {shown}{more} (every other "
        f"board starts with {names[-1]}); the benchmarks {shuffled} within a round "
        f"(seed {campaign.seed})"
    )
