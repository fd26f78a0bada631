"""What do hostile spec files cost `manage.py campaign start`? Time and peak memory, each case.

    .venv/bin/python bench/spec_bombs.py [--limit 30]

Each case is a spec file handed to `manage.py campaign start FILE` in a process of its own, on
a fresh SQLite database with one board:
  alias bomb, 401 B      YAML whose order is 9 levels of 9 aliases of the level below
                         (9^9 names once expanded; a repr of it would be gigabytes)
  600 levels, YAML       an order of mappings nested 600 deep
  600 levels, JSON       an order of lists nested 600 deep, in JSON
  100,000 levels, JSON   the order nested 100,000 deep (200 kB)
  5 MB of board names    a JSON spec listing 330,000 board names
  401-digit number       quiet.load_below a JSON integer of 401 digits
  5,000-digit number     the same with 5,000 digits (past Python's int-conversion limit)
A case still running after --limit seconds is killed and shown as "> limit". The target for
each: refused (exit 2) in under a second and under 200 MB. Prints figures; asserts nothing.
"""

import json
import os
import subprocess
import sys
import time

import benchenv  # noqa: I001 - first: it sets up Django on a throw-away data directory
from django.core.management import call_command

BOARD = "bomb-1"  # benchenv.uncontacted_boards("bomb", 1): a board the specs name
TARGET_S = 1.0
TARGET_MB = 200


def alias_bomb() -> str:
    """An order that is 9 levels of lists of 9 aliases of the level below: a few hundred
    bytes, 9^9 strings once expanded (the order's refusal shows the value it refused)."""
    levels = ["&a0 [pi,pi,pi,pi,pi,pi,pi,pi,pi]"]
    levels += [f"&a{n} [{','.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    return f"name: bomb\nboards: [{BOARD}]\nbenchmarks: [sha1sum]\norder: [{', '.join(levels)}]\n"


def number_spec(digits: int) -> str:
    spec = json.dumps({"name": "n", "boards": [BOARD], "benchmarks": ["sha1sum"], "quiet": 0})
    return spec.replace('"quiet": 0', f'"quiet": {{"load_below": {"9" * digits}}}')


def cases() -> dict[str, str]:
    deep = "[" * 600 + "]" * 600
    deep_mapping = "{a: " * 600 + "1" + "}" * 600
    names = [f"board-{i:06d}" for i in range(330_000)]
    return {
        "alias bomb, 401 B": alias_bomb(),
        "600 levels, YAML": f"name: deep\nboards: [{BOARD}]\nbenchmarks: [sha1sum]\n"
        f"order: {deep_mapping}\n",
        "600 levels, JSON": json.dumps({"name": "deep", "boards": [BOARD], "benchmarks": []})[
            :-1
        ].replace('"benchmarks": []', '"benchmarks": ["sha1sum"]')
        + f', "order": {deep}}}',
        "100,000 levels, JSON": json.dumps({"name": "deep", "boards": [BOARD]})[:-1]
        + ', "order": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        "5 MB of board names": json.dumps({"name": "many", "boards": names}),
        "401-digit number": number_spec(401),
        "5,000-digit number": number_spec(5000),
    }


def run(path, limit: float) -> tuple[str, float, float, str]:
    """Exit status, seconds, peak MB and the last line of stderr of one campaign start."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "campaign", "start", str(path)],
        cwd=benchenv.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = started + limit
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            process.kill()
            _, status, usage = os.wait4(process.pid, 0)
            return "killed", limit, usage.ru_maxrss / 1024, ""
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    said = process.stderr.read().decode(errors="replace").strip().splitlines()
    return str(os.waitstatus_to_exitcode(status)), seconds, usage.ru_maxrss / 1024, said[-1][:90]


def main() -> None:
    args = benchenv.options(__doc__, limit=(30.0, "seconds before a case stops"))
    call_command("migrate", verbosity=0)
    benchenv.uncontacted_boards("bomb", 1, host_key=benchenv.BENCH_HOST_KEY)
    print(f"{os.cpu_count()} cores; target: exit 2 within {TARGET_S:g} s and {TARGET_MB} MB\n")
    met = True
    try:
        for name, text in cases().items():
            path = benchenv.DATA_DIR / "spec"
            path.write_text(text)
            code, seconds, mb, said = run(path, args.limit)
            shown = f"> {args.limit:g}" if code == "killed" else f"{seconds:.2f}"
            print(f"{name:<22} {len(text):>10,} B  exit {code:>6}  {shown:>6} s  {mb:7.0f} MB")
            print(f"{'':<24}{said}")
            met &= code == "2" and seconds < TARGET_S and mb < TARGET_MB
    finally:
        benchenv.cleanup()
    print(f"\nall refused within target: {'met' if met else 'MISSED'}")
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
