"""Every URL of the site, for each role: who gets the page and who gets a 403.

The test is parametrised from the URL resolver itself, so a new URL without an entry in ACCESS
fails here until someone decides who may use it. The admin site keeps Django's own checks; it
is covered in tests/devices/test_admin_roles.py.
"""

import re
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from benchmarks.models import ApiToken, Campaign, Comparison, Drift, Run, Schedule, ShareLink
from devices import presets
from devices.models import Application, Board, BoardTask, FactSnapshot, Preset

from .benchmarks.factories import make_campaign, make_drift, measure
from .conftest import PASSWORD
from .devices.factories import TEST_PUBLIC_KEY, make_board

pytestmark = pytest.mark.django_db

ROLE_ORDER = ["anonymous", "viewer", "operator", "admin"]
ROLE_FIXTURES = {"viewer": "viewer", "operator": "operator", "admin": "user"}  # tests/conftest.py


@dataclass(frozen=True)
class Access:
    needs: str | None  # the lowest role allowed; None: anyone, not logged in included
    method: str = "get"
    allowed: int = 200  # what an allowed user gets (302: a POST that redirects)
    json: bool = False  # answers a JSON 403, also to the anonymous, instead of a login redirect
    api: bool = False  # the JSON API: a 401 to the anonymous (how to send a token), JSON 403s


POST = {"method": "post", "allowed": 302}
ACCESS = {
    "devices:dashboard": Access("viewer"),
    "devices:board_statuses": Access("viewer", json=True),
    "devices:register": Access("admin"),
    "devices:check_all": Access("operator", **POST),
    "devices:board": Access("viewer"),
    "devices:board_live": Access("viewer"),
    "devices:edit": Access("admin"),
    "devices:remove": Access("admin", **POST),
    "devices:restore": Access("admin", **POST),
    "devices:confirm": Access("viewer"),
    "devices:confirm_decision": Access("admin", **POST),
    "devices:fetch_host_key": Access("admin", **POST),
    "devices:start_task": Access("operator", **POST),
    # posted without a benchmark chosen: the board page again, saying to choose one
    "benchmarks:prepare_board": Access("operator", method="post", allowed=400),
    "devices:restore_stock": Access("operator", **POST),
    "devices:snapshot": Access("viewer"),
    "devices:task_status": Access("viewer", json=True),
    "devices:preset_from_board": Access("admin", **POST),
    "devices:presets": Access("viewer"),
    "devices:preset_new": Access("admin"),
    "devices:preset": Access("viewer"),
    "devices:preset_edit": Access("admin"),
    "devices:preset_version": Access("viewer"),
    "devices:preset_clone": Access("admin", **POST),
    "devices:apply": Access("operator"),
    "devices:applications": Access("viewer"),
    "devices:application": Access("viewer"),
    "devices:application_status": Access("viewer", json=True),
    "benchmarks:catalog": Access("viewer"),
    "benchmarks:campaigns": Access("viewer"),
    "benchmarks:campaign_new": Access("operator"),
    "benchmarks:campaign": Access("viewer"),
    "benchmarks:campaign_status": Access("viewer", json=True),
    "benchmarks:cancel": Access("operator", **POST),
    "benchmarks:schedules": Access("viewer"),
    "benchmarks:canary_set_up": Access("operator", **POST),
    "benchmarks:drift_clear": Access("operator", **POST),
    "benchmarks:schedule": Access("viewer"),
    "benchmarks:schedule_pause": Access("operator", **POST),
    "benchmarks:schedule_resume": Access("operator", **POST),
    "benchmarks:retry": Access("operator", **POST),
    "benchmarks:cancel_run": Access("operator", **POST),
    "benchmarks:runs_csv": Access("viewer"),
    "benchmarks:run_telemetry": Access("viewer"),
    # The world's campaign was not made from a question: it has no answer (tests/benchmarks/
    # test_views_answers.py reads one that has).
    "benchmarks:answer": Access("viewer", allowed=404),
    "benchmarks:comparisons": Access("viewer"),
    "benchmarks:comparison_new": Access("viewer"),
    "benchmarks:bitness": Access("viewer"),
    # posted with nothing chosen: the builder again, saying what to choose
    "benchmarks:comparison_save": Access("viewer", method="post", allowed=400),
    "benchmarks:comparison": Access("viewer"),
    "benchmarks:comparison_csv": Access("viewer"),
    "benchmarks:comparison_json": Access("viewer"),
    "benchmarks:comparison_md": Access("viewer"),
    # The world's comparison is another user's: operators share any comparison, a viewer
    # only their own (tests/benchmarks/test_sharing.py).
    "benchmarks:share_create": Access("operator", **POST),
    "benchmarks:share_revoke": Access("operator", **POST),
    # A shared comparison: anyone with the link, no login.
    "benchmarks:share": Access(None),
    "benchmarks:share_csv": Access(None),
    "benchmarks:share_json": Access(None),
    "benchmarks:share_md": Access(None),
    # Any user has API tokens; the world's token is another user's, so revoking it is a 404
    # (the owner's revoke: tests/api/test_tokens.py).
    "benchmarks:tokens": Access("viewer"),
    "benchmarks:revoke_token": Access("viewer", method="post", allowed=404),
    # Everything the API reads is a viewer's; cancelling is its one write.
    **{
        f"api:{name}": Access("viewer", api=True)
        for name in (
            *(
                f"{kind}-{view}"
                for kind in ("board", "preset", "campaign", "run", "comparison")
                for view in ("list", "detail")
            ),
            "measurement-list",
            "schema",
        )
    },
    "api:campaign-cancel": Access("operator", method="post", api=True),
    "api:docs": Access("viewer"),
    "api:no_such_endpoint": Access(None, allowed=404),
    "login": Access(None),
    "logout": Access(None, **POST),
}


def site_urls(resolver=None, namespace="", prefix=""):
    """(name as reverse() spells it, route) of every URL the site serves outside the admin."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            if inner != "admin:":
                yield from site_urls(entry, inner, route)
        elif isinstance(entry, URLPattern):
            yield f"{namespace}{entry.name or entry.pattern}", route


URLS = dict(site_urls())


def test_every_entry_is_a_url_the_site_serves():
    assert set(ACCESS) - set(URLS) == set()


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """One of everything a URL can point at, by the first part of the URLs that show it: made
    once for the module's four hundred tests (each test's own changes are rolled back with
    it), and removed after them."""
    with django_db_blocker.unblock():
        made = _world()
        yield made
        # A board's history protects it (boards are retired, not deleted): it goes first.
        for model in (Comparison, Campaign, BoardTask, Application, FactSnapshot, Board, Preset):
            model.objects.all().delete()
        Schedule.objects.all().delete()
        get_user_model().objects.all().delete()  # and what they own
        # The next module finds the database as pytest-django leaves it: empty of these.
        assert not any(model.objects.exists() for model in (Run, ApiToken, Drift, ShareLink))


def _world() -> dict:
    board = make_board(offered_host_key=TEST_PUBLIC_KEY)
    snapshot = FactSnapshot.objects.create(
        board=board,
        facts={"config_txt": "arm_freq=1500\n", "revision": {"family": "pi4"}},
    )
    task = BoardTask.objects.create(board=board, kind="probe", state="done")
    preset = Preset.objects.create(name="mild", families=["pi4"])
    version = presets.new_version(preset, options={"arm_freq": "1700"})
    application = Application.objects.create(board=board, version=version, state="verified")
    # A lane still queued: a retry adds runs without queueing anything (no Redis here).
    campaign = make_campaign(board, states=["queued", "failed"])
    someone = get_user_model().objects.create_user("someone-else")
    token = ApiToken.objects.create(owner=someone, name="someone's", digest="0" * 64)
    compared = make_campaign(board, name="compared", states=["done"])
    measure(compared.runs.get(), throughput=(412.5, "MB/s"))
    comparison = Comparison.objects.create(
        owner=someone, name="someone's", benchmark="sha1sum", metric="throughput", group_by="board"
    )
    comparison.campaigns.set([compared])
    link = ShareLink.objects.create(comparison=comparison, created_by=someone)
    schedule = Schedule.objects.create(name="nightly", spec={}, every_s=3600)
    drift = make_drift(board)
    return {
        "boards": board.code,
        "presets": preset.code,
        "tasks": task.code,
        "applications": application.code,
        "kind": "probe",
        "pk": snapshot.pk,
        "number": version.number,
        "campaigns": campaign.code,
        "run": campaign.runs.get(state="queued").code,
        "runs": campaign.runs.get(state="queued").code,
        "tokens": token.code,
        "comparisons": comparison.code,
        "link": link.pk,
        "token": link.token,
        "schedules": schedule.code,
        "drift": drift.pk,
    }


def url_for(name: str, world: dict) -> str:
    route = URLS[name]
    path = route.removeprefix("api/v1/").removeprefix("^")  # the API's router writes regexes
    values = {**world, "code": world.get(path.split("/", 1)[0])}
    parameters = re.findall(r"<(?:\w+:)?(\w+)>", route)
    return reverse(name, kwargs={key: values[key] for key in parameters})


def expected_status(access: Access, role: str) -> int:
    if access.needs is None or ROLE_ORDER.index(role) >= ROLE_ORDER.index(access.needs):
        return access.allowed
    if role == "anonymous" and access.api:
        return 401
    if role == "anonymous" and not access.json:
        return 302  # to the login page
    return 403


@pytest.mark.parametrize("role", ROLE_ORDER)
@pytest.mark.parametrize("name", sorted(URLS))
def test_each_role_gets_what_it_may_use_and_a_403_for_the_rest(name, role, client, world, request):
    access = ACCESS.get(name)
    if access is None:
        pytest.fail(f"{name} has no entry in ACCESS: decide which role may use it")
    if role != "anonymous":
        client.force_login(request.getfixturevalue(ROLE_FIXTURES[role]))
    response = getattr(client, access.method)(url_for(name, world))
    assert response.status_code == expected_status(access, role), response.content[:500]
    if response.status_code == 403:
        expected_type = "application/json" if access.json or access.api else "text/html"
        assert response["Content-Type"].startswith(expected_type)
    if role == "anonymous" and response.status_code == 302 and access.needs:
        assert response["Location"].startswith("/login/")


READ = sorted(name for name, access in ACCESS.items() if access.method == "get")


@pytest.mark.parametrize("name", READ)
def test_each_page_read_with_get_answers_head_as_it_answers_get(name, client, world, request):
    """HTTP: a server that answers GET answers HEAD too, the same but for the body (a
    monitor's or a link checker's HEAD got a 405)."""
    access = ACCESS[name]
    if access.needs is not None:
        client.force_login(request.getfixturevalue(ROLE_FIXTURES[access.needs]))
    url = url_for(name, world)
    read = client.get(url)
    assert read.status_code == access.allowed
    head = client.head(url)
    assert head.status_code == read.status_code, name
    assert head.get("Content-Type") == read.get("Content-Type")
    assert b"".join(head.streaming_content if head.streaming else [head.content]) == b""


def test_the_403_page_names_the_role_needed_and_whom_to_ask(client, viewer, user, world):
    user.email = "alice@lab.example"
    user.save()
    client.force_login(viewer)
    response = client.get(url_for("devices:apply", world))
    body = response.content.decode()
    assert response.status_code == 403
    assert "This needs the <strong>operator</strong> role" in body
    assert "You are logged in as vera, with the viewer role" in body
    assert "an admin (a user with the admin role) can give you that role" in body
    assert "alice" not in body  # no admin's name nor address, to whoever is refused
    assert 'class="topbar"' in body  # the site's own page, not Django's bare one


def test_a_user_without_a_role_is_told_so_after_logging_in(client, django_user_model):
    django_user_model.objects.create_user("newcomer", password=PASSWORD)
    response = client.post("/login/", {"username": "newcomer", "password": PASSWORD}, follow=True)
    body = response.content.decode()
    assert response.status_code == 403
    assert "This needs the <strong>viewer</strong> role" in body
    assert "with no role yet" in body
    assert "manage.py createuser" in body  # there is no admin to ask yet


def test_json_endpoints_say_why_they_refuse(client, world):
    response = client.get(url_for("devices:task_status", world))
    assert response.json() == {"error": "Log in again to follow this."}


# The controls each role sees, by the URL they lead to: a user is never shown one they may
# not use, and is shown every one they may.
CONTROLS = {
    "devices:dashboard": ["devices:register", "devices:check_all"],
    "devices:board": [
        "devices:start_task",
        "benchmarks:canary_set_up",
        "benchmarks:drift_clear",
        "benchmarks:prepare_board",
        "devices:restore_stock",
        "devices:edit",
        "devices:preset_from_board",
        "devices:fetch_host_key",
        "devices:remove",
    ],
    "devices:confirm": ["devices:confirm_decision"],
    "devices:presets": ["devices:preset_new"],
    "devices:preset": ["devices:preset_edit", "devices:apply", "devices:preset_clone"],
    "devices:preset_version": ["devices:apply"],
    "benchmarks:catalog": ["benchmarks:campaign_new"],
    "benchmarks:campaigns": ["benchmarks:campaign_new"],
    "benchmarks:campaign": ["benchmarks:cancel", "benchmarks:retry", "benchmarks:cancel_run"],
    "benchmarks:schedule": ["benchmarks:schedule_pause"],
}


@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
@pytest.mark.parametrize("page", sorted(CONTROLS))
def test_pages_show_only_the_controls_the_role_may_use(page, role, client, world, request):
    client.force_login(request.getfixturevalue(ROLE_FIXTURES[role]))
    body = client.get(url_for(page, world)).content.decode()
    for target in CONTROLS[page]:
        allowed = expected_status(ACCESS[target], role) == ACCESS[target].allowed
        assert (f'"{url_for(target, world)}"' in body) is allowed, (target, role)


def test_a_refusal_is_logged_as_one_line_without_a_traceback(client, viewer, world, caplog):
    client.force_login(viewer)
    with caplog.at_level("WARNING", logger="django.request"):
        assert client.get(url_for("devices:apply", world)).status_code == 403
    refusals = [r for r in caplog.records if r.name == "django.request"]
    assert [r.getMessage() for r in refusals] == [
        f"Forbidden (Permission denied): {url_for('devices:apply', world)}"
    ]
    assert refusals[0].exc_info is None
