"""Port 22 of a simulated Pi with a banner fault (pisim.faults): a relay in front of sshd on
loopback that stays silent for a while after boot, or closes the connection after the banner.

Standard library only: pisim/boot.py runs as a script and imports it from this directory.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

from nodelog import log
from nodemounts import write

SSHD_CONFIG = "/etc/ssh/sshd_config"
GATED_SSHD_CONFIG = "/run/sshd_config.gated"  # this boot's sshd config behind SshGate
LOOPBACK_SSHD = ("127.0.0.1", 22)
SSHD_START_WAIT_S = 3.0  # how long the banner gate waits for sshd to listen after a boot


class SshGate:
    """Port 22 of a node with a banner fault: a relay to sshd on the node's loopback.

    A connection is accepted at once and held in silence until banner_delay s after the
    boot; in the close_after_banner s after that it gets sshd's banner and is closed;
    later ones are relayed both ways, byte for byte.
    """

    def __init__(self, booted_at: float, banner_delay: float, close_after_banner: float):
        self.release_at = booted_at + banner_delay
        self.open_at = self.release_at + close_after_banner

    def start(self) -> None:
        """Moves sshd to loopback (a config for this boot only) and listens where it was."""
        text = Path(SSHD_CONFIG).read_text()
        public = re.search(r"^ListenAddress (\S+):(\d+)$", text, re.MULTILINE)
        write(GATED_SSHD_CONFIG, text.replace(public.group(0), "ListenAddress 127.0.0.1:22"))
        listener = socket.create_server((public.group(1), int(public.group(2))))
        threading.Thread(target=self.accept, args=(listener,), daemon=True).start()
        log(f"port 22 gated: silent {self.release_at - time.monotonic():.1f} s")

    def accept(self, listener: socket.socket) -> None:
        while True:
            client, _ = listener.accept()
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    def serve(self, client: socket.socket) -> None:
        with client:
            time.sleep(max(0.0, self.release_at - time.monotonic()))
            upstream = _connect_sshd(time.monotonic() + SSHD_START_WAIT_S)
            if upstream is None:
                return  # sshd is down (killed, restarting): the client sees the door close
            with upstream:
                if time.monotonic() >= self.open_at:
                    upstream.settimeout(None)
                    inbound = threading.Thread(target=_copy, args=(client, upstream), daemon=True)
                    inbound.start()
                    _copy(upstream, client)
                    _shut(client)  # wakes the inbound copy if it still waits in recv()
                    inbound.join()
                    return
                try:
                    client.sendall(upstream.makefile("rb").readline(256))
                except OSError:
                    return  # no banner from sshd, or the client left: nothing to pass on
                _hang_up(client)


def _connect_sshd(deadline: float) -> socket.socket | None:
    """sshd behind the gate, waited for while it starts: right after a boot the gate listens
    before sshd does, and a connection then must still get the fault it was set up for."""
    while True:
        try:
            return socket.create_connection(LOOPBACK_SSHD, timeout=5)
        except OSError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the other side went away: the connection is over


def _shut(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already gone


def _hang_up(conn: socket.socket) -> None:
    """FIN, not RST: read what the client sent, so the banner is not lost in a reset."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(1.0)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass
