"""The subset of Go templates that podman users write in `--format`."""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import PodmanError


def go_value(value: Any) -> str:
    """A value as Go's text/template prints it."""
    if value is None:
        return "<no value>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def _lookup(data: Any, path: str) -> Any:
    value = data
    for part in path.strip(".").split("."):
        if not part:
            continue
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise PodmanError(
                f'template: :1: executing "" at <{path}>: can\'t evaluate field {part}'
            )
    return value


def _evaluate(expr: str, data: Any) -> str:
    words = re.findall(r'"[^"]*"|\S+', expr.replace("|", " | "))
    if "|" in words:  # `.X | json` is `json .X`
        left = words[: words.index("|")]
        right = words[words.index("|") + 1 :]
        words = [*right, *left]
    if words[0] == "json" and len(words) == 2:
        return json.dumps(_lookup(data, words[1]))
    if words[0] == "index" and len(words) == 3:
        container = _lookup(data, words[1]) or {}
        return go_value(container.get(words[2].strip('"'), "<no value>"))
    if words[0] == "upper" and len(words) == 2:
        return go_value(_lookup(data, words[1])).upper()
    if words[0] == "lower" and len(words) == 2:
        return go_value(_lookup(data, words[1])).lower()
    if len(words) == 1 and words[0].startswith("."):
        return go_value(_lookup(data, words[0]))
    raise PodmanError(f'template: :1: function "{words[0]}" not defined')


def render_template(template: str, data: Any) -> str:
    """The subset of Go templates podman users write: fields, json, index, upper, lower."""
    template = template.replace("\\t", "\t").replace("\\n", "\n")
    return _ACTION.sub(lambda m: _evaluate(m.group(1), data), template)
