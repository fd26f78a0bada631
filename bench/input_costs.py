"""What does hostile input cost? The preset check and the board comparison, through the real views.

    .venv/bin/python bench/input_costs.py [--limit 60]

Runs the Django test client against a fresh SQLite database (no server, no board, no Redis):
  preset check, 1 family     "Check" on the new-preset form with 100,000 short lines, one family
  preset check, 10 families  the same for every board family
  board diff, 8,000 lines    a version page comparing with a board whose config.txt is 8,000
                             identical lines (as a probe stored it)
  board diff, 1 MiB          the same with 1 MiB of identical lines (the probe's cap)
  preset check, 64 KiB       the worst that gets checked: lines up to the size limit, 10 families
  board diff, 1 MiB, block   1 MiB whose managed block comes first (every line after it moves)
  board diff, one 1 MiB line a config.txt that is a single line of 1 MiB
Each case prints its time, the page's size and the peak memory of this process so far. A case
still running after --limit seconds is stopped and shown as "> limit". Prints figures; asserts
nothing.
"""

import logging
import os
import resource
import signal
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
from django.urls import reverse

from devices import configtxt, presets
from devices.models import Board, FactSnapshot, Preset

FAMILIES = ["pi0", "pi1", "pi2", "pi3", "pi3p", "pi02", "pi4", "pi4_r14", "pi400", "pi5"]
PROBE_CAP = 1024 * 1024  # devices.probe.CONFIG_TXT_CAP: the most of a config.txt a probe keeps


class Stopped(Exception):
    pass


def _stop(signum, frame):
    raise Stopped


def timed(name: str, limit: int, action) -> None:
    """Run action once and print its time, the response size and the peak memory."""
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(limit)
    started = time.perf_counter()
    try:
        response = action()
    except Stopped:
        print(f"{name:<28} > {limit} s (stopped)")
        return
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = len(response.content)
    print(
        f"{name:<28} {seconds:8.3f} s  status {response.status_code}  page {size:>11,} bytes  "
        f"peak RSS {peak_mb:6.0f} MB"
    )


def preset_check(client: Client, families: list[str], lines: int = 100_000):
    options = "".join(f"k{i}=1\n" for i in range(lines))
    data = {"name": "flood", "families": families, "options": options, "action": "check"}
    return client.post(reverse("devices:preset_new"), data)


def board_comparison(client: Client, version, config_txt: str):
    board = Board(name=f"flood-{len(config_txt)}", host="127.0.0.1", host_key="x")
    board.set_credential(Board.AuthMethod.PASSWORD, "bench-only")
    board.save()
    facts = {"config_txt": config_txt, "config_path": "/boot/firmware/config.txt"}
    FactSnapshot.objects.create(board=board, facts=facts)
    url = reverse("devices:preset_version", args=[version.preset.code, version.number])
    return client.get(url, {"board": str(board.code)})


def main() -> None:
    args = benchenv.options(__doc__, limit=(60, "seconds before a case stops"))
    setup_test_environment()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)  # a stopped case is no news
    with benchenv.page_lab():
        user = get_user_model().objects.create_superuser("bench")  # force_login: no password
        client = Client()
        client.force_login(user)
        preset = Preset.objects.create(name="bench", families=["pi4"])
        version = presets.new_version(preset, options={"arm_freq": "1800"})
        line = "dtparam=audio=on\n"
        print(f"{os.cpu_count()} cores, one run per case\n")
        timed("preset check, 1 family", args.limit, lambda: preset_check(client, ["pi4"]))
        timed("preset check, 10 families", args.limit, lambda: preset_check(client, FAMILIES))
        timed(
            "board diff, 8,000 lines",
            args.limit,
            lambda: board_comparison(client, version, line * 8000),
        )
        timed(
            "board diff, 1 MiB",
            args.limit,
            lambda: board_comparison(client, version, line * (PROBE_CAP // len(line))),
        )
        timed(
            "preset check, 64 KiB",
            args.limit,
            lambda: preset_check(client, FAMILIES, lines=8_000),  # 62,890 bytes
        )
        block = configtxt.apply_block(b"", "arm_freq=1700\n", "old v1").decode()
        timed(
            "board diff, 1 MiB, block",
            args.limit,
            lambda: board_comparison(
                client, version, block + line * ((PROBE_CAP - len(block)) // len(line))
            ),
        )
        timed(
            "board diff, one 1 MiB line",
            args.limit,
            lambda: board_comparison(client, version, "#" * PROBE_CAP),
        )


if __name__ == "__main__":
    main()
