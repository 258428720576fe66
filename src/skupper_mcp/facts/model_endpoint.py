"""What a provider's model endpoint serves: the command that asks it, and its answer read.
Pure."""

from __future__ import annotations

import json

from ..connectors.shell import quote


def models_command(url: str) -> str:
    """The command that asks a model endpoint's ``/v1/models`` which model it serves."""
    return f"curl -fsS --max-time 3 {quote(url)}"


def parse_model_ids(text: str) -> list[str]:
    """Model ids from an OpenAI-style ``/v1/models`` answer; [] when it is not one."""
    try:
        document = json.loads(text)
    except ValueError:
        return []
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list):
        return []
    return [
        item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)
    ]
