"""Small builders for board rows used across the devices tests."""

from pathlib import Path

from devices.models import Board, FactSnapshot

KEYS = Path(__file__).resolve().parent.parent / "fixtures" / "keys"
# A throwaway key made for these tests only; it opens nothing.
TEST_PRIVATE_KEY = (KEYS / "test_ed25519").read_text()
TEST_PUBLIC_KEY = (KEYS / "test_ed25519.pub").read_text().split(" test-only")[0]


def make_board(name="bench-1", host="10.213.9.10", secret=TEST_PRIVATE_KEY, **fields) -> Board:
    fields.setdefault("host_key", TEST_PUBLIC_KEY)
    board = Board(name=name, host=host, **fields)
    board.set_credential(Board.AuthMethod.KEY, secret)
    board.save()
    return board


def probed_pi4(board: Board, *, facts=None, **columns) -> FactSnapshot:
    """A probe that found a simulated Raspberry Pi 4 B rev 1.4 on Debian bookworm, 64-bit
    unless columns say otherwise."""
    columns = {
        "model": "Raspberry Pi 4 Model B Rev 1.4",
        "revision": "c03114",
        "kernel_bits": 64,
        "userland_bits": 64,
        "os_name": "Debian GNU/Linux 12 (bookworm)",
        **columns,
    }
    facts = {"simulated": True, **(facts or {})}
    return FactSnapshot.objects.create(board=board, facts=facts, **columns)
