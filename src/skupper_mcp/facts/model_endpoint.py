"""What a provider's model endpoint serves: the command that asks it, and its answer read.
Pure."""

from __future__ import annotations

import json
from typing import Any

from ..connectors.shell import quote


def models_command(url: str) -> str:
    """The command that asks a model endpoint's ``/v1/models`` which model it serves."""
    return f"curl -fsS --max-time 3 {quote(url)}"


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
        return model_ids(json.loads(text))
    except ValueError:
        return None
