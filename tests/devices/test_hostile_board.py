"""A hostile board (pisim.hostile) against the real probe job, every page and the apply job.

Real sshd, Redis and RQ workers: what the board prints is what an attacker would put there.
"""

import json
import shlex
import time
import tracemalloc

import pytest
from django.urls import reverse

from devices import apply_steps, presets, remote, tasks
from devices.models import Application, BoardTask, Preset
from pisim import Faults
from pisim.hostile import MARKUP

from .simfarm import register_node
from .test_apply_preset import apply_now

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
LIE = "-delete/config.txt"
CANARY = "/home/pi/canary.txt"


def apply_overclock(board, run_jobs) -> Application:
    """arm_freq=1900 in direct mode, run to its end by a real worker."""
    preset, _ = Preset.objects.get_or_create(name="overclock")
    version = presets.new_version(preset, options={"arm_freq": "1900"})
    return apply_now(board, version, Application.Mode.DIRECT, run_jobs)


def probe(board, run_jobs) -> BoardTask:
    task = tasks.start(board, BoardTask.Kind.PROBE)
    run_jobs()
    task.refresh_from_db()
    return task


def strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def get_ok(client, url, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, url
    page = response.content.decode()
    assert SCRIPT not in page and "<img src=x" not in page, url
    return page


def paths_starting_with_dash(command: str) -> list[str]:
    """Operands of a command the board ran that a tool could take for an option: words that
    start with "-" and hold a "/", and a find starting point that is not absolute."""
    words = shlex.split(command)
    found = [word for word in words if word.startswith("-") and "/" in word]
    starts = [after for word, after in zip(words, words[1:], strict=False) if word == "find"]
    return found + [start for start in starts if not start.startswith("/")]


def pages_of(board, snapshot, task) -> list[str]:
    return [
        reverse("devices:dashboard"),
        board.get_absolute_url(),
        reverse("devices:board_live", args=[board.code]),
        reverse("devices:snapshot", args=[board.code, snapshot.pk]),
        reverse("devices:board_statuses"),
        reverse("devices:task_status", args=[task.code]),
        reverse("admin:devices_board_changelist"),
        reverse("admin:devices_board_change", args=[board.pk]),
        reverse("admin:devices_factsnapshot_changelist"),
        reverse("admin:devices_factsnapshot_change", args=[snapshot.pk]),
        reverse("admin:devices_boardtask_change", args=[task.pk]),
    ]


def test_a_board_full_of_markup_and_bad_bytes_breaks_no_page(
    pisim_node_factory, run_jobs, client, staff
):
    node = pisim_node_factory(faults=Faults(hostile=("markup", "binary")))
    board = register_node(node)
    task = probe(board, run_jobs)
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert MARKUP in facts["model"] and MARKUP in facts["hostname"]
    assert MARKUP in facts["config_txt"] and facts["config_txt_utf8"] is False
    assert not any("\x00" in text for text in strings(facts))  # PostgreSQL refuses NUL

    client.force_login(staff)
    page = get_ok(client, board.get_absolute_url())
    assert page.count(ESCAPED) >= 5  # model, serial, OS, config.txt, ...: shown, escaped
    for url in pages_of(board, task.snapshot, task):
        get_ok(client, url)
    response = client.post(reverse("devices:preset_from_board", args=[board.code]))
    preset = Preset.objects.get()
    assert response.status_code == 302
    for url in (
        preset.get_absolute_url(),
        reverse("devices:apply", args=[preset.code, 1]),
        reverse("admin:devices_preset_change", args=[preset.pk]),
    ):
        get_ok(client, url)
    version_url = reverse("devices:preset_version", args=[preset.code, 1])
    assert ESCAPED in get_ok(client, version_url, board=str(board.code))  # the board diff


@pytest.mark.parametrize("traits", [("huge",), ("flood",)])
def test_a_huge_or_flooding_board_is_probed_in_bounded_time_and_size(
    traits, pisim_node_factory, run_jobs, logged_in
):
    node = pisim_node_factory(faults=Faults(hostile=traits))
    board = register_node(node)
    started = time.monotonic()
    tracemalloc.start()
    try:
        task = probe(board, run_jobs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 15
    assert peak < 64 * 1024 * 1024  # the output is capped at 4 MiB; parsing costs a few times it
    assert task.state == BoardTask.State.DONE, task.reason
    facts = task.snapshot.facts
    assert "probe output is truncated: no end marker" in facts["errors"]
    assert all(len(facts[name] or "") <= 200 for name in ("model", "kernel_release", "os_id"))
    assert len(json.dumps(facts)) < 256 * 1024
    page = get_ok(logged_in, board.get_absolute_url())
    assert len(page) < 512 * 1024


def test_a_board_lying_about_config_txt_gets_nothing_run_on_that_path(
    pisim_node_factory, run_jobs, logged_in, admin_client, fast
):
    node = pisim_node_factory(faults=Faults(hostile=("markup",), reported_config_path=LIE))
    node.write_file(CANARY, "find -delete would take this with it\n")
    board = register_node(node)
    task = probe(board, run_jobs)
    facts = task.snapshot.facts
    refused = (
        f"config.txt: the board reported config.txt at {LIE!r}; that is not a place config.txt "
        "can live, so pifarm will not use it"
    )
    assert refused in facts["errors"]
    assert facts["config_path"] is None and facts["config_txt"] is None
    assert "that is not a place config.txt can live" in get_ok(logged_in, board.get_absolute_url())
    before = node.read_file("/boot/firmware/config.txt")

    application = apply_overclock(board, run_jobs)

    assert application.state == Application.State.FAILED
    assert application.reason == f"Nothing was changed: {refused}"
    assert node.read_file(CANARY) and node.read_file("/boot/firmware/config.txt") == before
    for command in node.commands_run():
        assert not paths_starting_with_dash(command), command
    get_ok(logged_in, application.get_absolute_url())
    get_ok(logged_in, reverse("devices:application_status", args=[application.code]))
    get_ok(admin_client, reverse("admin:devices_application_change", args=[application.pk]))


@pytest.mark.parametrize("traits", [("markup",), ("markup", "binary"), ("huge",), ("flood",)])
def test_an_application_to_a_hostile_board_ends_safely(
    traits, pisim_node_factory, run_jobs, logged_in, admin_client, fast
):
    node = pisim_node_factory(faults=Faults(hostile=traits))
    board = register_node(node)
    before = node.read_file("/boot/firmware/config.txt")
    application = apply_overclock(board, run_jobs)

    after = node.read_file("/boot/firmware/config.txt")
    if application.state == Application.State.VERIFIED:
        assert after.startswith(before) and b"arm_freq=1900" in after[len(before) :]
    else:
        assert application.state == Application.State.FAILED, application.reason
        assert application.reason == (
            "Nothing was changed: config.txt: the probe's output was cut off before config.txt came"
        )
        assert after == before
    for command in node.commands_run():
        assert not paths_starting_with_dash(command), command
    get_ok(logged_in, application.get_absolute_url())
    get_ok(logged_in, reverse("devices:application_status", args=[application.code]))
    get_ok(admin_client, reverse("admin:devices_application_change", args=[application.pk]))


def test_temp_file_cleanup_never_hands_find_a_path_it_would_take_for_an_option(
    pisim_node_factory,
):
    node = pisim_node_factory()
    node.write_file(CANARY, "find -delete would take this with it\n")
    with remote.session(register_node(node)) as session:
        with pytest.raises(apply_steps.StepError, match="not an absolute path"):
            apply_steps.remove_temp_files(session, LIE)
    assert node.read_file(CANARY)
