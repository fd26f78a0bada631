"""Notifications (benchmarks.notify): real apprise, delivering JSON to a receiver on loopback,
and real RQ jobs with their retries."""

import json
import logging
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse
from django.utils import timezone
from rq.registry import ScheduledJobRegistry

from benchmarks import campaigns, canaries, notify
from benchmarks.models import Campaign, Drift, NotificationTarget, Run, ScheduledStart
from devices import work
from devices.models import Board
from tests.benchmarks.factories import make_campaign, make_drift
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
SECRET_PATH = "hook-s3cr3t-token"
Event = NotificationTarget.Event


class Receiver:
    """An HTTP server on loopback that keeps what apprise's json:// posts to it."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers["Content-Length"])
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        # A short poll: shutdown() waits for the loop's next look (0.5 s by default).
        serve = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        serve.start()

    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/{SECRET_PATH}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.close()


def target(url: str, *events: str, name="lab hook") -> NotificationTarget:
    made = NotificationTarget(name=name, events=list(events or Event.values))
    made.set_url(url)
    made.save()
    return made


def test_a_message_reaches_each_target_that_wants_it_redacted_with_its_link(
    receiver, redis_queue, run_jobs, settings
):
    settings.PIFARM_SITE_URL = "https://pifarm.lab"
    wanted = target(receiver.url(), Event.BOARD_DRIFTED)
    target(receiver.url(), Event.CAMPAIGN_FINISHED, name="other hook")
    board = make_board("bench-n", host="10.213.9.77")
    queued = notify.tell(
        Event.BOARD_DRIFTED, "pifarm: bench-n drifted", "10.213.9.77:22 says so", "/boards/x/"
    )
    assert queued == 1
    run_jobs()
    [message] = receiver.received
    assert message["title"] == "pifarm: bench-n drifted"
    assert "10.213.9.77" not in message["message"] and board.host not in json.dumps(message)
    assert message["message"].endswith("\nhttps://pifarm.lab/boards/x/")
    wanted.refresh_from_db()
    assert wanted.last_sent is not None and wanted.last_error == ""


def test_a_target_that_is_down_is_logged_by_name_and_retried_later(redis_queue, run_jobs, caplog):
    closed = Receiver()
    url = closed.url()
    closed.close()  # nothing listens there now
    down = target(url, Event.CAMPAIGN_FINISHED)
    with caplog.at_level(logging.DEBUG):
        assert notify.tell(Event.CAMPAIGN_FINISHED, "pifarm: x finished", "done") == 1
        run_jobs()
    down.refresh_from_db()
    assert down.last_error.startswith("apprise could not deliver “pifarm: x finished”")
    assert "notification to lab hook failed" in caplog.text
    assert SECRET_PATH not in caplog.text  # the URL's token is never logged
    retries = ScheduledJobRegistry(queue=redis_queue).get_job_ids()
    assert len(retries) == 1  # RQ tries it again after its interval
    job = redis_queue.fetch_job(retries[0])
    assert job.retries_left == len(notify.RETRY_INTERVALS_S) - 1


def test_a_finished_campaign_is_told_but_a_canary_campaign_only_when_it_fails(
    receiver, redis_queue, run_jobs, django_capture_on_commit_callbacks
):
    target(receiver.url())
    board = make_board("bench-n", queue="nobody-serves-this")
    campaign = make_campaign(board, name="nightly", states=["done", "failed"])
    Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        campaigns.finish_if_done(campaign.pk)
    canary = canaries.set_up(board)
    checked = make_campaign(board, name="canary of bench-n", states=["done", "failed"])
    Run.objects.filter(campaign=checked, state="failed").update(reason="sha1sum: exit 1")
    ScheduledStart.objects.create(schedule=canary, due=timezone.now(), campaign=checked)
    with django_capture_on_commit_callbacks(execute=True):
        campaigns.finish_if_done(checked.pk)
    run_jobs()
    titles = sorted(message["title"] for message in receiver.received)
    assert titles == ["pifarm: nightly finished", "pifarm: the canary of bench-n failed"]
    finished = next(m for m in receiver.received if m["title"] == "pifarm: nightly finished")
    assert finished["message"].startswith("Its runs: 1 done, 1 failed.")
    failed = next(m for m in receiver.received if "canary" in m["title"])
    assert (
        "1 of 2 runs of the canary of bench-n did not finish: sha1sum: exit 1"
        in (failed["message"])
    )


def test_a_board_that_needs_attention_is_told_once(
    receiver, redis_queue, run_jobs, django_capture_on_commit_callbacks
):
    target(receiver.url(), Event.BOARD_ATTENTION)
    board = make_board("bench-n")
    with django_capture_on_commit_callbacks(execute=True):
        work.mark_board(board.pk, Board.Status.NEEDS_ATTENTION, "its host key changed")
        work.mark_board(board.pk, Board.Status.NEEDS_ATTENTION, "its host key changed")
    run_jobs()
    [message] = receiver.received
    assert message["message"].startswith("bench-n needs attention: its host key changed")


def test_a_failing_listener_fails_no_campaign(
    redis_queue, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    board = make_board("bench-n")
    campaign = make_campaign(board, states=["done"])
    monkeypatch.setattr(NotificationTarget.objects, "filter", lambda **kw: 1 / 0)
    with django_capture_on_commit_callbacks(execute=True):
        campaigns.finish_if_done(campaign.pk)
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.FINISHED and campaign.finished is not None
    assert "ZeroDivisionError" in caplog.text


def test_the_admin_keeps_the_url_encrypted_and_never_shows_it(client, receiver, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x" * 12)
    client.force_login(admin)
    add = reverse("admin:benchmarks_notificationtarget_add")
    refused = client.post(
        add, {"name": "bad", "url": "no-such-scheme://x", "events": ["board_drifted"]}
    )
    assert "apprise does not understand this URL" in refused.content.decode()
    client.post(
        add, {"name": "hook", "url": receiver.url(), "events": ["board_drifted"], "enabled": "on"}
    )
    saved = NotificationTarget.objects.get()
    assert SECRET_PATH not in saved.url_encrypted and saved.url() == receiver.url()
    page = client.get(reverse("admin:benchmarks_notificationtarget_change", args=[saved.pk]))
    assert SECRET_PATH not in page.content.decode()
    client.post(
        reverse("admin:benchmarks_notificationtarget_change", args=[saved.pk]),
        {"name": "hook", "url": "", "events": ["board_drifted", "canary_failed"], "enabled": "on"},
    )
    saved.refresh_from_db()
    assert saved.url() == receiver.url() and saved.events == ["board_drifted", "canary_failed"]


class SmtpSink(socketserver.StreamRequestHandler):
    """Just enough of an SMTP server on loopback for apprise's mailto: it keeps each message."""

    received: list

    def handle(self):
        def say(line: str) -> None:
            self.wfile.write(line.encode() + b"\r\n")

        say("220 sink")
        body = None
        for raw in self.rfile:
            line = raw.decode(errors="replace").rstrip("\r\n")
            if body is not None:
                if line == ".":
                    self.received.append("\n".join(body))
                    body = None
                    say("250 kept")
                else:
                    body.append(line)
                continue
            verb = line[:4].upper()
            if verb == "EHLO":
                say("250-sink")
                say("250 AUTH PLAIN LOGIN")
            elif verb == "AUTH":
                say("235 in")
            elif verb == "DATA":
                body = []
                say("354 go on")
            elif verb == "QUIT":
                say("221 bye")
                return
            else:
                say("250 ok")


def test_an_e_mail_carries_names_as_text_never_as_markup(redis_queue, run_jobs):
    SmtpSink.received = []
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SmtpSink)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        port = server.server_address[1]
        url = f"mailto://127.0.0.1:{port}?user=u&pass=p&from=pifarm@lab.test&to=lab@lab.test"
        target(f"{url}&mode=insecure", Event.BOARD_DRIFTED)
        notify.tell(Event.BOARD_DRIFTED, "pifarm: x", '<img src="https://evil.example/x.png">')
        run_jobs()
    finally:
        server.shutdown()
        server.server_close()
    [mail] = SmtpSink.received
    assert "text/html" not in mail and "Content-Type: text/plain" in mail


def test_a_drift_is_told_with_its_change_and_what_changed(receiver, redis_queue, run_jobs):
    target(receiver.url(), Event.BOARD_DRIFTED)
    board = make_board("bench-n")
    drift = make_drift(
        board,
        reference_mean=400.0,
        mean_since=300.0,
        changed=[{"what": "governor", "before": "ondemand", "after": "powersave"}],
    )
    notify.board_drifted(Drift, drift)
    run_jobs()
    [message] = receiver.received
    assert (
        "its canary's sha1sum throughput changed -25.0 % (400 → 300 MB/s)" in (message["message"])
    )
    assert "Changed then: governor ondemand → powersave." in message["message"]
