#!/usr/bin/python3
"""Login shell of a hostile simulated Pi -- SIMULATED by pisim (see pisim/hostile.py).

sshd runs every command as `<shell> -c <command>`. This shell logs the command (one JSON
string a line, in the home directory), then runs it with bash. When the node's faults give a
reported_config_path, the config_path fact that pifarm's probe prints is replaced by it: a
board lying about where its config.txt is. Standalone: only the standard library.
"""

import base64
import json
import os
import subprocess
import sys

BOOTED = "/run/pisim/booted.json"
COMMAND_LOG = "/home/pi/.pisim-commands.log"  # as pisim.hostile.COMMAND_LOG
BASH = "/bin/bash"


def reported_config_path() -> str | None:
    try:
        with open(BOOTED) as f:
            return json.load(f).get("reported_config_path")
    except (OSError, ValueError):
        return None


def main(argv: list) -> int:
    if len(argv) != 3 or argv[1] != "-c":  # an interactive login: nothing to rewrite
        os.execv(BASH, [argv[0], *argv[1:]])  # noqa: S606 - it is the shell
    command = argv[2]
    with open(COMMAND_LOG, "a") as log:
        log.write(json.dumps(command) + "\n")
    lie = reported_config_path()
    if lie is None:
        os.execv(BASH, [BASH, "-c", command])  # noqa: S606
    fact = b"config_path=" + base64.b64encode(lie.encode()) + b"\n"
    child = subprocess.Popen([BASH, "-c", command], stdout=subprocess.PIPE)
    for line in child.stdout:
        sys.stdout.buffer.write(fact if line.startswith(b"config_path=") else line)
    sys.stdout.buffer.flush()
    status = child.wait()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
