"""The OpenAPI schema at /api/v1/schema/ and its docs page, served by pifarm itself."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from tests.api.support import Api

pytestmark = pytest.mark.django_db
SCHEMA = reverse("api:schema")
DOCS = reverse("api:docs")


def test_the_schema_describes_every_endpoint_and_the_token(client, viewer):
    response = Api(client, viewer).get(SCHEMA, format="json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "pifarm API"
    assert set(schema["paths"]) == {
        "/api/v1/boards/",
        "/api/v1/boards/{code}/",
        "/api/v1/presets/",
        "/api/v1/presets/{code}/",
        "/api/v1/campaigns/",
        "/api/v1/campaigns/{code}/",
        "/api/v1/campaigns/{code}/cancel/",
        "/api/v1/runs/",
        "/api/v1/runs/{code}/",
        "/api/v1/measurements/",
        "/api/v1/comparisons/",
        "/api/v1/comparisons/{code}/",
    }
    assert schema["components"]["securitySchemes"]["token"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A token made on the API tokens page.",
    }
    filters = {p["name"] for p in schema["paths"]["/api/v1/measurements/"]["get"]["parameters"]}
    assert filters == {"campaign", "run", "metric", "benchmark", "board", "page", "page_size"}


def test_the_schema_needs_a_login_or_a_token(client):
    assert client.get(SCHEMA).status_code == 401


def test_the_docs_page_loads_only_files_pifarm_serves(client, viewer):
    client.force_login(viewer)
    response = client.get(DOCS)
    assert response.status_code == 200
    page = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(source.startswith("/") for source in sources), sources
    for source in sources:
        if source.startswith("/static/"):
            assert finders.find(source.removeprefix("/static/")), source
    assert "<style" not in page and "<script>" not in page  # nothing inline for the CSP
    script = client.get(DOCS, {"script": ""})
    assert script.status_code == 200 and script["Content-Type"] == "application/javascript"
    assert SCHEMA in script.content.decode()


def test_the_docs_page_sends_a_visitor_to_the_login_page(client):
    response = client.get(DOCS)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def directives(response) -> dict[str, str]:
    policy = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def test_only_the_docs_page_may_show_data_images(client, viewer):
    client.force_login(viewer)
    docs, dashboard = directives(client.get(DOCS)), directives(client.get("/"))
    assert docs.pop("img-src") == "'self' data:"
    assert docs == dashboard  # nothing else is loosened
    assert "img-src" not in dashboard


def test_a_path_the_api_does_not_have_is_a_json_404_that_points_to_the_docs(client, viewer):
    response = Api(client, viewer).get("/api/v1/measurement/")
    assert response.status_code == 404
    assert response.json() == {
        "detail": "There is no /api/v1/measurement/ in the API: /api/v1/docs/ lists what there is."
    }


def test_every_page_links_the_api_docs(client, viewer):
    """They were linked from the tokens page alone."""
    client.force_login(viewer)
    for page in (reverse("devices:dashboard"), reverse("benchmarks:campaigns")):
        assert f'<a href="{DOCS}">API docs</a>' in client.get(page).content.decode()
