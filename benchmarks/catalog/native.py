"""Our own C benchmarks: their sources (benchmarks/catalog/c/), compiled on the board.

Compiling on the board builds for its own userland (a 32-bit Raspberry Pi OS gets 32-bit
code), with the board's own compiler; the source goes in on stdin, so no file is copied.
"""

from pathlib import Path

from benchmarks.catalog.spec import Command

_SOURCES = Path(__file__).with_name("c")
COMPILE_TIMEOUT_S = 120  # a Pi Zero compiles slowly
COMPILER_TOOLS = ("cc",)
COMPILER_PACKAGES = ("gcc", "libc6-dev")


def source(name: str) -> bytes:
    """The C source of one of our programs, e.g. source("intloop")."""
    return (_SOURCES / f"{name}.c").read_bytes()


def compile_command(code: bytes, binary: str) -> Command:
    """cc -O2 of the given source (on stdin) into binary, on the board."""
    return Command(
        "board",
        ("cc", "-O2", "-o", binary, "-x", "c", "-"),
        timeout_s=COMPILE_TIMEOUT_S,
        stdin=code,
    )


def compiler_version_command() -> Command:
    """Collected with the result: the figures of our programs depend on the compiler."""
    return Command("board", ("cc", "--version"), name="compiler")


def compiler_version(outputs) -> str:
    return outputs.get("compiler", "").partition("\n")[0].strip()
