"""Run pifarm with a farm of simulated Pis: the main job of `make demo`."""

import fcntl
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from benchmarks import campaigns, canaries, questions, specs
from benchmarks.models import Campaign, NotificationTarget
from devices import presets, roles
from devices.models import Board
from pifarm.env import persistent_secret
from pifarm.supervisor import EmbeddedRedis, Process, Stopped, Supervisor, listening
from pisim.farm import RUN_ROOT, farm_in_use
from pisim.profiles import PROFILES

# The farm lives in 10.213.1.0/24 (see pisim); a second demo on the machine needs a farm and a
# subnet of its own (2 to 199: pisim's tests use 200 and up).
DEMO_FARM = os.environ.get("PIFARM_DEMO_FARM", "demo")
DEMO_SUBNET_INDEX = int(os.environ.get("PIFARM_DEMO_SUBNET", 1))
# As it comes up, the demo answers the first question on its 100 Mbit/s Pis: its template's
# short defaults (a few minutes), waiting at most this long for a quiet board before a trial.
DEMO_QUESTION = questions.NETWORK
DEMO_QUESTION_NAME = "Demo: does the classic overclock speed up the 100 Mbit/s network?"
DEMO_QUIET_DEADLINE_S = 10
# The seeds' set-ups (design: the problem): a Pi 1 B, whose 100 Mbit/s Ethernet sits behind
# USB, for the classic overclock's network question; a Pi 4 on a 32-bit OS beside one on a
# 64-bit OS for the bitness question. More nodes repeat the list.
DEMO_PROFILES = ("pi1b-legacy-32", "pi4b-bookworm", "pi4b-bookworm-32")


# A canary on each board, short and often, so that a drift shows within minutes: the slower
# node (a pisim fault, from DEMO_SLOWER_AFTER_S after its boot) is found once its canary has
# the 10 points the detector wants first (benchmarks.drift), and 3 more. Its trials run as
# given (min_trial_s 0), a few seconds each, twice, so that one canary (about 20 s) ends
# before the next start; a lab's canary runs hourly, its trials lengthened and three times
# (benchmarks.canaries).
DEMO_CANARY_EVERY = "30s"
DEMO_CANARY = {
    "benchmarks": [
        {"name": "sha1sum", "params": {"size": "256M"}},
        {"name": "iperf3-tcp", "params": {"duration": 2}},
    ],
    "repetitions": 2,
    "quiet": {"deadline_s": 5},
    "min_trial_s": 0,
}
DEMO_SLOWER_NODE = "node2"  # a Pi 4 on a 64-bit OS (DEMO_PROFILES)
DEMO_SLOWER_AFTER_S = 360
DEMO_SLOWER_SHARE = 0.6

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# The scheduler delivers the next try of a job that found its board busy.
WORKER = ("rqworker", "--with-scheduler", "default")


def _ignore_stop_signals() -> None:
    # A second Ctrl-C or TERM must not cut the clean-up short and leave the farm running.
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _stop_once(signum, frame):
    _ignore_stop_signals()
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Start a simulated farm, register its boards, a worker and the web server."
    farm_ours = False  # this demo started (or tried to start) the farm it stops

    def add_arguments(self, parser):
        parser.add_argument("--nodes", type=int, default=3)
        parser.add_argument("--port", type=int, default=int(os.environ.get("PIFARM_PORT", 8000)))
        parser.add_argument("--workers", type=int, default=2)

    def handle(self, *args, nodes, port, workers, **options):
        if os.geteuid() != 0:
            raise CommandError("the simulated farm needs root (network namespaces, sshd)")
        # Before anything is adopted or started: a second demo's clean-up would stop them.
        self._hold_the_checkout()
        self._refuse_a_farm_in_use()
        # The demo is the first thing anyone runs: it brings its own database up to date.
        call_command("migrate", interactive=False, verbosity=0)
        password = self._demo_user()
        log_path = settings.DATA_DIR / "demo.log"
        with open(log_path, "ab") as log:
            supervisor = Supervisor(lambda message: self._say(log, message))
            receiver = None
            try:
                redis = None
                if settings.EMBEDDED_REDIS:  # running since Django started; stopped last
                    redis = supervisor.add(EmbeddedRedis(settings.DATA_DIR))
                farm = self._start_farm(nodes)
                self._register(farm)
                self._example_presets()
                self._start_parts(supervisor, log, workers, port, redis)
                self._wait_for_web(port)
                question = self._question_campaign(farm)
                receiver = self._notifications(log)
                self._canaries(farm)
                self._banner(port, password, farm, log_path, question)
                self._wait(supervisor, log_path)
            finally:
                if receiver is not None:
                    receiver.shutdown()
                self._stop(supervisor)

    def _start_parts(
        self, supervisor: Supervisor, log, workers: int, port: int, redis: EmbeddedRedis | None
    ) -> None:
        for number in range(1, workers + 1):
            worker = self._manage_py(f"worker {number}", log, *WORKER)
            supervisor.add(worker, restart_after=redis)
        interval = str(settings.HEALTH_CHECK_INTERVAL)
        supervisor.add(
            self._manage_py("the health-check loop", log, "healthcheck", "--every", interval)
        )
        gunicorn = Path(sys.executable).with_name("gunicorn")
        web = [str(gunicorn), "pifarm.wsgi", "--bind", f"127.0.0.1:{port}"]  # gunicorn.conf.py
        supervisor.add(
            Process("the web server", web, cwd=settings.BASE_DIR, log=log, restart=False)
        )

    def _manage_py(self, name: str, log, *command: str) -> Process:
        command = [sys.executable, "manage.py", *command]
        return Process(name, command, cwd=settings.BASE_DIR, log=log)

    def _say(self, log, message: str) -> None:
        """Supervision news goes to the terminal and into the log, next to the parts' own."""
        line = f"{time.strftime('%H:%M:%S')} demo: {message}"
        self.stdout.write(line)
        log.write(f"{line}\n".encode())
        log.flush()

    def _banner(
        self, port: int, password: str, farm: list[dict], log_path: Path, question: Campaign | None
    ) -> None:
        boards = ", ".join(f"{node['name']} ({node['profile']})" for node in farm)
        answer = ""
        if question is not None:
            url = f"http://127.0.0.1:{port}{reverse('benchmarks:answer', args=[question.code])}"
            answer = f"{DEMO_QUESTION.sentence}\n  the answer fills in at {url}\n"
        self.stdout.write(
            self.style.SUCCESS(
                f"\npifarm is running at http://127.0.0.1:{port}/\n"
                f"log in as demo / {password}\n"
                f"{len(farm)} simulated Pis: {boards}\n"
                f"{answer}"
                f"worker and web server logs: {log_path}\n"
                "Press Ctrl-C to stop everything.\n"
            )
        )

    def _demo_user(self) -> str:
        password = persistent_secret(
            "PIFARM_DEMO_PASSWORD",
            settings.DATA_DIR / "demo_password",
            lambda: secrets.token_urlsafe(12),
        )
        user, _ = get_user_model().objects.get_or_create(username="demo")
        user.is_superuser = False  # an admin by role, so the demo shows what admins may do
        user.set_password(password)
        user.save()
        roles.assign(user, roles.ADMIN)
        return password

    def _hold_the_checkout(self) -> None:
        """A lock on the checkout's data for as long as this demo runs: two demos of one
        checkout share its embedded Redis and database, and either one's exit stops the Redis."""
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        self._checkout_lock = open(settings.DATA_DIR / "demo.lock", "a")  # noqa: SIM115 - held
        try:
            fcntl.flock(self._checkout_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CommandError(
                f"another demo runs from this checkout (its data in {settings.DATA_DIR}); stop "
                "it first, or run a second one from another checkout with a farm of its own "
                "(PIFARM_DEMO_FARM=name and PIFARM_DEMO_SUBNET=2 to 199)"
            ) from None

    def _refuse_a_farm_in_use(self) -> None:
        if farm_in_use(RUN_ROOT / DEMO_FARM):  # another demo's: stopping ours must leave it be
            raise CommandError(
                f"the simulated farm {DEMO_FARM!r} is in use by another demo on this machine; "
                "stop that one first, or give this one its own (PIFARM_DEMO_FARM=name and "
                "PIFARM_DEMO_SUBNET=2 to 199)"
            )

    def _start_farm(self, nodes: int) -> list[dict]:
        self._refuse_a_farm_in_use()
        self.farm_ours = True
        self.stdout.write(f"starting {nodes} simulated Pis…")
        command = [sys.executable, "-m", "pisim", "up", "--name", DEMO_FARM]
        command += ["--subnet-index", str(DEMO_SUBNET_INDEX), "--nodes", str(nodes), "--json"]
        command += ["--profiles", ",".join(DEMO_PROFILES)]
        if nodes >= 2:
            slower = f"{DEMO_SLOWER_NODE}:{DEMO_SLOWER_AFTER_S}:{DEMO_SLOWER_SHARE}"
            command += ["--slower", slower]
        # The first 32-bit node of a machine builds their i386 root (about 1.5 minutes).
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise CommandError(f"the simulated farm did not start:\n{done.stderr}")
        return json.loads(done.stdout)["nodes"]

    def _register(self, farm: list[dict]) -> None:
        for node in farm:
            call_command(
                "register_board",
                f"sim-{node['name']}",
                node["host"],
                port=node["port"],
                user=node["user"],
                key_file=Path(node["private_key_path"]),
                fingerprint=node["host_key_fingerprint"],
                tags=f"simulated,{node['profile']}",
                replace=True,
                stdout=self.stdout,
            )

    def _example_presets(self) -> None:
        """Presets to try: stock (the firmware's defaults), the classic dynamic overclock and
        a mild one for the Pi 4s."""
        presets.stock_version()
        for example in presets.EXAMPLE_PRESETS:
            presets.example_version(example)

    def _question_campaign(self, farm: list[dict]) -> Campaign | None:
        """A short run of the network question on the farm's 100 Mbit/s Pis, started the way
        `manage.py campaign start` starts one. Once per demo database: the one started before
        (running or done) is kept across restarts, unless it was cancelled."""
        boards = [
            f"sim-{node['name']}" for node in farm if PROFILES[node["profile"]].eth_mbit == 100
        ]
        if not boards:
            return None
        earlier = Campaign.objects.filter(name=DEMO_QUESTION_NAME, spec__question=DEMO_QUESTION.key)
        earlier = earlier.exclude(state=Campaign.State.CANCELLED).first()
        if earlier is not None:
            return earlier
        spec = DEMO_QUESTION.spec(boards) | {
            "name": DEMO_QUESTION_NAME,
            "quiet": {"deadline_s": DEMO_QUIET_DEADLINE_S},
        }
        try:
            return campaigns.start(spec, get_user_model().objects.get(username="demo"))
        except specs.SpecError as exc:
            self.stdout.write(f"the network question was not started: {exc}")
            return None

    def _canaries(self, farm: list[dict]) -> None:
        for node in farm:
            board = Board.objects.get(name=f"sim-{node['name']}")
            canaries.set_up(board, DEMO_CANARY_EVERY, changes=DEMO_CANARY)
        slower = f"sim-{DEMO_SLOWER_NODE}"
        if len(farm) >= 2:
            self.stdout.write(
                f"a canary runs on each board every {DEMO_CANARY_EVERY}; {slower} gets "
                f"{DEMO_SLOWER_SHARE:.0%} of its CPU from {DEMO_SLOWER_AFTER_S // 60} min after "
                "its boot (a pisim fault): its canary finds the drift a few minutes later"
            )

    def _notifications(self, log) -> ThreadingHTTPServer:
        """A webhook receiver on loopback, the target of every event: what pifarm tells
        people shows in the demo's output and log."""
        say = self._say

        class Receiver(BaseHTTPRequestHandler):
            def do_POST(self):
                length = min(int(self.headers.get("Content-Length") or 0), 65536)
                try:
                    message = json.loads(self.rfile.read(length))
                    said = f"{message.get('title')}: {message.get('message')}"
                except ValueError:
                    said = "a message that was not JSON"
                say(log, f"notification received: {said}".replace("\n", " | "))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, name="demo-webhooks", daemon=True).start()
        target, _ = NotificationTarget.objects.get_or_create(
            name="demo webhook receiver", defaults={"events": NotificationTarget.Event.values}
        )
        target.set_url(f"json://127.0.0.1:{server.server_address[1]}/pifarm-demo")
        target.events, target.enabled = NotificationTarget.Event.values, True
        target.save()
        return server

    def _wait_for_web(self, port: int, timeout: float = 30) -> None:
        if not listening(port, timeout):
            raise CommandError(f"the web server did not listen on port {port} within {timeout:g} s")

    def _wait(self, supervisor: Supervisor, log_path: Path) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, _stop_once)
        try:
            while True:
                supervisor.poll()
                time.sleep(1)
        except KeyboardInterrupt:
            return
        except Stopped as stopped:
            raise CommandError(f"{stopped}; see {log_path}") from None

    def _stop(self, supervisor: Supervisor) -> None:
        _ignore_stop_signals()
        supervisor.stop()  # the web server and the workers, then the embedded Redis
        if self.farm_ours:
            down = [sys.executable, "-m", "pisim", "down", "--name", DEMO_FARM]
            subprocess.run(down, timeout=60, check=False)
        self.stdout.write("stopped the web server, the workers, Redis and the simulated farm")
