"""Loopback servers that misbehave the ways a slow or strange board's SSH server does.

Each server listens on 127.0.0.1 (a free port) and runs `behaviour(conn)` for every
connection in a thread of its own; leaving the `with` block closes everything.
"""

import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import paramiko

HOST_KEY = Path(__file__).resolve().parent.parent / "fixtures" / "keys" / "test_ed25519"
BANNER = b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"


@contextmanager
def loopback_server(behaviour):
    """Yields the port; every connection goes to behaviour(conn), which may keep it open."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    conns = []

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conns.append(conn)
            threading.Thread(target=behaviour, args=(conn, stop), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
        for conn in conns:
            conn.close()


def silent(conn, stop):
    """Accepts TCP and never says a word: a board whose sshd has not started talking yet."""
    stop.wait(30)


def banner_then_close(conn, stop):
    conn.sendall(BANNER)
    conn.close()


def banner_then_silent(conn, stop):
    conn.sendall(BANNER)
    stop.wait(30)


def garbage_then_close(conn, stop):
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    conn.close()


def garbage_flood(conn, stop):
    """Line after line of something that is not SSH, and the connection stays open."""
    try:
        while not stop.is_set():
            conn.sendall(b"<html>not ssh</html>\r\n" * 50)
            time.sleep(0.01)
    except OSError:
        return


def close_mid_key_exchange(conn, stop):
    """Banner out, the client's banner and KEXINIT in, then the server hangs up."""
    conn.sendall(BANNER)
    received = b""
    deadline = time.monotonic() + 5
    while b"\n" not in received or len(received.partition(b"\n")[2]) < 5:
        if time.monotonic() > deadline:
            break
        received += conn.recv(4096)
    conn.close()


class _AnyLogin(paramiko.ServerInterface):
    """A server side that lets anyone in and runs (pretends to run) any command."""

    def __init__(self, on_login=None, on_exec=None):
        self.on_login, self.on_exec = on_login, on_exec

    def get_allowed_auths(self, username):
        return "publickey,password"

    def _login(self):
        if self.on_login:
            self.on_login()
        return paramiko.AUTH_SUCCESSFUL

    def check_auth_password(self, username, password):
        return self._login()

    def check_auth_publickey(self, username, key):
        return self._login()

    def check_channel_request(self, kind, chanid):
        return paramiko.OPEN_SUCCEEDED

    def check_channel_exec_request(self, channel, command):
        if self.on_exec:
            self.on_exec(channel)
        return True


def paramiko_server(hang_up_at: str):
    """A behaviour: a real SSH server (paramiko) that cuts the TCP connection at a moment:
    "login" (when the client sends its credential) or "command" (once a command started and
    its stdin is flowing)."""

    def behaviour(conn, stop):
        def cut(*_):
            conn.shutdown(socket.SHUT_RDWR)

        def cut_soon(channel):
            threading.Timer(0.3, cut).start()

        server = _AnyLogin(on_login=cut) if hang_up_at == "login" else _AnyLogin(on_exec=cut_soon)
        transport = paramiko.Transport(conn)
        transport.add_server_key(paramiko.Ed25519Key.from_private_key_file(str(HOST_KEY)))
        try:
            transport.start_server(server=server)
        except (paramiko.SSHException, EOFError, OSError):
            return
        stop.wait(30)
        transport.close()

    return behaviour


def server_host_key() -> str:
    key = paramiko.Ed25519Key.from_private_key_file(str(HOST_KEY))
    return f"{key.get_name()} {key.get_base64()}"
