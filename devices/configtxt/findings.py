"""A finding of the checks, and safe quoting of file text inside its message."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ERROR", "WARNING", "Finding", "shown"]

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Finding:
    line: int | None  # 1-based; None for the file as a whole
    severity: str  # ERROR or WARNING
    message: str

    def __str__(self) -> str:
        """The command line's format: "12: error: message" ("-" when no line)."""
        return f"{'-' if self.line is None else self.line}: {self.severity}: {self.message}"


def shown(text: str, limit: int = 40) -> str:
    """File text fit for a message: undecodable bytes as U+FFFD, control characters escaped
    (a message is printed to terminals and pages), long text cut."""
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escaped(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")
