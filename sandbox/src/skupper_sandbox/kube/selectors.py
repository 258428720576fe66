"""Label and field selectors, parsed as the API server parses them.

Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x,y)``, ``a``
(exists) and ``!a`` (does not exist), joined by commas. Field selectors here support
``metadata.name`` and ``metadata.namespace`` with ``=``, ``==`` and ``!=``, and the
top-level fields a kind makes selectable (a Secret's ``type``:
pkg/registry/core/secret/strategy.go SelectableFields in kubernetes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Predicate = Callable[[Mapping[str, str]], bool]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_CMP_RE = re.compile(rf"^\s*({_KEY})\s*(==|!=|=)\s*([-A-Za-z0-9_.]*)\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")
_FIELDS = {"metadata.name", "metadata.namespace"}
#: The top-level fields each kind lets a field selector match, beyond its metadata.
KIND_FIELDS: dict[str, frozenset[str]] = {"Secret": frozenset({"type"})}


class SelectorError(ValueError):
    """A selector that does not parse; the API answers 400 BadRequest."""


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside a parenthesised value set."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return [t for t in terms if t.strip()]


def _term(text: str) -> Predicate:
    if match := _SET_RE.match(text):
        key, op, values = match.group(1), match.group(3), match.group(4)
        wanted = {v.strip() for v in values.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in wanted
        return lambda labels: labels.get(key) not in wanted
    if match := _CMP_RE.match(text):
        key, op, value = match.group(1), match.group(3), match.group(4)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if match := _EXISTS_RE.match(text):
        negate, key = match.group(1) == "!", match.group(2)
        return lambda labels: (key in labels) != negate
    raise SelectorError(f"unable to parse requirement: {text.strip()!r}")


def label_selector(text: str | None) -> Predicate:
    """A predicate over an object's labels; an empty selector matches everything."""
    predicates = [_term(t) for t in _split_terms(text or "")]
    return lambda labels: all(p(labels) for p in predicates)


def field_selector(
    text: str | None, kind_fields: frozenset[str] = frozenset()
) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over a whole object for the supported metadata fields and the kind's
    own selectable fields (``kind_fields``)."""
    checks: list[tuple[str, bool, str]] = []
    for term in _split_terms(text or ""):
        match = re.match(r"^\s*([a-zA-Z.]+)\s*(==|!=|=)\s*(\S*)\s*$", term)
        if not match or match.group(1) not in _FIELDS | kind_fields:
            raise SelectorError(f"field label not supported: {term.strip()!r}")
        checks.append((match.group(1), match.group(2) == "!=", match.group(3)))

    def value_of(obj: Mapping[str, Any], field: str) -> Any:
        if field.startswith("metadata."):
            return (obj.get("metadata") or {}).get(field.split(".", 1)[1])
        return obj.get(field)

    def matches(obj: Mapping[str, Any]) -> bool:
        return all((value_of(obj, field) == value) != negate for field, negate, value in checks)

    return matches
