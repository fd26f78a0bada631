"""Plain paramiko helpers for the pisim tests (the project's SSH seam is not used here)."""

import base64
import io
import socket
import time

import paramiko


def client_for(node, password: bool = False, timeout: float = 5) -> paramiko.SSHClient:
    """Connected client, host key pinned to the node's current key."""
    client = paramiko.SSHClient()
    keytype, blob = node.host_key_public.split()[:2]
    client.get_host_keys().add(
        node.host, keytype, paramiko.PKey.from_type_string(keytype, base64.b64decode(blob))
    )
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    auth = (
        {"password": node.password}
        if password
        else {"pkey": paramiko.Ed25519Key.from_private_key(io.StringIO(node.private_key_pem))}
    )
    client.connect(
        node.host,
        node.port,
        node.user,
        look_for_keys=False,
        allow_agent=False,
        timeout=timeout,
        banner_timeout=timeout,
        auth_timeout=timeout,
        **auth,
    )
    return client


def run(node, command: str, timeout: float = 10, password: bool = False):
    """(exit status, stdout, stderr) of one command over a fresh SSH connection."""
    client = client_for(node, password=password)
    try:
        _, stdout, stderr = client.exec_command(command, timeout=timeout)
        out = stdout.read().decode()
        err = stderr.read().decode()
        return stdout.channel.recv_exit_status(), out, err
    finally:
        client.close()


def out(node, command: str, timeout: float = 10) -> str:
    status, stdout, stderr = run(node, command, timeout)
    assert status == 0, f"{command!r} -> {status}: {stderr}"
    return stdout


def connect_error(node, timeout: float = 1.0) -> str:
    """'refused', 'timeout' or 'ok' for a TCP connect to the node's sshd."""
    try:
        with socket.create_connection((node.host, node.port), timeout=timeout):
            return "ok"
    except ConnectionRefusedError:
        return "refused"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return f"error: {exc}"


def wait_for(predicate, timeout: float = 10, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)
