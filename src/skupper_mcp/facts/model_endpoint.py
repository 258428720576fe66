"""What a provider's model endpoint serves: the command that asks it, and its answer read.
Pure."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

from .. import host_json
from ..connectors.shell import quote


class CurlExit(IntEnum):
    """curl's exit statuses the product tells apart (curl's own libcurl-errors names): the
    one place they are known."""

    #: nothing accepted the connection (CURLE_COULDNT_CONNECT)
    COULDNT_CONNECT = 7
    #: an HTTP error answer, with ``-f`` (CURLE_HTTP_RETURNED_ERROR)
    HTTP_ERROR = 22
    #: no answer within ``--max-time`` (CURLE_OPERATION_TIMEDOUT)
    TIMED_OUT = 28


#: The most of a ``/v1/models`` answer read over SSH: a model list is a few KiB.
MODELS_MAX_BYTES = 1024 * 1024
#: How many ids, and how much of each, a message quotes (the rest is counted).
LISTED_IDS = 8
LISTED_ID_CHARS = 80
#: How many ids, and how many characters of them in all, one row of a result keeps: a
#: server that lists 120,000 ids made 2.3 MB of text of every ``models`` call.
ROW_IDS = 100
ROW_ID_CHARS = 16 * 1024


def models_command(url: str) -> str:
    """The command that asks a model endpoint's ``/v1/models`` which model it serves: its
    whole exchange within 3 s, and one byte more than ``MODELS_MAX_BYTES`` at most, so a
    longer answer shows (``answer_cut``)."""
    return f"curl -fsS --max-time 3 {quote(url)} | head -c {MODELS_MAX_BYTES + 1}"


def answer_cut(text: str) -> bool:
    """Whether a ``models_command`` answer was longer than ``MODELS_MAX_BYTES``."""
    return len(text.encode(errors="surrogateescape")) > MODELS_MAX_BYTES


def listed_ids(ids: list[str]) -> str:
    """Model ids as a message quotes them, each in quotes (an id is the endpoint's text):
    the first ``LISTED_IDS``, each cut to ``LISTED_ID_CHARS``, and what was left out."""
    shown = []
    for model_id in ids[:LISTED_IDS]:
        quoted = repr(model_id[:LISTED_ID_CHARS])
        if len(model_id) > LISTED_ID_CHARS:
            quoted += f"... ({len(model_id) - LISTED_ID_CHARS} more characters)"
        shown.append(quoted)
    text = ", ".join(shown) or "no id"
    if len(ids) > LISTED_IDS:
        text += f" and {len(ids) - LISTED_IDS} more ids"
    return text


def kept_ids(ids: list[str]) -> tuple[list[str], int]:
    """The ids a result's row holds (the first ``ROW_IDS``, within ``ROW_ID_CHARS`` in all)
    and how many were left out."""
    kept: list[str] = []
    chars = 0
    for model_id in ids[:ROW_IDS]:
        chars += len(model_id)
        if chars > ROW_ID_CHARS:
            break
        kept.append(model_id)
    return kept, len(ids) - len(kept)


def quoted_ids(ids: list[str], cut: int = 0) -> str:
    """Ids as a text cell shows them: each in double quotes with its own quotes and
    backslashes escaped (JSON's), so an id holding ``", "`` reads as one; then how many
    were left out."""
    text = ", ".join(json.dumps(i, ensure_ascii=False) for i in ids)
    return f"{text} and {cut} more not shown" if cut else text


def model_ids(document: Any) -> list[str] | None:
    """Model ids of an OpenAI-style ``/v1/models`` answer, already parsed from JSON; None
    when the document is not a model list."""
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list):
        return None
    return [
        item["id"]
        for item in data
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]
    ]


def parse_model_ids(text: str) -> list[str] | None:
    """Model ids from the text of a ``/v1/models`` answer; None when it is not one."""
    try:
        return model_ids(host_json.loads(text))
    except ValueError:
        return None
