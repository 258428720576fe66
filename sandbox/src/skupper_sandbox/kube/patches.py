"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on plain JSON values.

Strategic merge patch is applied as a merge patch: the skupper kinds have no patch
strategies, and the core fields the product patches (labels, data, spec scalars) merge the
same way.
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """A patch that cannot be applied; the API answers 422 (or 409 for a failed test)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch and return the result (inputs are not modified)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"path not found: /{'/'.join(parts)}")
    return node


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    parent = _parent(doc, parts)
    key = parts[-1]
    if isinstance(parent, dict) and key in parent:
        return parent[key]
    if isinstance(parent, list) and key.isdigit() and int(key) < len(parent):
        return parent[int(key)]
    raise PatchError(f"path not found: /{'/'.join(parts)}")


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _parent(doc, parts)
    key = parts[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        index = len(parent) if key == "-" else int(key) if key.isdigit() else -1
        if not 0 <= index <= len(parent):
            raise PatchError(f"index out of range: {key}")
        parent.insert(index, value)
    else:
        raise PatchError(f"cannot add to a scalar at /{'/'.join(parts)}")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    _get(doc, parts)
    parent = _parent(doc, parts)
    if isinstance(parent, dict):
        del parent[parts[-1]]
    else:
        del parent[int(parts[-1])]
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch and return the result (inputs are not modified)."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise PatchError(f"invalid patch operation: {operation!r}")
        op, parts = operation["op"], _pointer(operation["path"])
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(f"{op} needs a value")
        if op == "add":
            doc = _add(doc, parts, copy.deepcopy(operation["value"]))
        elif op == "remove":
            doc = _remove(doc, parts)
        elif op == "replace":
            doc = _add(_remove(doc, parts), parts, copy.deepcopy(operation["value"]))
        elif op in ("move", "copy"):
            source = _pointer(operation.get("from", ""))
            value = copy.deepcopy(_get(doc, source))
            if op == "move":
                doc = _remove(doc, source)
            doc = _add(doc, parts, value)
        elif op == "test":
            if _get(doc, parts) != operation["value"]:
                raise PatchError(f"test failed at {operation['path']}")
        else:
            raise PatchError(f"unknown patch operation {op!r}")
    return doc
