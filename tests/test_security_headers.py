"""Every page carries a self-only Content-Security-Policy; a logged-in user's pages are never
cached, static files still are."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def policy(response) -> dict[str, list[str]]:
    directives = (part.split() for part in response["Content-Security-Policy"].split(";"))
    return {words[0]: words[1:] for words in directives if words}


@pytest.mark.parametrize("page", ["login", "devices:dashboard", "admin:index"])
def test_every_page_allows_only_its_own_origin(client, staff, page):
    client.force_login(staff)
    directives = policy(client.get(reverse(page)))
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"][0] == "'self'"
    assert "'unsafe-inline'" not in directives["style-src"]
    assert directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]


@pytest.mark.parametrize(
    "page", ["devices:dashboard", "devices:board_statuses", "devices:presets", "admin:index"]
)
def test_a_logged_in_users_pages_are_never_stored(client, staff, page):
    client.force_login(staff)
    response = client.get(reverse(page))
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]


def test_static_files_stay_cacheable_for_a_logged_in_user(client, user, settings):
    # The login page's stylesheet, from whitenoise as under DEBUG (no collectstatic in tests).
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    client.force_login(user)
    response = client.get(settings.STATIC_URL + "pifarm.css")
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")


def test_templates_hold_no_inline_script_style_or_event_handler():
    """What the policy would block: code and styles belong in static/, data in json_script."""
    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+=", re.I)
    offenders = [
        f"{path.relative_to(TEMPLATES)}: {match.group(0)}"
        for path in TEMPLATES.rglob("*.html")
        for match in inline.finditer(path.read_text())
    ]
    assert offenders == []


def test_browsers_find_a_favicon_at_the_root(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
