import pytest


@pytest.fixture
def fast(settings):
    """Short deadlines: a simulated Pi reboots in about a second."""
    settings.PIFARM_REBOOT_DEADLINE = 15
    settings.PIFARM_REBOOT_POLL = 0.3
    settings.PIFARM_RECONNECT_DEADLINE = 10
    settings.SSH_CONNECT_TIMEOUT = 2
    return settings
