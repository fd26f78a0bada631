"""Throwaway keys for one trial of a network benchmark: SSH, WireGuard, TLS certificates.

A plan's commands cannot pass what one end printed to the other end (each command's argv and
stdin are fixed when the plan is made), yet a tunnel needs each end to know the other's public
key. So the plan draws the trial's keys here, in memory, from the OS random source, and hands
each end its own private key as a command's stdin (never in argv, never in an output). The keys
live in the trial's directories and go with them; a key never outlives its trial.
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519
from cryptography.x509.oid import NameOID

_PEM = serialization.Encoding.PEM
_OPENSSH = serialization.Encoding.OpenSSH
_RAW = serialization.Encoding.Raw
_NO_PASSWORD = serialization.NoEncryption()


@dataclass(frozen=True)
class KeyPair:
    private: bytes  # as the tool reads it from a file
    public: str  # as the other end names it (a key line, a base64 key, a fingerprint)
    certificate: bytes = b""  # TLS only: the self-signed certificate (PEM)


def ssh_ed25519() -> KeyPair:
    """An OpenSSH private key and its `ssh-ed25519 AAAA...` public line."""
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(_PEM, serialization.PrivateFormat.OpenSSH, _NO_PASSWORD)
    public = key.public_key().public_bytes(_OPENSSH, serialization.PublicFormat.OpenSSH)
    return KeyPair(private, public.decode())


def wireguard() -> KeyPair:
    """A WireGuard private key and its public key, base64 as `wg genkey | wg pubkey` give them."""
    key = x25519.X25519PrivateKey.generate()
    private = key.private_bytes(_RAW, serialization.PrivateFormat.Raw, _NO_PASSWORD)
    public = key.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)
    return KeyPair(base64.b64encode(private) + b"\n", base64.b64encode(public).decode())


def tls_self_signed(name: str) -> KeyPair:
    """A P-256 key and a self-signed certificate valid for a day; public is its SHA-256
    fingerprint as OpenVPN's --peer-fingerprint takes it (AB:CD:...)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))  # a board's clock may lag a little
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    private = key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8, _NO_PASSWORD)
    fingerprint = certificate.fingerprint(hashes.SHA256()).hex(":").upper()
    return KeyPair(private, fingerprint, certificate.public_bytes(_PEM))
