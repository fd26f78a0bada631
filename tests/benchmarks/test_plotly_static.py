"""plotly.js from pifarm's static files, with its own rules in a stylesheet (no inline style)."""

from pathlib import Path

from django.contrib.staticfiles import finders
from django.template.loader import get_template

from benchmarks import plotly_static

ROOT = Path(__file__).resolve().parents[2]


def test_plotly_js_is_found_as_a_static_file_from_the_plotly_package():
    found = Path(finders.find(plotly_static.PLOTLY_JS))
    assert found.name == "plotly.min.js" and found.parent.name == "package_data"
    listed = [path for finder in finders.get_finders() for path, _ in finder.list([])]
    assert "plotly.min.js" in listed


def test_the_stylesheet_holds_the_rules_of_the_plotly_js_served():
    """After an upgrade of plotly: python -m benchmarks.plotly_static > static/plotly.css"""
    kept = (ROOT / "static" / "plotly.css").read_text()
    assert kept == plotly_static.stylesheet()
    assert ".js-plotly-plot .plotly .main-svg {position:absolute;" in kept


def test_the_pages_mark_every_style_plotly_js_would_write_inline_as_present():
    partial = get_template("benchmarks/_plotly.html").template.source
    assert 'id="plotly.js-style-global" class="no-inline-styles"' in partial
    for style_id in plotly_static.other_style_ids():
        assert f'id="{style_id}"' in partial
