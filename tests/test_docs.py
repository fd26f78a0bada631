"""The README and docs/ stay true: every command, make target, script and link they name
exists, the benchmark page is the catalog's, and the README stays short enough to read."""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands

from pisim import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "pisim" / "README.md"]
README_MOST_LINES = 200

FENCED = re.compile(r"```[^\n]*\n(.*?)```", re.S)
INLINE = re.compile(r"`([^`\n]+)`")
MAKE = re.compile(r"(?:^|[\s;&|(])make ([a-z][\w-]*)", re.M)
MANAGE = re.compile(r"manage\.py ([a-z_]+)")
PISIM = re.compile(r"python -m pisim ([a-z][\w-]*)")
SCRIPT = re.compile(r"\b(bench/[\w-]+\.py)")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
TARGET = re.compile(r"^([a-z][\w-]*):", re.M)


def code(page: Path) -> str:
    """What a page shows as code (fenced blocks and `spans`): prose may say "make sure"."""
    text = page.read_text()
    return "\n".join(FENCED.findall(text) + INLINE.findall(FENCED.sub("", text)))


def named(pattern: re.Pattern) -> list[tuple[str, str]]:
    return [(page.name, name) for page in PAGES for name in pattern.findall(code(page))]


def test_readme_reads_in_two_minutes():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MOST_LINES, f"README.md has {lines} lines; docs/ is for the rest"


def test_every_make_target_named_exists():
    targets = set(TARGET.findall((ROOT / "Makefile").read_text()))
    mentioned = named(MAKE)
    assert {"demo", "test", "test-fast"} <= {name for _, name in mentioned}
    assert [(page, name) for page, name in mentioned if name not in targets] == []


def test_every_management_command_named_exists():
    commands = get_commands()
    mentioned = named(MANAGE)
    assert {"benchmarks", "campaign", "configtxt", "migrate"} <= {name for _, name in mentioned}
    assert [(page, name) for page, name in mentioned if name not in commands] == []


def test_every_pisim_command_named_exists(capsys):
    mentioned = named(PISIM)
    assert {"up", "down", "build-root"} <= {name for _, name in mentioned}
    unknown = []
    for page, name in mentioned:
        with pytest.raises(SystemExit) as exit_status:
            cli.main([name, "--help"])
        if exit_status.value.code != 0:
            unknown.append((page, name))
    capsys.readouterr()
    assert unknown == []


def test_every_bench_script_and_link_named_exists():
    missing = [(page, script) for page, script in named(SCRIPT) if not (ROOT / script).exists()]
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                missing.append((page.name, target))
    assert missing == []


def test_benchmark_page_is_the_catalogs():
    """docs/benchmarks.md is generated (`make docs`): a catalog change must regenerate it."""
    out = io.StringIO()
    call_command("benchmarks", "--markdown", stdout=out)
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert page == out.getvalue(), "docs/benchmarks.md differs from the catalog: run make docs"
    assert "## sha1sum" in page and "| `size` | size | `2G` |" in page
