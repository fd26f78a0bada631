import pytest
from cryptography.fernet import Fernet

from devices import credentials
from devices.credentials import Credential, CredentialError

from .factories import TEST_PRIVATE_KEY, make_board


def test_it_round_trips_a_secret_and_never_stores_it_in_clear():
    token = credentials.encrypt("hunter2-secret")
    assert "hunter2" not in token
    assert credentials.decrypt(token) == "hunter2-secret"


def test_a_credential_never_prints_its_secret():
    credential = Credential("password", "hunter2-secret")
    assert "hunter2" not in repr(credential)
    assert "hunter2" not in str(credential)
    assert "hunter2" not in f"{credential}"


def test_a_changed_key_gives_a_clear_error(settings):
    token = credentials.encrypt("hunter2-secret")
    settings.CREDENTIAL_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(CredentialError, match="PIFARM_CREDENTIAL_KEY"):
        credentials.decrypt(token)


def test_old_keys_still_decrypt_after_rotation(settings):
    old_key = settings.CREDENTIAL_KEYS[0]
    token = credentials.encrypt("hunter2-secret")
    settings.CREDENTIAL_KEYS = [Fernet.generate_key().decode(), old_key]
    assert credentials.decrypt(token) == "hunter2-secret"


@pytest.mark.django_db
def test_the_database_row_holds_only_ciphertext():
    board = make_board()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM devices_board WHERE id = %s", [board.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert "PRIVATE KEY" not in row
    assert TEST_PRIVATE_KEY.splitlines()[1] not in row
    assert board.credential().secret == TEST_PRIVATE_KEY
