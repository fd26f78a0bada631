"""Does a flood of failed logins slow pifarm's pages for everyone else?

    .venv/bin/python bench/login_flood.py [--seconds 20] [--threads 8] [--rounds 40]

gunicorn serves pifarm as `make demo` starts it (gunicorn.conf.py, on a loopback port) with a
throw-away database. A logged-in viewer reads the dashboard `--rounds` times with nobody else
about, then again while `--threads` threads post wrong passwords to the login form for
`--seconds` s, each under user names of its own (as a password guesser does, so no per-user
lock stops it). Prints the dashboard's median and 90th percentile both times, the failed
logins answered and how (200: the form again, after checking the password; 429: refused),
and the login answers' median. Target: the dashboard's median under the flood at most 3 times
its idle one. Prints figures; asserts nothing.
"""

import http.cookiejar
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.core.management import call_command

TARGET_RATIO = 3.0
VIEWER_PASSWORD = secrets.token_urlsafe(16)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """Cookies and the login form's CSRF token, as a browser keeps them."""

    def __init__(self, root: str):
        self.root = root
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        page = self.get("/login/")[1]
        self.token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

    def get(self, path: str) -> tuple[int, str]:
        with self.opener.open(self.root + path, timeout=60) as response:
            return response.status, response.read().decode()

    def log_in(self, username: str, password: str) -> int:
        form = {"username": username, "password": password, "csrfmiddlewaretoken": self.token}
        request = urllib.request.Request(  # noqa: S310 - http on loopback, the bench's own
            self.root + "/login/",
            data=urllib.parse.urlencode(form).encode(),
            headers={"Referer": self.root + "/login/"},
        )
        try:
            with self.opener.open(request, timeout=60) as response:
                response.read()
                return response.status
        except urllib.error.HTTPError as refused:
            return refused.code


def dashboard_ms(viewer: Browser, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        status, page = viewer.get("/")
        samples.append((time.perf_counter() - started) * 1000)
        if status != 200 or "Boards" not in page:
            raise SystemExit(f"the dashboard answered {status}")
    return samples


def flood(root: str, seconds: float, answers: Counter, latencies: list, number: int) -> None:
    guesser = Browser(root)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        started = time.perf_counter()
        status = guesser.log_in(f"guess-{number}-{secrets.token_hex(3)}", "wrong")
        latencies.append((time.perf_counter() - started) * 1000)
        answers[status] += 1


def percentile(samples: list[float], share: float) -> float:
    return sorted(samples)[min(len(samples) - 1, int(len(samples) * share))]


def main() -> None:
    args = benchenv.options(__doc__, seconds=20.0, threads=8, rounds=40)

    from django.contrib.auth import get_user_model

    from devices import roles

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    benchenv.uncontacted_boards("flood", 5)
    viewer = get_user_model().objects.create_user("flood-viewer", password=VIEWER_PASSWORD)
    roles.assign(viewer, roles.VIEWER)
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    web = subprocess.Popen(
        [gunicorn, "pifarm.wsgi", "--bind", f"127.0.0.1:{port}"],
        cwd=benchenv.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                reader = Browser(root)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("gunicorn did not answer")
        if reader.log_in("flood-viewer", VIEWER_PASSWORD) != 200:
            raise SystemExit("the viewer could not log in")
        dashboard_ms(reader, 5)  # warm-up: imports, templates, the connection
        idle = dashboard_ms(reader, args.rounds)

        answers, login_ms = Counter(), []
        guessers = [
            threading.Thread(target=flood, args=(root, args.seconds, answers, login_ms, n))
            for n in range(args.threads)
        ]
        for guesser in guessers:
            guesser.start()
        time.sleep(1)  # the flood under way
        loaded = dashboard_ms(reader, args.rounds)
        for guesser in guessers:
            guesser.join()
    finally:
        web.terminate()
        web.wait(timeout=30)
        benchenv.cleanup()

    print(
        f"\n{os.cpu_count()} cores; gunicorn as gunicorn.conf.py sets it; {args.threads} "
        f"threads of failed logins for {args.seconds:g} s"
    )
    print(f"load seen: {benchenv.load_average()}\n")
    for name, samples in (
        ("dashboard, nobody else about", idle),
        ("dashboard, under the flood", loaded),
    ):
        print(
            f"{name:<44} median {statistics.median(samples):8.1f} ms  "
            f"p90 {percentile(samples, 0.9):8.1f} ms  (n={len(samples)})"
        )
    said = ", ".join(f"{count} x {status}" for status, count in sorted(answers.items()))
    print(f"{'failed logins answered':<44} {sum(answers.values()):8d}  ({said})")
    print(f"{'a failed login, median':<44} {statistics.median(login_ms):8.1f} ms")
    ratio = statistics.median(loaded) / statistics.median(idle)
    met = benchenv.verdict("dashboard median, flood / idle", ratio, TARGET_RATIO)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
