"""Take secrets out of text that leaves a host: the redactor lives in ``skupper_mcp.redaction``
(the bottom layer, so that ``errors`` can use it too); read its docstring for what goes."""

from __future__ import annotations

from ..redaction import MARK, MAX_LINE, PRIVATE_KEY_MARK, redact, redact_lines

__all__ = ["MARK", "MAX_LINE", "PRIVATE_KEY_MARK", "redact", "redact_lines"]
