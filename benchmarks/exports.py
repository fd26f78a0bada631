"""A saved comparison's selection, and its figures as CSV and JSON: one row per group, with
its statistics, its comparison with the baseline and its environment; and as a Markdown table
for forum and blog posts.

Words in the environment come from boards (an OS name, a tool's version line): the CSV
defuses any cell a spreadsheet would read as a formula, as the campaign CSV does.
"""

import re

from django.http import HttpResponse, JsonResponse
from django.utils.text import slugify

from benchmarks import comparisons
from benchmarks.models import Comparison
from benchmarks.results import csv_writer, defused
from benchmarks.templatetags.campaign_tags import number, percent

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
        "benchmark": comparison.benchmark,
        "metric": comparison.metric,
        "group_by": comparison.group_by,
        "baseline": comparison.baseline,
        "include_suspects": comparison.include_suspects,
    }


def filename(comparison: Comparison, kind: str, name: str | None = None) -> str:
    """Letters, digits and dashes only: the name is the user's, the header must stay one.
    name: the comparison's name as shown (a share page's is redacted)."""
    name = slugify(comparison.name if name is None else name)[:60] or "comparison"
    return f"{name}-{str(comparison.code)[:8]}.{kind}"


def response(comparison: Comparison, result, kind: str, name=None, link="") -> HttpResponse:
    """The comparison as a CSV or JSON download, or as Markdown text (kind "md") with link.
    name: the comparison's name as shown, when not its own (a share page's is redacted)."""
    if kind == "md":
        return markdown_response(as_markdown(result, link))
    if kind == "json":
        data = as_json(comparison, result)
        if name is not None:  # a share page's: the team's own address of it is not shared
            data["name"] = name
            del data["code"]
        found = JsonResponse(data)
    else:
        found = HttpResponse(content_type="text/csv; charset=utf-8")
        write_csv(result, found)
    found["Content-Disposition"] = f'attachment; filename="{filename(comparison, kind, name)}"'
    return found


def markdown_response(text: str) -> HttpResponse:
    return HttpResponse(text, content_type="text/markdown; charset=utf-8")


def rows(result: comparisons.Result) -> list[dict]:
    """A dict per group, in the page's order: the CSV's columns and values."""
    found = []
    for group in result.groups:
        row = {
            "group": group.key,
            "baseline": group.key == result.baseline,
            "unit": result.unit,
            **group.description.to_dict(),
            # A group of more trials than a page draws has its figures from sums, which hold
            # no median: that of the trials drawn, and how many they were.
            "sample_median": group.sample_median if group.sampled else None,
            "sample_n": len(group.values) if group.sampled else None,
        }
        row |= dict.fromkeys(AGAINST_BASELINE)  # None: JSON's null, the CSV's empty cell
        if (comparison := result.comparisons.get(group.key)) is not None:
            low, high = comparison.percent_ci or (None, None)
            row |= {
                "ratio": comparison.ratio,
                "percent_change": comparison.percent_change,
                "percent_ci_low": low,
                "percent_ci_high": high,
                "p_value": comparison.p_value,
                "p_holm": comparison.p_adjusted,
                "outcome": comparison.outcome,
                "verdict": comparison.verdict,
            }
        row["suspects_excluded"] = group.suspects_excluded
        row |= {name: group.environment.get(name) for name in ENVIRONMENT}
        row["boards"] = "; ".join(
            f"{name}: n={spread.n}, mean={spread.mean:.6g}" for name, spread in group.boards.items()
        )
        found.append(row)
    return found


def csv_rows(result: comparisons.Result) -> list[dict]:
    """The CSV's rows: a row per group, then one per board of it with that board's own
    figures (the "board" column; empty on the group's row), every column named alike
    (lower case, words joined by "_")."""
    found = []
    for row, group in zip(rows(result), result.groups, strict=True):
        del row["boards"]  # rows of their own below
        flat = {"group": row.pop("group"), "board": ""}
        flat |= {name.lower().replace(" ", "_"): value for name, value in row.items()}
        found.append(flat)
        for name, spread in group.boards.items():
            board = dict.fromkeys(flat) | {"group": flat["group"], "board": name}
            board |= {"baseline": flat["baseline"], "unit": flat["unit"], **spread.to_dict()}
            found.append(board)
    return found


def write_csv(result: comparisons.Result, out) -> None:
    table = csv_rows(result)
    writer = csv_writer(out)
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
        "name": comparison.name,
        "code": str(comparison.code),
        "benchmark": result.benchmark,
        "metric": result.metric,
        "unit": result.unit,
        "higher_is_better": result.higher_is_better,
        "group_by": result.group_by,
        "baseline": result.baseline,
        "include_suspects": result.include_suspects,
        "confidence": 0.95,
        "test": "Welch's t-test, p-values Holm-adjusted over the groups",
        "groups": groups,
    }


MARKDOWN_HEADER = (
    "Group",
    "n",
    "Mean ± 95 % CI",
    "Change against the baseline (95 % CI)",
    "Verdict",
)


def as_markdown(result: comparisons.Result, link: str = "", may_share: bool = True) -> str:
    """A results table for a forum or a blog, with the comparison's link (or, when link is
    empty, what to do to get one: to those who may share). Cells are escaped: a group named
    "a|b" stays one cell."""
    better = "higher" if result.higher_is_better else "lower"
    lines = [
        f"**{_words(result.metric)}** of {_words(result.benchmark)} in {_words(result.unit)} "
        f"({better} is better), by {_words(result.group_by_label)}, against "
        f"{_words(result.baseline)}; {result.n} trials"
        f"{'' if result.include_suspects else f', {result.suspects_excluded} suspect left out'}.",
        "",
        _row(MARKDOWN_HEADER),
        _row(["---"] * len(MARKDOWN_HEADER)),
    ]
    for group, comparison in result.table:
        lines.append(
            _row(
                [
                    group.key + (" (baseline)" if group.key == result.baseline else ""),
                    str(group.description.n),
                    _mean_text(group.description, result.unit),
                    _change_text(comparison),
                    comparison.verdict if comparison else "baseline",
                ]
            )
        )
    if link:
        lines += ["", f"Shared comparison: {link}"]
    elif may_share:
        lines += ["", "Share it first to get a link."]
    return "\n".join(lines) + "\n"


def _words(text: str) -> str:
    """Text in the sentence above the table, made plain as a cell is."""
    return _cell(text, in_table=False)


def _mean_text(description, unit: str) -> str:
    if description.ci_low is None:
        return f"{number(description.mean)} {unit} (n < 2: no CI)"
    half = (description.ci_high - description.ci_low) / 2
    return f"{number(description.mean)} ± {number(half)} {unit}"


def _change_text(comparison) -> str:
    if comparison is None or comparison.percent_change is None:
        return "–"
    if comparison.percent_ci:
        low, high = comparison.percent_ci
        return f"{percent(comparison.percent_change)} ({percent(low)} to {percent(high)})"
    bounds = "unbounded" if comparison.ci_unbounded else "too few values"
    return f"{percent(comparison.percent_change)} (CI: {bounds})"


def _row(cells) -> str:
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


# What Markdown or the HTML it allows would read as markup in a name (a board's, a campaign's):
# escaped, the cell renders as the words typed. "(" and ")" are left as they are: with "[" and
# "]" escaped they make no link, and the figures' own parentheses stay readable.
_AS_TEXT = str.maketrans(
    {"\\": "\\\\", "|": "\\|", "&": "&amp;", "<": "&lt;", ">": "&gt;"}
    | {mark: f"\\{mark}" for mark in "[]*_`~"}
)


# What an autolinker reads as a link without any markup, in a name or words that hold one:
# GitHub's renderer links "www.", "http://", "https://", "mailto:" and any e-mail address;
# markdown-it's linkify (Discourse's) also a bare "word.tld". No escape stops the e-mail one
# (GitHub finds the address in the text after escapes are undone), so such a cell is written
# as a code span, which no renderer links, and which shows HTML as the characters typed.
_LINKABLE = re.compile(
    r"@|//\S|\bwww\.|\w\.[^\W\d_]{2,}|\b(mailto|xmpp):", re.IGNORECASE
)  # "//8.8.8.8/x": linkify reads a protocol-relative address too
_BACKTICKS = re.compile(r"`+")


def _cell(text: str, in_table: bool = True) -> str:
    """One table cell's text as plain text. Markup is escaped ("|", "\\", HTML's &, < and >,
    Markdown's link, emphasis and code marks, a leading "#"); text an autolinker would read
    as a link is a code span instead, whose "|" a table needs escaped (only a table reads the
    escape inside one). Line breaks become spaces."""
    text = " ".join(str(text).splitlines())
    if _LINKABLE.search(text):
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        fence = "`" * (longest + 1)
        pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
        if in_table:
            text = text.replace("|", "\\|")
        return f"{fence}{pad}{text}{pad}{fence}"
    found = text.translate(_AS_TEXT)
    return f"\\{found}" if found.startswith("#") else found
