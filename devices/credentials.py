"""Encryption at rest for board credentials (SSH private keys and passwords).

Only the SSH seam asks for the clear text, right before it authenticates; nothing else
(pages, admin, logs, job arguments) ever sees more than the kind of credential.
"""

from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class CredentialError(Exception):
    pass


@dataclass(frozen=True)
class Credential:
    kind: str  # "key" or "password"
    secret: str

    def __repr__(self) -> str:  # never let a traceback or a log line print the secret
        return f"Credential(kind={self.kind!r}, secret=<hidden>)"

    __str__ = __repr__


def _fernet() -> MultiFernet:
    try:
        return MultiFernet([Fernet(key.strip().encode()) for key in settings.CREDENTIAL_KEYS])
    except ValueError:
        raise CredentialError(
            "PIFARM_CREDENTIAL_KEY must be a Fernet key (32 url-safe base64-encoded bytes)"
        ) from None


def encrypt(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise CredentialError(
            "the stored credential cannot be decrypted with PIFARM_CREDENTIAL_KEY "
            "(was the key changed?); enter the credential again"
        ) from None
