"""What no text this program hands out may hold, whatever a host sent: the one cleaner that
the result models (``results.Result``) and the CLI's printing both use. Pure, standard
library only, at the bottom of the layers (the CLI loads it without pydantic).

- A lone surrogate (an undecodable byte kept by ``surrogateescape``, or a ``\\ud800`` escape
  in a JSON answer) has no UTF-8: serialising a result that held one failed the whole
  result, and printing it crashed the CLI. It becomes U+FFFD.
- Terminal escape sequences (CSI, OSC, DCS...) are taken out whole: one could retitle or
  clear the terminal, or rewrite lines already shown, and what it carries is not text.
- C0 and C1 control characters, newline and tab excepted (command output keeps its lines),
  are taken out: a terminal acts on them.
- The Unicode bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) are
  taken out: they make text read differently from what it holds.
- The characters that show nothing are taken out: zero-width space, non-joiner and joiner
  (U+200B-U+200D), the word joiner and invisible operators (U+2060-U+2064), the byte order
  mark (U+FEFF) and the tag characters (U+E0000-U+E007F). Text an agent reads can hide
  instructions in them (tags spell ASCII no one sees), and two ids that differ only by them
  look the same.
"""

from __future__ import annotations

import re

__all__ = ["safe_text"]

# Each alternative is one pass of character classes (no nested repetition), so matching
# stays linear on any input.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ params intermediates final
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC, DCS, SOS, PM, APC: to BEL, ST or line end
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence, or a lone ESC
)
# C0 except tab and newline, DEL and C1 (8-bit CSI, OSC...), the bidi controls, and what
# shows nothing: zero-width characters, invisible operators, the BOM and the tag characters
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def safe_text(text: str) -> str:
    """``text`` with its surrogates replaced and its escape sequences, control, bidi and
    invisible characters out."""
    return _UNSAFE.sub("", _ESCAPE_SEQUENCE.sub("", _SURROGATE.sub("\ufffd", text)))
