"""plotly.js served from pifarm's own origin, taken from the plotly Python package.

The package that builds the figures (benchmarks.charts) ships the plotly.js they are drawn
with, in plotly/package_data. This static finder offers that one file as
`vendor/plotly.min.js`: `collectstatic` copies it with the rest (whitenoise then serves it,
hashed and compressed), and runserver and the tests find it directly. So plotly.js is never in
the repository, never fetched from a CDN (labs are often offline), and always the version the
pinned Python package was built for.
"""

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "vendor/plotly.min.js"
# Found, not imported: the system checks load this finder, and importing plotly would cost
# every management command a noticeable part of a second.
_PACKAGE_DATA = Path(importlib.util.find_spec("plotly").origin).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=_PACKAGE_DATA)
        self.storage.prefix = "vendor"  # collectstatic puts the file under this folder

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        found = str(_PACKAGE_DATA / "plotly.min.js") if path == PLOTLY_JS else None
        if find_all:
            return [found] if found else []
        return found

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage


# The rules plotly.js adds at load time: {"X .main-svg": "position:absolute;...", ...}, where X
# is a plot and Y the notifier.
_RULES = re.compile(r'\{"X,X div":.*?\};for\(', re.S)
_RULE = re.compile(r'"([^"]+)":(?:\'([^\']*)\'|"([^"]*)")')
# The other <style> it makes when loading (MapLibre's, for map traces), by its fixed id.
_OTHER_STYLE = re.compile(
    r'getElementById\("([0-9a-f]{64})"\)\)\{var \w+=document\.createElement\("style"\)'
)


def _bundle() -> str:
    return (_PACKAGE_DATA / "plotly.min.js").read_text(encoding="utf-8")


def stylesheet() -> str:
    """plotly.js's own rules, as the CSS file that stands in for its inline stylesheet."""
    block = _RULES.search(_bundle()).group(0)
    version = importlib.metadata.version("plotly")
    source = f"the plotly.js of plotly {version}, by benchmarks/plotly_static.py"
    lines = [f"/* plotly.js's own rules ({source}) */"]
    for selector, single, double in _RULE.findall(block):
        selector = selector.replace("X", ".js-plotly-plot .plotly").replace("Y", ".plotly-notifier")
        lines.append(f"{selector} {{{single or double}}}")
    return "\n".join(lines) + "\n"


def other_style_ids() -> list[str]:
    """Ids of the other <style> elements plotly.js makes unless an element has that id."""
    return _OTHER_STYLE.findall(_bundle())


if __name__ == "__main__":
    sys.stdout.write(stylesheet())
