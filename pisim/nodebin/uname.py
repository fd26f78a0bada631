#!/usr/bin/python3
"""uname of a hostile simulated Pi -- SIMULATED by pisim (see pisim/hostile.py).

Installed as /usr/local/bin/uname on hostile nodes only: the real uname's answer, with markup
or bytes that are not text in the kernel release, or followed by junk lines without end.
Standalone on purpose: only the standard library, no pisim import.
"""

import json
import os
import subprocess
import sys

BOOTED = "/run/pisim/booted.json"
MARKUP = b'<script>alert(1)</script>"><img src=x onerror=alert(2)>'
BINARY = b"\x00\xff\xfe\xc3\x28 (NUL and invalid UTF-8)"
FLOOD = b"flood " * 10 + b"\n"


def traits() -> list:
    try:
        with open(BOOTED) as f:
            return json.load(f).get("hostile", [])
    except (OSError, ValueError):
        return []


def main(argv: list) -> int:
    real = subprocess.run(["/bin/uname", *argv], capture_output=True, check=False)
    sys.stderr.buffer.write(real.stderr)
    out, hostile = real.stdout.rstrip(b"\n"), traits()
    if "-r" in argv and "markup" in hostile:
        out += b" " + MARKUP
    if "-r" in argv and "binary" in hostile:
        out += b" " + BINARY
    try:
        sys.stdout.buffer.write(out + b"\n")
        sys.stdout.buffer.flush()
        while "flood" in hostile:  # until the reader goes away
            sys.stdout.buffer.write(FLOOD)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    return real.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
