"""A host's answer that a parser could not read: a typed failure of that one fact.

A parser given text it cannot read raises ``Unparsed`` with why; the reader that ran the
command turns it into a ``ParseError`` that names the command and the first line it printed,
and keeps it with the rest of what it read. What the fact would have said is then unknown,
never an empty default (no containers, no units) that reads as "stopped". Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Unparsed

__all__ = ["FIRST_LINE_CHARS", "ParseError", "Unparsed", "first_line"]

#: What a parse error quotes of the host's text: the start of its first non-blank line.
FIRST_LINE_CHARS = 160


@dataclass(frozen=True)
class ParseError:
    """One fact of a read that could not be parsed: which (``fact``: ``containers``,
    ``units``, ``router``...), the command that printed it, the first line it printed
    (host text, cut), and why the parser refused it."""

    fact: str
    command: str
    first_line: str
    reason: str

    def __str__(self) -> str:
        return (
            f"the output of `{self.command}` could not be read ({self.reason}); "
            f"its first line: {self.first_line!r}"
        )


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, cut to ``FIRST_LINE_CHARS``."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:FIRST_LINE_CHARS]
    return ""
