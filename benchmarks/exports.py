"""A saved comparison's selection, and its figures as CSV and JSON: one row per group, with
its statistics, its comparison with the baseline and its environment.

Words in the environment come from boards (an OS name, a tool's version line): the CSV
defuses any cell a spreadsheet would read as a formula, as the campaign CSV does.
"""

import csv

from django.utils.text import slugify

from benchmarks import comparisons
from benchmarks.models import Comparison
from benchmarks.results import defused

STATISTICS = ("n", "mean", "median", "sd", "relative_sd", "ci_low", "ci_high", "min", "max")
AGAINST_BASELINE = (
    "ratio", "percent_change", "percent_ci_low", "percent_ci_high", "p_value", "p_holm",
    "outcome", "verdict",
)  # fmt: skip
ENVIRONMENT = (
    "board model", "kernel", "kernel bits", "userland bits", "OS", "firmware", "governor",
    "preset version", "measured Arm clock", "tool versions",
)  # fmt: skip


def runs_of(comparison: Comparison):
    return comparisons.runs_selected(
        comparison.campaigns.values_list("pk", flat=True),
        comparison.runs.values_list("pk", flat=True),
    )


def choice(comparison: Comparison) -> dict:
    return {
        "benchmark": comparison.benchmark, "metric": comparison.metric,
        "group_by": comparison.group_by, "baseline": comparison.baseline,
        "include_suspects": comparison.include_suspects,
    }  # fmt: skip


def filename(comparison: Comparison, kind: str) -> str:
    """Letters, digits and dashes only: the name is the user's, the header must stay one."""
    name = slugify(comparison.name)[:60] or "comparison"
    return f"{name}-{str(comparison.code)[:8]}.{kind}"


def rows(result: comparisons.Result) -> list[dict]:
    """A dict per group, in the page's order: the CSV's columns and values."""
    found = []
    for group in result.groups:
        row = {"group": group.key, "baseline": group.key == result.baseline,
               "unit": result.unit, **group.description.to_dict()}  # fmt: skip
        row |= dict.fromkeys(AGAINST_BASELINE, "")
        if (comparison := result.comparisons.get(group.key)) is not None:
            low, high = comparison.percent_ci or ("", "")
            row |= {
                "ratio": comparison.ratio, "percent_change": comparison.percent_change,
                "percent_ci_low": low, "percent_ci_high": high, "p_value": comparison.p_value,
                "p_holm": comparison.p_adjusted, "outcome": comparison.outcome,
                "verdict": comparison.verdict,
            }  # fmt: skip
        row["suspects_excluded"] = group.suspects_excluded
        row |= {name: group.environment.get(name, "") for name in ENVIRONMENT}
        row["boards"] = "; ".join(
            f"{name}: n={spread.n}, mean={spread.mean:.6g}" for name, spread in group.boards.items()
        )
        found.append(row)
    return found


def write_csv(result: comparisons.Result, out) -> None:
    table = rows(result)
    writer = csv.writer(out)
    writer.writerow(table[0].keys())
    for row in table:
        writer.writerow([defused("" if value is None else value) for value in row.values()])


def as_json(comparison: Comparison, result: comparisons.Result) -> dict:
    """The comparison's choices and its groups; each group's boards as numbers, not words."""
    groups = rows(result)
    for row, group in zip(groups, result.groups, strict=True):
        row["boards"] = {name: spread.to_dict() for name, spread in group.boards.items()}
        row["environment"] = {name: row.pop(name) for name in ENVIRONMENT}
    return {
        "name": comparison.name, "code": str(comparison.code),
        "benchmark": result.benchmark, "metric": result.metric, "unit": result.unit,
        "higher_is_better": result.higher_is_better, "group_by": result.group_by,
        "baseline": result.baseline, "include_suspects": result.include_suspects,
        "confidence": 0.95, "test": "Welch's t-test, p-values Holm-adjusted over the groups",
        "groups": groups,
    }  # fmt: skip
