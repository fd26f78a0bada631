import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("PIFARM_PLAYWRIGHT_BROWSER", "/usr/bin/chromium")
# Chromium flags for a closed network: no background requests to anywhere.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls made by the
    # test itself (not by the live server) are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture
def worker_process(transactional_db, redis_queue):
    """A real `manage.py rqworker` process on the test database and the test Redis, run as
    docs/operations.md says (with the scheduler that delivers a busy board's next try)."""
    database = connection.settings_dict["NAME"]
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": settings.REDIS_URL}
    command = ["rqworker", "default", "--with-scheduler", "--worker-class", "rq.SimpleWorker"]
    worker = subprocess.Popen([sys.executable, "manage.py", *command], cwd=ROOT, env=env)
    yield worker
    worker.terminate()
    worker.wait(timeout=20)


# Chromium logs a blocked script or style as a console error; this makes sure a violation is
# seen even where it would not log one (e.g. a blocked style attribute in an SVG).
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error("CSP violation: " + event.violatedDirective + " " + event.blockedURI);
});
"""


@pytest.fixture
def problems(page):
    """Everything the browser complains about while the test walks the pages."""
    found = []
    page.add_init_script(REPORT_VIOLATIONS)
    page.on("console", lambda m: m.type == "error" and found.append(f"{page.url}: {m.text}"))
    page.on("pageerror", lambda error: found.append(f"{page.url}: {error}"))
    return found


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
