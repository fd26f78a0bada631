"""Share links: who may make and revoke them, the public page they open (no login, noindex,
410 once revoked or expired), and what it never shows: a board's host, address, user, serial
or secret, nor its name unless the link shows board names."""

import datetime
import html as html_module
import json
import re

import cmarkgfm
import pytest
from django.urls import reverse
from django.utils import timezone
from markdown_it import MarkdownIt

from benchmarks import exports, sharing
from benchmarks.models import Campaign, Comparison, Lane, ShareLink
from devices.models import Board, FactSnapshot
from tests.benchmarks.factories import lane_on, overclock, saved_comparison, trials
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
BASELINE = [100.0, 102.0, 98.0]
FASTER = [120.0, 123.0, 117.0]
NOT_INDEXED = "noindex, nofollow"


@pytest.fixture
def comparison(viewer):
    """A comparison saved by the viewer: as the board is against an overclock, one board."""
    campaign = Campaign.objects.create(name="overclock", spec={})
    lane = lane_on(campaign, "bench-a")
    trials(lane, BASELINE)
    trials(lane, FASTER, preset_version=overclock())
    return saved_comparison(viewer, campaign)


def share(client, comparison, **data):
    return client.post(reverse("benchmarks:share_create", args=[comparison.code]), data)


def public(client, link: ShareLink, suffix: str = ""):
    """The share page (or its export) as a visitor without a login sees it."""
    client.logout()
    return client.get(link.get_absolute_url() + suffix)


# The model


def test_a_token_is_unguessable_and_each_link_has_its_own(comparison, viewer):
    links = [sharing.create(comparison, viewer) for _ in range(50)]
    tokens = {link.token for link in links}
    assert len(tokens) == 50
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{32}", token)  # 24 random bytes: 192 bits


def test_the_database_refuses_a_token_twice(comparison, viewer):
    from django.db import IntegrityError

    first = sharing.create(comparison, viewer)
    with pytest.raises(IntegrityError):
        ShareLink.objects.create(comparison=comparison, token=first.token)


# Who may share


def test_the_owner_shares_a_comparison_they_saved(client, viewer, comparison):
    client.force_login(viewer)
    response = share(client, comparison, expires_in="7", show_board_names="on")
    assert response.status_code == 302
    link = comparison.shares.get()
    assert link.created_by == viewer and link.show_board_names
    left = link.expires - timezone.now()
    assert datetime.timedelta(days=6, hours=23) < left <= datetime.timedelta(days=7)
    page = client.get(comparison.get_absolute_url()).content.decode()
    assert link.get_absolute_url() in page and "Make a share link" in page


def test_another_viewer_may_not_share_nor_revoke(client, django_user_model, comparison, viewer):
    from devices import roles
    from tests.conftest import member

    link = sharing.create(comparison, viewer)
    other = member(django_user_model, "victor", roles.VIEWER)
    client.force_login(other)
    assert share(client, comparison).status_code == 403
    revoke = reverse("benchmarks:share_revoke", args=[comparison.code, link.pk])
    assert client.post(revoke).status_code == 403
    page = client.get(comparison.get_absolute_url()).content.decode()
    assert "Make a share link" not in page and link.token not in page
    link.refresh_from_db()
    assert link.revoked is None and comparison.shares.count() == 1


def test_an_operator_shares_and_revokes_any_comparison(client, operator, comparison):
    client.force_login(operator)
    assert share(client, comparison).status_code == 302
    link = comparison.shares.get()
    revoke = reverse("benchmarks:share_revoke", args=[comparison.code, link.pk])
    assert client.post(revoke).status_code == 302
    link.refresh_from_db()
    assert link.revoked is not None
    assert client.post(revoke).status_code == 302  # a second click: nothing changes, no error
    assert ShareLink.objects.get().revoked == link.revoked


def test_sharing_needs_a_post_and_a_login(client, viewer, comparison):
    url = reverse("benchmarks:share_create", args=[comparison.code])
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(viewer)
    assert client.get(url).status_code == 405
    assert not ShareLink.objects.exists()


def test_a_past_day_is_refused_and_a_day_wins_over_days(client, viewer, comparison):
    client.force_login(viewer)
    yesterday = timezone.localdate() - datetime.timedelta(days=1)
    response = share(client, comparison, expires_on=yesterday.isoformat())
    assert response.status_code == 400 and "That day has passed." in response.content.decode()
    assert not ShareLink.objects.exists()
    day = timezone.localdate() + datetime.timedelta(days=3)
    share(client, comparison, expires_in="30", expires_on=day.isoformat())
    expires = timezone.localtime(ShareLink.objects.get().expires)
    assert expires.date() == day + datetime.timedelta(days=1) and expires.hour == 0


def test_a_day_past_five_years_is_refused_as_too_far(client, viewer, comparison):
    client.force_login(viewer)
    furthest = sharing.furthest_expiry(timezone.localdate())
    for day in ("9999-12-31", (furthest + datetime.timedelta(days=1)).isoformat()):
        response = share(client, comparison, expires_on=day)
        assert response.status_code == 400, day
        assert f"At most 5 years from today: {furthest.isoformat()}" in response.content.decode()
    assert not ShareLink.objects.exists()
    assert share(client, comparison, expires_on=furthest.isoformat()).status_code == 302


@pytest.mark.parametrize(
    ("today", "furthest"),
    [("2026-12-01", "2031-12-01"), ("2028-02-29", "2033-02-28"), ("2027-03-01", "2032-03-01")],
)
def test_five_years_are_counted_as_years_leap_days_and_all(today, furthest):
    found = sharing.furthest_expiry(datetime.date.fromisoformat(today))
    assert found == datetime.date.fromisoformat(furthest)


def test_the_same_share_posted_twice_makes_one_link(client, viewer, comparison):
    client.force_login(viewer)
    day = (timezone.localdate() + datetime.timedelta(days=3)).isoformat()
    for choice in ({"expires_in": "7"}, {"expires_on": day}, {}):
        assert [share(client, comparison, **choice).status_code for _ in range(2)] == [302, 302]
    assert comparison.shares.count() == 3
    share(client, comparison, expires_in="7", show_board_names="on")  # another choice
    assert comparison.shares.count() == 4
    sharing.revoke(comparison.shares.get(expires__isnull=True))
    share(client, comparison)  # a revoked link is not given again
    assert comparison.shares.filter(expires__isnull=True, revoked__isnull=True).count() == 1
    assert comparison.shares.count() == 5


# The public page


def test_the_share_page_needs_no_login_and_is_not_indexed(client, viewer, comparison):
    link = sharing.create(comparison, viewer)
    response = public(client, link)
    assert response.status_code == 200
    text = response.content.decode()
    assert '<meta name="robots" content="noindex, nofollow">' in text
    assert response["X-Robots-Tag"] == NOT_INDEXED
    assert response["Referrer-Policy"] == "no-referrer"
    assert "no-store" in response["Cache-Control"]
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "better: 20 % higher" in text and 'id="means-chart"' in text
    assert "board 1" in text and "bench-a" not in text
    # the board's user is "pi": hidden as a word of its own, not in the model's name
    assert "Raspberry Pi 4 Model B Rev 1.5" in text and Board.objects.get().username == "pi"
    for login_only in (
        "/login",
        reverse("benchmarks:comparisons"),
        reverse("devices:dashboard") + '"',
        "Log out",
    ):
        assert login_only not in text, login_only
    assert not re.search(rf"\b{viewer.username}\b", text)  # the owner's user name


def test_a_title_naming_a_pi_model_is_shown_whole_and_a_board_named_for_it_hidden(
    client, viewer, comparison
):
    """A review saw "scp on Pi 3 ..." shared as "scp on [hidden] 3 ...": the boards' user is
    pi. A board's name is still hidden where it stands as one."""
    Board.objects.update(name="pi3")
    Comparison.objects.filter(pk=comparison.pk).update(name="scp on Pi 3 against pi3's twin")
    text = public(client, sharing.create(comparison, viewer)).content.decode()
    assert "scp on Pi 3 against board 1" in text and "pi3" not in text


def test_a_board_named_pi_leaves_the_model_names_whole(client, viewer, comparison):
    """A review saw "Raspberry Pi 4 Model B Rev 1.5" shared as "Raspberry board 4 4 Model B"."""
    Board.objects.update(name="pi")
    text = public(client, sharing.create(comparison, viewer)).content.decode()
    assert "Raspberry Pi 4 Model B Rev 1.5" in text and "Raspberry board" not in text


def test_a_revoked_link_is_a_410_that_says_so(client, viewer, comparison):
    link = sharing.create(comparison, viewer)
    sharing.revoke(link)
    for suffix in ("", "comparison.csv", "comparison.json", "comparison.md"):
        response = public(client, link, suffix)
        assert response.status_code == 410
        assert "This link was revoked on" in response.content.decode()
        assert response["X-Robots-Tag"] == NOT_INDEXED
        assert "noindex" in response.content.decode()


def test_an_expired_link_is_a_410_that_says_so(client, viewer, comparison):
    past = timezone.now() - datetime.timedelta(seconds=1)
    link = sharing.create(comparison, viewer, expires=past)
    response = public(client, link)
    assert response.status_code == 410
    assert "This link expired on" in response.content.decode()
    assert response["X-Robots-Tag"] == NOT_INDEXED


def test_every_board_of_the_lab_is_hidden_in_any_case_with_a_result_or_none(
    client, viewer, comparison
):
    from benchmarks.models import Run

    make_board("sim-node2", host="10.213.9.99")  # in the lab, not in these runs
    Comparison.objects.filter(pk=comparison.pk).update(name="vera: BENCH-A vs Sim-Node2")
    link = sharing.create(comparison, viewer)
    with_result = public(client, link).content.decode()
    Run.objects.update(suspect=True)  # no result: every trial is left out
    without = public(client, link).content.decode()
    assert "no throughput values of sha1sum" in without
    for page in (with_result, without):
        assert "<h1>vera: board 1 vs board 2</h1>" in page
        assert "bench-a" not in page.casefold() and "sim-node2" not in page.casefold()


def test_board_names_are_hidden_as_whole_names_only(viewer, comparison):
    for name in ("42", "node"):  # not "pi": the boards' user, hidden as a word
        make_board(name, host=f"10.213.9.{len(name) + 90}")
    hider = sharing.Hider(None, show_board_names=False)
    assert [hider.aliases[name] for name in ("42", "bench-a", "node")] == [
        "board 1",
        "board 2",
        "board 3",
    ]
    assert hider.text("42 MB on board 42, 42 s") == "42 MB on board 1, 42 s"
    assert hider.text("node.local node_2 node-b Node5 on NODE.") == (
        "node.local node_2 node-b Node5 on board 3."
    )


def test_our_own_figures_are_not_taken_for_a_board_name(client, viewer, comparison):
    make_board("64", host="10.213.9.64")
    link = sharing.create(comparison, viewer)
    groups = public(client, link, "comparison.json").json()["groups"]
    assert {group["environment"]["kernel bits"] for group in groups} == {"64"}
    assert {group["environment"]["userland bits"] for group in groups} == {"64"}


def test_an_unknown_token_is_a_404(client):
    response = client.get(reverse("benchmarks:share", args=["no-such-token"]))
    assert response.status_code == 404
    assert response["X-Robots-Tag"] == NOT_INDEXED


def not_indexed(response) -> bool:
    return (
        response["X-Robots-Tag"] == NOT_INDEXED
        and response["Referrer-Policy"] == "no-referrer"
        and "no-store" in response["Cache-Control"]
    )


def test_a_head_is_answered_and_every_answer_under_s_is_not_indexed(viewer, comparison):
    from django.test import Client

    link = sharing.create(comparison, viewer)
    url = link.get_absolute_url()
    head = Client().head(url)
    assert head.status_code == 200 and not_indexed(head)
    with_csrf = Client(enforce_csrf_checks=True)
    for response, status in (
        (with_csrf.post(url), 403),
        (with_csrf.put(url), 403),
        (Client().post(url), 405),
        (Client().get(url + "x"), 404),
        (Client().get(url + "comparison.csv/"), 404),
    ):
        assert response.status_code == status and not_indexed(response), response


def test_a_revoked_link_says_when_in_which_time_zone(client, viewer, comparison):
    link = sharing.create(comparison, viewer)
    sharing.revoke(link)
    link.refresh_from_db()
    when = timezone.localtime(link.revoked)
    text = public(client, link).content.decode()
    assert f"revoked on {when:%Y-%m-%d %H:%M} {when.tzname()}:" in text


def test_the_comparison_page_lists_links_and_their_states(client, viewer, comparison):
    revoked = sharing.create(comparison, viewer)
    sharing.revoke(revoked)
    sharing.create(comparison, viewer, expires=timezone.now() - datetime.timedelta(days=1))
    live = sharing.create(comparison, viewer)
    client.force_login(viewer)
    text = client.get(comparison.get_absolute_url()).content.decode()
    assert text.count('class="mono share-url"') == 3
    assert "revoked " in text and ">expired<" in text and ">live<" in text
    assert f"Shared comparison: http://testserver{live.get_absolute_url()}" in text


def test_the_markdown_of_a_comparison_names_its_newest_live_link(client, viewer, comparison):
    client.force_login(viewer)
    url = reverse("benchmarks:comparison_md", args=[comparison.code])
    assert "Share it first to get a link." in client.get(url).content.decode()
    link = sharing.create(comparison, viewer)
    response = client.get(url)
    assert response["Content-Type"].startswith("text/markdown")
    text = response.content.decode()
    assert f"Shared comparison: http://testserver{link.get_absolute_url()}" in text
    # t(0.975, 2) = 4.303: 4.303 * 2 / sqrt(3) = 4.968 and 4.303 * 3 / sqrt(3) = 7.452
    assert "| as the board is (baseline) | 3 | 100 ± 4.968 MB/s | – | baseline |" in text
    # The ratio's Fieller interval at t for Welch's df of the test, 3.4845: 1.1360 to 1.2668.
    assert "| fast v2 | 3 | 120 ± 7.452 MB/s | +20 % (+13.6 % to +26.7 %) | better: 20 %" in text


def test_a_viewer_who_may_not_share_gets_markdown_without_a_link(
    client, django_user_model, comparison, viewer
):
    from devices import roles
    from tests.conftest import member

    link = sharing.create(comparison, viewer)
    client.force_login(member(django_user_model, "victor", roles.VIEWER))
    page = client.get(comparison.get_absolute_url())
    markdown = client.get(reverse("benchmarks:comparison_md", args=[comparison.code]))
    for text in (page.context["markdown"], markdown.content.decode()):
        assert "| fast v2 | 3 |" in text
        assert link.token not in text and "Shared comparison" not in text
        assert "Share it first" not in text  # they cannot
    assert link.token not in page.content.decode()


def test_markdown_cells_escape_bars_and_line_breaks(client, viewer, comparison):
    Campaign.objects.update(name="a|b\nc\\")
    Comparison.objects.filter(pk=comparison.pk).update(group_by="campaign")
    link = sharing.create(comparison, viewer)
    text = public(client, link, "comparison.md").content.decode()
    assert "| a\\|b c\\\\ (baseline) | 6 |" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert {line.count(" | ") for line in table} == {4}


def test_markdown_cells_are_plain_text_not_markup_nor_links(client, viewer, comparison):
    """Escaped, they render as the words typed: no HTML element, no link, no emphasis."""
    Campaign.objects.update(name='<script>alert(1)</script> <a href="x">a</a> & [l](x) *e* _u_ `c`')
    Comparison.objects.filter(pk=comparison.pk).update(group_by="campaign")
    link = sharing.create(comparison, viewer)
    text = public(client, link, "comparison.md").content.decode()
    row = next(line for line in text.splitlines() if line.startswith("| &lt;script"))
    assert row.startswith(
        '| &lt;script&gt;alert(1)&lt;/script&gt; &lt;a href="x"&gt;a&lt;/a&gt; &amp; '
        "\\[l\\](x) \\*e\\* \\_u\\_ \\`c\\` (baseline) |"
    )
    assert "<" not in text and "[l](" not in text
    assert exports._cell("# 1") == "\\# 1"  # not a heading (nor an issue's number)


def test_a_cell_an_autolinker_would_link_is_a_code_span_as_long_as_its_backticks_need():
    assert exports._cell("see www.x.example") == "`see www.x.example`"
    assert exports._cell("a@b.example `x` a|b") == "``a@b.example `x` a\\|b``"
    assert exports._cell("`https://x.example`") == "`` `https://x.example` ``"
    assert exports._cell("v1.5 on 2.4 GHz, e.g. Pi 5") == "v1.5 on 2.4 GHz, e.g. Pi 5"


HOSTILE_NAMES = [
    "see https://evil.example/x and www.evil.example",
    "mail admin@evil.example or evil.example/path",
    "![img](https://evil.example/i.png) <img src=x> <b>bold</b>",
    "ftp://evil.example mailto:a@evil.example xmpp:a@evil.example",
    "[[x]](https://evil.example) <https://evil.example>",
    '<script>alert(1)</script> <a href="https://evil.example">a</a> & `c` a|b',
    "nightly //8.8.8.8/x",  # linkify reads a protocol-relative address
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_no_name_renders_as_a_link_an_image_or_html_where_a_forum_renders_it(
    client, viewer, comparison, name
):
    """GitHub's renderer (cmark-gfm, with its autolinks) and markdown-it with linkify (as
    Discourse renders a post): the names render as the words typed, nothing else."""
    Campaign.objects.update(name=name)
    Comparison.objects.filter(pk=comparison.pk).update(group_by="campaign")
    client.force_login(viewer)
    text = client.get(reverse("benchmarks:comparison_md", args=[comparison.code])).content.decode()
    forum = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"])
    for html in (cmarkgfm.github_flavored_markdown_to_html(text), forum.render(text)):
        assert not re.search(r"<(a|img|b|script)\b", html), html
        assert name in html_module.unescape(re.sub(r"<[^>]+>", "", html))  # as typed


def test_the_share_page_markdown_has_its_own_url(client, viewer, comparison):
    link = sharing.create(comparison, viewer)
    text = public(client, link, "comparison.md").content.decode()
    assert text.endswith(f"Shared comparison: http://testserver{link.get_absolute_url()}\n")
    page = public(client, link).content.decode()
    assert 'id="comparison-markdown"' in page and "/static/js/copy-markdown.js" in page


# Nothing leaks

BOARD_IP = "10.213.77.5"
BOARD_DNS = "leaky-host.lab.example"
USERNAME = "benchuser"
SERIAL = "10000000deadbeef"
HOSTNAME = "leaky-pi-hostname"
PASSWORD = "hunter2-secret-pw"
BOARD_NAMES = ["bench-leak", "bench-peer"]
NEVER = [BOARD_IP, BOARD_DNS, USERNAME, SERIAL, HOSTNAME, PASSWORD]


@pytest.fixture
def leaky(viewer):
    """Two boards (one by IP, one by DNS name, one with a password) whose probes, tool versions,
    campaign and comparison name all hold their hosts, users and serials."""
    ip_board = make_board(BOARD_NAMES[0], host=BOARD_IP, username=USERNAME)
    dns_board = make_board(BOARD_NAMES[1], host=BOARD_DNS, username=USERNAME)
    dns_board.set_credential(Board.AuthMethod.PASSWORD, PASSWORD)
    dns_board.save()
    campaign = Campaign.objects.create(name=f"sha1 on {BOARD_IP} and {BOARD_DNS}", spec={})
    version = overclock()
    for board, values in ((ip_board, BASELINE), (dns_board, FASTER)):
        lane = Lane.objects.create(campaign=campaign, board=board)
        snapshot = FactSnapshot.objects.create(
            board=board,
            model="Raspberry Pi 4 Model B Rev 1.5",
            kernel_bits=64,
            userland_bits=64,
            os_name=f"Debian GNU/Linux 12 ({HOSTNAME} {SERIAL})",
            facts={
                "serial": SERIAL,
                "hostname": HOSTNAME,
                "kernel_release": f"6.6.51-v8+ #1 {USERNAME}@{BOARD_DNS}",
                "governor": "ondemand",
                "firmware_version": {"version": f"{BOARD_IP}"},
            },
        )
        lane.snapshot = snapshot
        details = {
            "tool_version": f"Linux {HOSTNAME} {USERNAME}@{BOARD_IP}:22 sha1sum 9.1 "
            f"(built by {USERNAME} in /home/{USERNAME})"
        }
        trials(lane, values, details=details)
        trials(lane, values, details=details, preset_version=version)
    comparison = Comparison.objects.create(
        owner=viewer,
        name=f"{BOARD_DNS} against {BOARD_IP}",
        benchmark="sha1sum",
        metric="throughput",
        group_by="campaign",
    )
    comparison.campaigns.set([campaign])
    return comparison


def everything_shared(client, link: ShareLink) -> str:
    """The share page, its CSV, JSON and Markdown, and their headers, as one text."""
    answers = []
    for suffix in ("", "comparison.csv", "comparison.json", "comparison.md"):
        response = public(client, link, suffix)
        assert response.status_code == 200, suffix
        answers += [response.content.decode(), str(response.headers)]
    return "\n".join(answers)


@pytest.mark.parametrize("group_by", ["campaign", "board", "bits", "preset"])
def test_no_host_address_user_serial_secret_nor_board_name_is_shared(
    client, viewer, leaky, group_by
):
    Comparison.objects.filter(pk=leaky.pk).update(group_by=group_by)
    text = everything_shared(client, sharing.create(leaky, viewer))
    for word in NEVER + BOARD_NAMES:
        assert word not in text, word
    assert "[hidden]" in text
    assert ("board 1" in text and "board 2" in text) or group_by == "campaign"


@pytest.mark.parametrize("group_by", ["campaign", "board"])
def test_board_names_shown_still_hide_hosts_users_serials_and_secrets(
    client, viewer, leaky, group_by
):
    Comparison.objects.filter(pk=leaky.pk).update(group_by=group_by)
    text = everything_shared(client, sharing.create(leaky, viewer, show_board_names=True))
    for word in NEVER:
        assert word not in text, word
    if group_by == "board":
        assert all(name in text for name in BOARD_NAMES)
        assert "board 1" not in text


def test_board_aliases_follow_the_names_order_in_groups_and_spread(client, viewer, leaky):
    Comparison.objects.filter(pk=leaky.pk).update(group_by="preset")
    link = sharing.create(leaky, viewer)
    found = public(client, link, "comparison.json").json()
    assert [sorted(group["boards"]) for group in found["groups"]] == [["board 1", "board 2"]] * 2
    assert "code" not in found and str(leaky.code) not in json.dumps(found)  # the team's own
    page = public(client, link).content.decode()
    assert page.count("<tr><td>board 1</td>") == 2  # the spread table of each group


# Names that read the same once hidden stay apart


def compared(owner, group_by, lanes_values, name="look-alikes") -> Comparison:
    """A comparison of the campaigns in lanes_values: {(campaign name, board name): values}."""
    comparison = Comparison.objects.create(
        owner=owner, name=name, benchmark="sha1sum", metric="throughput", group_by=group_by
    )
    for (campaign_name, board_name), values in lanes_values.items():
        campaign, _ = Campaign.objects.get_or_create(name=campaign_name, spec={})
        board = Board.objects.filter(name=board_name).first()
        if board is None:
            lane = lane_on(campaign, board_name)
        else:  # a board of an earlier campaign: its probe again
            lane = Lane.objects.create(campaign=campaign, board=board)
            lane.snapshot = FactSnapshot.objects.get(board=board)
        trials(lane, values)
        comparison.campaigns.add(campaign)
    return comparison


def figures_by_group(client, link) -> dict:
    groups = public(client, link, "comparison.json").json()["groups"]
    return {
        group["group"]: (round(group["mean"]), (group["verdict"] or "").split(" (")[0])
        for group in groups
    }


def test_campaigns_that_differ_only_by_a_hidden_address_stay_apart(client, viewer):
    comparison = compared(
        viewer,
        "campaign",
        {
            ("base", "bench-a"): [101.0, 102.0, 103.0],
            ("nightly on 10.213.9.20", "bench-b"): [151.0, 152.0, 153.0],
            ("nightly on 10.213.9.21", "bench-c"): [51.0, 52.0, 53.0],
        },
    )
    link = sharing.create(comparison, viewer)
    # Each campaign on a board of its own: confounded with the board, which the words name by
    # their aliases, and each group by its name as shown.
    assert figures_by_group(client, link) == {
        "base": (102, ""),
        "nightly on [hidden] 1": (
            152,
            "cannot tell: confounded with the board: base ran on board 1, nightly on "
            "[hidden] 1 on board 2",
        ),
        "nightly on [hidden] 2": (
            52,
            "cannot tell: confounded with the board: base ran on board 1, nightly on "
            "[hidden] 2 on board 3",
        ),
    }
    page = public(client, link).content.decode()
    assert "nightly on [hidden] 1 on board 2 (49 % higher)" in page
    assert "nightly on [hidden] 2 on board 3 (49 % lower)" in page
    assert "10.213.9.2" not in page


def test_board_names_shown_are_not_hidden_as_hosts_or_users(client, viewer):
    """Board "pi" (its SSH user is pi) and "pinas" (its probe's host name): shown as named."""
    comparison = compared(
        viewer,
        "board",
        {
            ("stock", "pi"): [101.0, 102.0, 103.0],
            ("stock", "pinas"): [151.0, 152.0, 153.0],
        },
    )
    FactSnapshot.objects.filter(board__name="pinas").update(facts={"hostname": "pinas"})
    assert Board.objects.get(name="pi").username == "pi"
    link = sharing.create(comparison, viewer, show_board_names=True)
    assert figures_by_group(client, link) == {
        "pi": (102, ""),
        "pinas": (152, "better: 49 % higher"),
    }
    Comparison.objects.filter(pk=comparison.pk).update(group_by="campaign")
    spread = public(client, link, "comparison.json").json()["groups"][0]["boards"]
    assert {name: round(found["mean"]) for name, found in spread.items()} == {
        "pi": 102,
        "pinas": 152,
    }


def test_every_group_keeps_its_point_and_its_boards_when_hidden(client, viewer):
    comparison = compared(
        viewer,
        "campaign",
        {
            ("base", "bench-a"): [101.0, 102.0, 103.0],
            ("base", "bench-b"): [101.0, 102.0, 103.0],
            ("nightly on 10.213.9.20", "bench-a"): [151.0, 152.0, 153.0],
            ("nightly on 10.213.9.20", "bench-b"): [149.0, 150.0, 151.0],
            ("nightly on 10.213.9.21", "bench-a"): [51.0, 52.0, 53.0],
            ("nightly on 10.213.9.21", "bench-b"): [53.0, 54.0, 55.0],
        },
    )
    link = sharing.create(comparison, viewer)
    groups = public(client, link, "comparison.json").json()["groups"]
    assert [sorted(group["boards"]) for group in groups] == [["board 1", "board 2"]] * 3
    response = public(client, link)
    assert response.content.decode().count("<tr><td>board 1</td>") == 3  # a table per group
    points = response.context["figures"]["changes-chart"]["data"][0]["y"]
    assert [round(change) for change in points] == [48, -48]


def test_the_markdown_with_a_share_link_is_that_links_own_hidden_markdown(client, viewer, leaky):
    client.force_login(viewer)
    url = reverse("benchmarks:comparison_md", args=[leaky.code])
    internal = client.get(url).content.decode()
    assert BOARD_IP in internal and "Share it first to get a link." in internal
    link = sharing.create(leaky, viewer)
    page = client.get(leaky.get_absolute_url()).context["markdown"]
    exported = client.get(url).content.decode()
    shared = public(client, link, "comparison.md").content.decode()
    assert page == exported == shared
    for word in NEVER + BOARD_NAMES:
        assert word not in shared, word
    client.force_login(viewer)
    sharing.revoke(link)
    for text in (
        client.get(url).content.decode(),
        client.get(leaky.get_absolute_url()).context["markdown"],
    ):
        assert link.token not in text and "Share it first to get a link." in text


def test_the_reference_lines_and_their_note_follow_the_hidden_names(client, viewer):
    """A group's own ceiling (each board at its MTU) and the note on a group of several MTUs
    name the groups as the page does: the note named the board, the ceilings were dropped."""
    campaign = Campaign.objects.create(name="links", spec={})
    for name, mtus in (
        ("bench-a", [1500, 1500]),
        ("bench-b", [9000, 9000]),
        ("bench-c", [1500, 9000]),
    ):
        lane = lane_on(campaign, name)
        for value, mtu in zip([91.0, 92.0], mtus, strict=True):
            environment = {"link": {"device": "eth0", "mbit": 100, "mtu": mtu}}
            trials(
                lane,
                [value],
                benchmark="iperf3-tcp",
                unit="Mbit/s",
                params={},
                environment=environment,
            )
    comparison = saved_comparison(viewer, campaign, benchmark="iperf3-tcp", group_by="board")
    response = public(client, sharing.create(comparison, viewer))
    page = response.content.decode()
    assert "Board 3: runs of several MTUs, no ceiling drawn" in page
    assert "bench-" not in page
    labels = response.context["figures"]["means-chart"]["layout"]["annotations"]
    assert [label["text"] for label in labels] == [
        "line rate 100 Mbit/s",
        "ceiling 94.1",
        "ceiling 99",
    ]
