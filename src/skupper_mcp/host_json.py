"""JSON from a host, parsed within a bound on its depth as well as its size: the one parser
of host text in JSON (a model server's answer, ``podman ps``, the router's management, the
Kubernetes API). Pure: the standard library and the error tree only, under the connectors.

Python's JSON decoder recurses once per level of nesting: 2 KB of ``[[[[...]]]]`` (a
thousand levels) raises ``RecursionError``, which no ``except ValueError`` of a parser
catches, and the decoded document would recurse again in whatever serialises it (a result,
the cache of resource files). So the depth is measured first, by one scan that counts
brackets outside strings (C-speed: two regular expressions and an ``accumulate``), and a
document deeper than ``MAX_DEPTH`` is refused before ``json.loads`` sees it, as ``TooDeep``:
an ``Unparsed`` and a ``ValueError``, which every caller already takes for text that is not
JSON.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from .errors import TooDeep

__all__ = ["MAX_DEPTH", "TooDeep", "deeper_than", "depth", "loads"]

#: The deepest JSON document taken from a host: a Kubernetes object with its managed
#: fields nests some 20 levels, ``podman inspect`` under 10.
MAX_DEPTH = 100

# A JSON string, escapes included, or one that never ends (to the end of the text, as JSON's
# scanner reads it): every quote outside a string starts a match that succeeds, so no start
# is tried twice and the scan is linear on any input (a pattern that could fail at the end
# was retried from each escaped quote: 80 KB of them took 46 s); and what is not a bracket.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def depth(text: str) -> int:
    """How deep ``text``'s brackets nest outside its strings (an upper bound where the text
    is not JSON: an unterminated string's brackets count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def deeper_than(document: Any, limit: int) -> bool:
    """Whether an already parsed document (JSON's or YAML's: dicts and lists) nests deeper
    than ``limit``: walked without recursion, so a deep one cannot overflow the walk."""
    level: list[tuple[Any, int]] = [(document, 1)]
    while level:
        node, at = level.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if at > limit:
            return True
        level.extend((child, at + 1) for child in children)
    return False


def _text(body: str | bytes | bytearray) -> str:
    if isinstance(body, str):
        return body
    # as json.loads decodes bytes: UTF-8, -16 or -32 by the first bytes
    return bytes(body).decode(json.detect_encoding(body), "surrogatepass")


def loads(body: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(body)``, refused as ``TooDeep`` when it nests deeper than ``max_depth``.
    Raises ``ValueError`` (``json.JSONDecodeError``, ``UnicodeDecodeError``, ``TooDeep``)
    for anything that is not a JSON document within the bound; never ``RecursionError``."""
    text = _text(body)
    found = depth(text)
    if found > max_depth:
        raise TooDeep(found, max_depth)
    try:
        return json.loads(text)
    except RecursionError:  # a stack already deep when called: still the host's answer
        raise TooDeep(found, max_depth) from None
