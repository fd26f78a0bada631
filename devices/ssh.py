"""The one place pifarm talks SSH (the only module that imports paramiko).

Rules this module enforces for every caller:
- host keys are checked against the key the user pinned, before any credential is sent;
  there is no auto-add, and an unpinned board can only have its key fetched;
- every step has a deadline: TCP connect, SSH banner, key exchange, authentication, and each
  command (locally, and remotely with coreutils `timeout`);
- no paramiko, socket or EOF error leaves it: each becomes an SSHError that says what the
  board did (accepted TCP but sent no banner, closed during the key exchange, ...);
- command lines are built from argument lists with shlex, so every value is quoted;
- stdout and stderr are drained together (no deadlock on large output) and capped.
"""

import base64
import hashlib
import io
import secrets
import select
import shlex
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import paramiko

from devices.credentials import Credential

OUTPUT_CAP = 1024 * 1024  # bytes kept of each stream; the rest is read and dropped
KILL_GRACE_S = 5  # after the remote `timeout` sends TERM, KILL follows this much later
TIMEOUT_EXIT_STATUS = 124  # what coreutils `timeout` exits with when it stopped the command
KILLED_BY_SIGNAL = -1  # Result.exit_status of a command that died of a signal
EOF_GRACE_S = 2  # after the exit status, how long to wait for the end of the output
PARAMIKO_BACKSTOP_S = 5  # how much later than our own handshake deadline paramiko's come
# What write_file_atomic appends to a file's name for its backup, as a shell glob:
# .pifarm-<UTC YYYYmmdd>-<HHMMSS>-<6 hex>.bak. In the C locale its matches sort oldest first.
BACKUP_GLOB = ".pifarm-" + "[0-9]" * 8 + "-" + "[0-9]" * 6 + "-" + "[0-9a-f]" * 6 + ".bak"


class SSHError(Exception):
    """Base class: the message is meant for the user and never holds a secret."""


class ConnectFailed(SSHError):
    pass


class HostKeyMismatch(SSHError):
    pass


class AuthFailed(SSHError):
    pass


class CommandTimeout(SSHError):
    pass


class ConnectionLost(SSHError):
    pass


class CommandKilled(SSHError):
    pass


class NoAnswer(ConnectionLost):
    """The board said nothing of a command past the command's own time limit (which the board
    enforces): it hangs, or the network to it is cut."""


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    username: str
    credential: Credential
    host_key: str  # pinned "type base64" line

    def __repr__(self) -> str:
        return f"Target({self.username}@{self.host}:{self.port})"


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    banner: float = 10.0
    auth: float = 10.0


@dataclass
class Result:
    exit_status: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def error_text(self, limit: int = 500) -> str:
        return self.stderr.decode("utf-8", errors="replace").strip()[-limit:]


def key_line(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.get_base64()}"


def fingerprint(host_key: str) -> str:
    """SHA256 fingerprint as `ssh-keygen -l` prints it."""
    try:
        blob = base64.b64decode(host_key.split()[1], validate=True)
    except (IndexError, ValueError):
        raise SSHError("not an SSH public key line") from None
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def _resolve(host: str, port: int, timeout: float) -> tuple:
    """The first address of host, with a deadline (getaddrinfo itself has none)."""
    pool = ThreadPoolExecutor(max_workers=1)
    lookup = pool.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    pool.shutdown(wait=False)  # a hung lookup must not hold us past the deadline
    try:
        return lookup.result(timeout=timeout)[0][4]
    except FutureTimeout:
        raise ConnectFailed(f"looking up {host} took longer than {timeout:g} s") from None
    except (OSError, UnicodeError, ValueError) as exc:
        raise ConnectFailed(f"cannot find the address of {host}: {exc}") from None


def _connect_tcp(host: str, port: int, timeout: float) -> socket.socket:
    address = _resolve(host, port, timeout)
    try:
        sock = socket.create_connection(address[:2], timeout=timeout)
    except TimeoutError:
        raise ConnectFailed(
            f"{host}:{port} did not answer within {timeout:g} s (unreachable?)"
        ) from None
    except ConnectionRefusedError:
        raise ConnectFailed(f"{host}:{port} refused the connection (is sshd running?)") from None
    except OSError as exc:
        raise ConnectFailed(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    # A command's round trip is a few small packets each way (open a channel, run, its exit
    # status, close). With Nagle's algorithm one of them waits for the board's delayed ACK:
    # 40 ms on Linux, most of a short command's round trip.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _open_transport(host: str, port: int, timeouts: Timeouts, key_types=None):
    """A transport whose key exchange finished, or ConnectFailed within timeouts.banner.

    start_client(timeout=...) returns silently when time runs out, so we wait on our own
    event and look at the transport ourselves.
    """
    sock = _connect_tcp(host, port, timeouts.connect)
    transport = paramiko.Transport(sock)
    # Our own wait below decides, and words it: paramiko's timeouts end its thread with errors
    # that read like the server hanging up, and under load they could fire first. So theirs
    # come later, as a backstop for a transport we fail to close.
    transport.banner_timeout = timeouts.banner + PARAMIKO_BACKSTOP_S
    transport.handshake_timeout = timeouts.banner + PARAMIKO_BACKSTOP_S
    transport.auth_timeout = timeouts.auth
    try:
        if key_types:
            transport.get_security_options().key_types = key_types
    except ValueError:  # a pinned key of a type paramiko does not know
        sock.close()
        raise HostKeyMismatch(
            f"the pinned host key is of a type pifarm cannot check ({key_types[-1]}); "
            "pin the board's Ed25519, ECDSA or RSA key instead"
        ) from None
    negotiated = threading.Event()
    transport.start_client(event=negotiated)
    negotiated.wait(timeouts.banner)
    if negotiated.is_set() and transport.is_active():
        return transport
    error = transport.get_exception()
    problem = _handshake_problem(transport, error, timeouts.banner)
    transport.close()
    if key_types and "no acceptable host key" in str(error):
        raise HostKeyMismatch(
            f"{host}:{port} has no {key_types[-1]} host key any more, the type pinned for it. "
            "Nothing was sent. If the board was reinstalled, register its new key; otherwise "
            "someone may be intercepting the connection."
        )
    raise ConnectFailed(f"{host}:{port} {problem}")


def _handshake_problem(transport, error: Exception | None, seconds: float) -> str:
    """Why the SSH handshake did not finish, in words for the user (never the board's text)."""
    banner = transport.remote_version
    if transport.is_active():  # still waiting when our deadline passed
        if not banner:
            return (
                f"accepted the connection but sent no SSH banner within {seconds:g} s "
                "(still starting up, or not an SSH server?)"
            )
        return f"sent its SSH banner but did not finish the key exchange within {seconds:g} s"
    if isinstance(error, paramiko.IncompatiblePeer):
        return f"speaks SSH in a way pifarm cannot use ({error})"
    if banner:
        return "closed the connection during the SSH key exchange, after sending its banner"
    if str(error).startswith(("Indecipherable protocol version", "Invalid SSH banner")):
        return "answered, but not with an SSH banner (is this port an SSH server?)"
    return "closed the connection before sending an SSH banner"


def _server_key(transport, host: str, port: int) -> str:
    try:
        return key_line(transport.get_remote_server_key())
    except paramiko.SSHException:  # the server hung up right after the key exchange
        transport.close()
        raise ConnectFailed(f"{host}:{port} closed the connection after the key exchange") from None


def fetch_host_key(host: str, port: int, timeouts: Timeouts = Timeouts()) -> str:
    """The host key a server offers, without authenticating (for the user to confirm)."""
    transport = _open_transport(host, port, timeouts)
    try:
        return _server_key(transport, host, port)
    finally:
        transport.close()


def _host_key_types(pinned: str) -> list[str]:
    """Negotiate the pinned key's algorithm, so the server cannot offer another of its keys."""
    kind = pinned.split()[0]
    if kind == "ssh-rsa":
        return ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]
    return [kind]


def _load_private_key(text: str) -> paramiko.PKey:
    if text.lstrip().startswith(("ssh-", "ecdsa-", "---- BEGIN SSH2 PUBLIC KEY")):
        raise AuthFailed("This is a public key; paste the private key (it starts with -----BEGIN).")
    for key_class in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return key_class.from_private_key(io.StringIO(text))
        except paramiko.PasswordRequiredException:
            raise AuthFailed(
                "This private key is protected by a passphrase; pifarm needs a key without one "
                "(make a separate key for pifarm: ssh-keygen -t ed25519 -N '')."
            ) from None
        except (paramiko.SSHException, ValueError, IndexError, AssertionError):
            continue  # paramiko checks some fields of a key with assert
    raise AuthFailed(
        "This is not an OpenSSH private key of a kind pifarm reads (Ed25519, ECDSA, RSA)."
    )


def parse_private_key(text: str) -> str:
    """Validate a pasted private key; return its public half (for display)."""
    return key_line(_load_private_key(text))


class Session:
    """An authenticated connection to one board. Use as a context manager."""

    def __init__(self, target: Target, timeouts: Timeouts = Timeouts()):
        if not target.host_key.strip():
            raise HostKeyMismatch("no host key is pinned for this board; confirm it first")
        self.target = target
        self.timeouts = timeouts
        self._transport = None

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc_info):
        self.close()

    def connect(self) -> None:
        target = self.target
        transport = _open_transport(
            target.host, target.port, self.timeouts, _host_key_types(target.host_key)
        )
        offered = _server_key(transport, target.host, target.port)
        if offered.split()[:2] != target.host_key.split()[:2]:
            transport.close()
            raise HostKeyMismatch(
                f"the host key of {target.host}:{target.port} has changed: pinned "
                f"{fingerprint(target.host_key)}, offered {fingerprint(offered)}. "
                "Nothing was sent. If the board was reinstalled, register its new key; "
                "otherwise someone may be intercepting the connection."
            )
        try:
            self._authenticate(transport)
        except SSHError:
            transport.close()
            raise
        self._transport = transport

    def _authenticate(self, transport) -> None:
        credential, user = self.target.credential, self.target.username
        started = time.monotonic()
        try:
            if credential.kind == "key":
                transport.auth_publickey(user, _load_private_key(credential.secret))
            else:
                transport.auth_password(user, credential.secret)
        except paramiko.AuthenticationException:
            if not transport.is_active():
                raise ConnectionLost("the board closed the connection during login") from None
            if time.monotonic() - started >= self.timeouts.auth:
                raise ConnectFailed(
                    f"the board did not answer the login within {self.timeouts.auth:g} s"
                ) from None
            raise AuthFailed(f"the board refused the {credential.kind} of user {user}") from None
        except (paramiko.SSHException, EOFError, OSError):
            raise ConnectionLost("the connection dropped during login") from None

    @property
    def open(self) -> bool:
        """Connected, and the connection has not dropped since."""
        return self._transport is not None and self._transport.is_active()

    def local_address(self) -> str:
        """This end's address on the connection: where the board can reach the controller."""
        if self._transport is None:
            raise ConnectionLost("the connection to the board is closed")
        return self._transport.sock.getsockname()[0]

    def close(self) -> None:
        if self._transport is not None:
            transport, self._transport = self._transport, None
            try:
                transport.close()
            except (paramiko.SSHException, EOFError, OSError):
                pass  # hanging up on a connection that is already dead is not an error

    def run(
        self,
        argv: Sequence[str],
        timeout: float,
        *,
        sudo: bool = False,
        stdin: bytes | None = None,
        output_cap: int = OUTPUT_CAP,
    ) -> Result:
        """Run argv on the board; each element is quoted, so none is shell syntax."""
        remote = ["timeout", "-k", str(KILL_GRACE_S), f"{timeout:g}", *argv]
        if sudo:
            remote = ["sudo", "-n", "--", *remote]
        started = time.monotonic()
        result = self._exec(shlex.join(remote), timeout + KILL_GRACE_S + 2, stdin, output_cap)
        # `timeout` exits 124 after TERM, and dies of KILL (no exit status) after the grace.
        stopped_by_timeout = result.exit_status in (TIMEOUT_EXIT_STATUS, KILLED_BY_SIGNAL)
        if stopped_by_timeout and time.monotonic() - started >= timeout:
            raise CommandTimeout(f"{argv[0]} did not finish within {timeout:g} s; it was stopped")
        if result.exit_status == KILLED_BY_SIGNAL:
            raise CommandKilled(f"{argv[0]} was killed by a signal on the board")
        return result

    def run_script(
        self, script: str, timeout: float, *, sudo: bool = False, output_cap: int = OUTPUT_CAP
    ) -> Result:
        """Run a fixed sh script fed on stdin (pifarm's own scripts, never user text)."""
        return self.run(
            ["sh", "-s"], timeout, sudo=sudo, stdin=script.encode(), output_cap=output_cap
        )

    def _exec(self, command: str, deadline_s: float, stdin, cap: int) -> Result:
        if self._transport is None or not self._transport.is_active():
            raise ConnectionLost("the connection to the board is closed")
        try:
            channel = self._transport.open_session(timeout=self.timeouts.connect)
            channel.exec_command(command)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise ConnectionLost(
                f"the connection dropped while starting a command: {exc}"
            ) from None
        try:
            return _Exchange(channel, stdin, cap, deadline_s).run()
        except (paramiko.SSHException, EOFError, OSError):
            # e.g. feeding stdin into a connection the board just cut
            raise ConnectionLost("the connection to the board dropped during the command") from None
        finally:
            try:
                channel.close()
            except (paramiko.SSHException, EOFError, OSError):
                pass  # the connection is gone; the error above, if any, says so

    def write_file_atomic(self, path: str, data: bytes, *, sudo: bool, timeout: float = 30) -> str:
        """Replace path with data: temp file, checksum check, backup, rename. Returns backup path.

        The rename is the only step that touches the file itself, so a dropped connection
        leaves either the old or the new content, never a truncated file.
        """
        digest = hashlib.sha256(data).hexdigest()
        stamp = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"
        backup = f"{path}.pifarm-{stamp}.bak"  # BACKUP_GLOB matches it
        result = self.run(
            ["sh", "-c", _ATOMIC_WRITE, "pifarm-write", path, backup, digest],
            timeout,
            sudo=sudo,
            stdin=data,
        )
        if not result.ok:
            raise SSHError(f"writing {path} failed: {result.error_text() or result.exit_status}")
        return backup if result.text.strip() == "backup" else ""


# $1 path, $2 backup path, $3 expected sha256; data on stdin. Permissions are copied where
# the filesystem keeps them (the boot partition is FAT: it does not, and that is fine).
_ATOMIC_WRITE = r"""
set -eu
dir=$(dirname -- "$1")
tmp=$(mktemp -- "$dir/.pifarm-tmp.XXXXXXXX")
trap 'rm -f -- "$tmp"' EXIT
trap 'exit 143' HUP INT TERM
cat > "$tmp"
got=$(sha256sum < "$tmp" | cut -d' ' -f1)
if [ "$got" != "$3" ]; then echo "checksum mismatch: got $got" >&2; exit 3; fi
if [ -e "$1" ]; then
  chmod --reference="$1" -- "$tmp" 2>/dev/null || true
  chown --reference="$1" -- "$tmp" 2>/dev/null || true
else
  chmod 644 -- "$tmp"
fi
sync -- "$tmp"
if [ -e "$1" ]; then cp -- "$1" "$2"; sync -- "$2"; echo backup; fi
mv -f -- "$tmp" "$1"
trap - EXIT
sync -- "$dir" || true
"""


class _Exchange:
    """Feed stdin and read stdout and stderr of one command, together, until it is over.

    "Over" means the exit status and the end of both streams: OpenSSH may send the exit status
    before the last output, so stopping at the status alone would lose data.
    """

    def __init__(self, channel, stdin: bytes | None, cap: int, waited_s: float):
        self.channel = channel
        self.waited_s = waited_s  # at most, for the whole of it
        self.pending = memoryview(stdin) if stdin else None
        self.cap = cap
        self.out, self.err = bytearray(), bytearray()
        self.out_cut = self.err_cut = False
        if self.pending is None:
            channel.shutdown_write()

    def run(self) -> Result:
        channel = self.channel
        deadline = time.monotonic() + self.waited_s
        exit_seen_at = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise NoAnswer(
                    f"the board said nothing of the command for {self.waited_s:g} s, past its "
                    "own time limit: it hangs, or the network to it is cut"
                )
            self._feed()
            wait = 0.01 if self.pending is not None else min(deadline - now, 0.5)
            select.select([channel], [], [], wait)
            self._read()
            if channel.closed or (channel.eof_received and channel.exit_status_ready()):
                break
            if channel.exit_status_ready():
                exit_seen_at = exit_seen_at or now
                if now - exit_seen_at > EOF_GRACE_S:  # a background child still holds stdout
                    break
            if not channel.get_transport().is_active():
                raise ConnectionLost("the connection to the board dropped during the command")
        self._read()
        return Result(self._status(), bytes(self.out), bytes(self.err), self.out_cut, self.err_cut)

    def _feed(self) -> None:
        if self.pending is None or not self.channel.send_ready():
            return
        try:
            sent = self.channel.send(self.pending[:65536])
        except OSError:  # the command stopped reading (it failed early): keep its stderr
            self.pending = None
            return
        self.pending = self.pending[sent:] if len(self.pending) > sent else None
        if self.pending is None:
            self.channel.shutdown_write()

    def _read(self) -> None:
        while self.channel.recv_ready():
            self.out_cut = _keep(self.out, self.channel.recv(65536), self.cap) or self.out_cut
        while self.channel.recv_stderr_ready():
            chunk = self.channel.recv_stderr(65536)
            self.err_cut = _keep(self.err, chunk, self.cap) or self.err_cut

    def _status(self) -> int:
        if self.channel.exit_status_ready():
            status = self.channel.recv_exit_status()
            if status != -1:
                return status
        if self.channel.get_transport().is_active():
            # sshd closed the channel with an exit-signal, which paramiko does not report.
            return KILLED_BY_SIGNAL
        raise ConnectionLost("the connection dropped before the command reported its exit status")


def _keep(buffer: bytearray, chunk: bytes, cap: int) -> bool:
    room = cap - len(buffer)
    if room > 0:
        buffer.extend(chunk[:room])
    return len(chunk) > room
