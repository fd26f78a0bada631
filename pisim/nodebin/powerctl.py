#!/usr/bin/python3
"""reboot / shutdown / poweroff / halt -- SIMULATED by pisim.

Installed in /usr/local/bin and /usr/local/sbin of each simulated Raspberry Pi (ahead of the
real systemctl links on PATH). Asks the pisim supervisor, through the node's control socket,
to take the node down ~0.3 s later and boot it again. `reboot '0 tryboot'` sets the one-shot
tryboot flag (see shared/reference/raspberry-pi.yaml: tryboot.trigger).
Standalone on purpose: only the standard library, no pisim import.
"""

import os
import socket
import sys

CTL = "/run/pisim/ctl.sock"


def action(prog: str, args: list) -> str | None:
    if prog == "shutdown":
        if "-c" in args:
            return None
        if any(a in ("-r", "--reboot") for a in args):
            return "reboot"
        return "halt"
    if prog in ("poweroff", "halt") or any(a in ("-p", "--poweroff", "--halt") for a in args):
        return "halt"
    if any("tryboot" in a for a in args if not a.startswith("-")):
        return "reboot tryboot"
    return "reboot"


def main(argv: list) -> int:
    prog = os.path.basename(argv[0])
    if "--help" in argv[1:]:  # (for shutdown, -h means halt)
        print(
            f"{prog} [OPTIONS...] -- SIMULATED by pisim: asks the farm supervisor to "
            "reboot or halt this simulated Raspberry Pi."
        )
        return 0
    request = action(prog, argv[1:])
    if request is None:
        return 0
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(CTL)
            sock.sendall(request.encode() + b"\n")
            reply = sock.recv(256).decode().strip()
    except OSError as exc:
        print(f"{prog}: pisim supervisor unreachable: {exc}", file=sys.stderr)
        return 1
    if reply != "ok":
        print(f"{prog}: {reply}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
