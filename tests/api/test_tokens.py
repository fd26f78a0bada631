"""API tokens: made on their page and shown once, kept only as a SHA-256, refused once
revoked; requests without one, or with a bad one, get a 401 that says why."""

import hashlib
import re

import pytest
from django.test import Client
from django.urls import reverse

from benchmarks.models import ApiToken
from devices import roles
from tests.api.support import Api
from tests.conftest import member

pytestmark = pytest.mark.django_db
TOKENS = reverse("benchmarks:tokens")
BOARDS = reverse("api:board-list")


def make_token(client, name="nightly CI", **fields) -> str:
    response = client.post(TOKENS, {"name": name, **fields})
    assert response.status_code == 200
    return re.search(r'<pre class="token" id="new-token">([^<]+)</pre>', response.content.decode())[
        1
    ]


def bearer(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_a_token_is_shown_once_and_kept_only_as_its_sha256(client, viewer):
    client.force_login(viewer)
    token = make_token(client)
    row = ApiToken.objects.get()
    assert row.owner == viewer and row.name == "nightly CI" and not row.sees_addresses
    assert row.digest == hashlib.sha256(token.encode()).hexdigest()
    assert len(token) >= 43  # secrets.token_urlsafe(32)
    stored = " ".join(str(value) for value in ApiToken.objects.values().get().values())
    assert token not in stored
    listed = client.get(TOKENS).content.decode()
    assert "nightly CI" in listed and token not in listed
    assert client.get(BOARDS, **bearer(token)).status_code == 200


def test_each_token_is_new(client, viewer):
    client.force_login(viewer)
    assert make_token(client, "one") != make_token(client, "two")


def test_a_token_may_be_made_to_see_addresses(client, viewer):
    client.force_login(viewer)
    make_token(client, sees_addresses="on")
    assert ApiToken.objects.get().sees_addresses


def test_a_token_without_a_name_is_refused(client, viewer):
    client.force_login(viewer)
    response = client.post(TOKENS, {"name": ""})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_a_revoked_token_gets_a_401_that_says_so(client, viewer):
    client.force_login(viewer)
    token = make_token(client)
    row = ApiToken.objects.get()
    response = client.post(reverse("benchmarks:revoke_token", args=[row.code]))
    assert response.status_code == 302
    row.refresh_from_db()
    assert row.revoked is not None
    response = Client().get(BOARDS, **bearer(token))
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert "nightly CI) was revoked on" in response.json()["detail"]
    assert "revoked" in client.get(TOKENS).content.decode()


def test_revoking_twice_says_it_was_revoked_already(client, viewer):
    client.force_login(viewer)
    make_token(client)
    revoke = reverse("benchmarks:revoke_token", args=[ApiToken.objects.get().code])
    client.post(revoke)
    response = client.post(revoke, follow=True)
    assert "nightly CI was revoked already." in response.content.decode()


def test_an_unknown_token_gets_a_401(client):
    response = client.get(BOARDS, **bearer("not-a-token-anyone-made"))
    assert response.status_code == 401
    assert "This token is not known" in response.json()["detail"]


def test_no_token_gets_a_401_naming_the_bearer_scheme(client):
    response = client.get(BOARDS)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="pifarm"'
    assert response.json()["detail"]


def test_a_malformed_header_gets_a_401_that_says_how(client):
    response = client.get(BOARDS, HTTP_AUTHORIZATION="Bearer two words")
    assert response.status_code == 401
    assert "Authorization: Bearer <token>" in response.json()["detail"]


def test_a_deactivated_users_token_is_refused(client, viewer):
    api = Api(client, viewer)
    viewer.is_active = False
    viewer.save()
    response = api.get(BOARDS)
    assert response.status_code == 401
    assert "deactivated" in response.json()["detail"]


def test_a_token_records_when_it_was_last_used(client, viewer):
    api = Api(client, viewer)
    assert api.row.last_used is None
    api.get(BOARDS)
    api.row.refresh_from_db()
    assert api.row.last_used is not None


def test_a_token_acts_with_its_owners_role_as_it_is_now(client, viewer, django_user_model):
    api = Api(client, viewer)
    assert api.post(reverse("api:campaign-list"), {}).status_code == 403
    roles.assign(viewer, roles.OPERATOR)
    assert api.post(reverse("api:campaign-list"), {}).status_code == 400  # allowed; spec empty


def test_only_the_owner_sees_and_revokes_a_token(client, viewer, django_user_model):
    other = member(django_user_model, "otto", roles.VIEWER)
    Api(client, other)
    row = ApiToken.objects.get()
    client.force_login(viewer)
    assert "test script" not in client.get(TOKENS).content.decode()
    assert client.post(reverse("benchmarks:revoke_token", args=[row.code])).status_code == 404
    row.refresh_from_db()
    assert row.revoked is None


def test_the_token_page_needs_a_login_and_takes_get_and_post_only(client, viewer):
    response = client.get(TOKENS)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    client.force_login(viewer)
    assert client.put(TOKENS).status_code == 405
    assert client.get(reverse("benchmarks:revoke_token", args=[ApiToken().code])).status_code == 405


def test_the_navigation_links_the_token_page(client, viewer):
    client.force_login(viewer)
    assert f'href="{TOKENS}"' in client.get(reverse("devices:dashboard")).content.decode()


def test_a_browser_session_reads_the_api_and_must_send_its_csrf_token(viewer):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(viewer)
    assert browser.get(BOARDS).status_code == 200
    response = browser.post(reverse("api:campaign-list"), {}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_no_cache_keeps_an_answer_to_a_token(client, viewer):
    response = Api(client, viewer).get(BOARDS)
    assert "no-store" in response["Cache-Control"]
