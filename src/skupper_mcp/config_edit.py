"""Our entry set into another program's configuration text, every byte we do not change kept.

Pure: text in, text out. A client's file is the user's and other programs' too, so it is not
parsed and dumped again (that rewrites what we never meant to touch: YAML 1.1 reads
``DEBUG: yes`` as ``true``, ``UMASK: 0755`` as ``493`` and ``SCHEDULE: 12:30`` as ``750``;
JSON's ``1e400`` comes back as ``Infinity``, which Node cannot parse). The file is read
strictly to find where our entry goes, and only that span of its text is replaced or
inserted:

- JSON strictly as RFC 8259 and Node's ``JSON.parse`` read it: ``NaN``, ``Infinity``, a
  number beyond a double's range, and a key twice in one object (a reader keeps one of the
  two, so a block is lost) are refused.
- YAML as 1.2 (Goose writes and reads its config.yaml with serde_yaml, a 1.2 reader),
  round-trip (ruamel.yaml): the lines of our entry are set in the file's own lines.

A file whose layout we cannot edit in place is refused too. Either is a ConfigError saying
why; the caller names the file and what to do (add the entry by hand).
"""

from __future__ import annotations

import copy
import io
import json
import math
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from skupper_mcp.errors import ConfigError

#: ruamel.yaml folds a long plain scalar at its width: never fold (a path is one line).
_NO_FOLD = 1 << 30
_WS = re.compile(r"[ \t\n\r]*")


# JSON


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in items:
        if key in document:
            raise ConfigError(
                f"the key {json.dumps(key)} appears twice in one object (a reader keeps one "
                "of the two, and a rewrite would drop the other)"
            )
        document[key] = value
    return document


def _constant(name: str) -> Any:
    raise ConfigError(f"{name} is not JSON (Node's JSON.parse refuses the file)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ConfigError(
            f"the number {text[:40]} is beyond a double's range (Node reads Infinity)"
        )
    return value


def _integer(text: str) -> int:
    value = int(text)
    try:
        float(value)
    except OverflowError:
        raise ConfigError(
            f"the number {text[:40]}... is beyond a double's range (Node reads Infinity)"
        ) from None
    return value


def strict_json(text: str) -> Any:
    """``text`` as JSON, refusing what a JavaScript reader would read differently."""
    try:
        return json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite,
            parse_int=_integer,
        )  # fmt: skip
    except RecursionError:
        raise ConfigError("nested too deeply to read") from None
    except ValueError as error:  # JSONDecodeError, and int()'s digit limit
        raise ConfigError(str(error)) from None


def _ws(text: str, at: int) -> int:
    match = _WS.match(text, at)
    assert match is not None
    return match.end()


def _members(text: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object whose ``{`` is at ``start``, each as (key, where its key
    starts, where its value starts, where its value ends); and where its ``}`` is. The text
    was read by ``strict_json`` first."""
    decoder = json.JSONDecoder()
    at = _ws(text, start + 1)
    members: list[tuple[str, int, int, int]] = []
    if text[at] == "}":
        return members, at
    while True:
        key_start = at
        key, at = scanstring(text, at + 1)
        at = _ws(text, _ws(text, at) + 1)  # past ':'
        value_start = at
        _, at = decoder.raw_decode(text, at)
        members.append((key, key_start, value_start, at))
        at = _ws(text, at)
        if text[at] == "}":
            return members, at
        at = _ws(text, at + 1)  # past ','


def _json_value(value: Any, indent: str | None, margin: str) -> str:
    """``value`` as JSON to sit after a member's key whose line starts with ``margin``."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=indent).replace("\n", "\n" + margin)


def json_with_entry(text: str, container: tuple[str, ...], name: str, entry: Any) -> str:
    """``text`` (a JSON object) with ``entry`` at ``container`` + ``name``; every other byte
    as it was. The members we add take the file's own indentation (none in a file on one
    line)."""
    strict_json(text)
    at = _ws(text, 0)
    if text[at : at + 1] != "{":
        raise ConfigError("not a JSON object")
    members, close = _members(text, at)
    if members and "\n" in text[at + 1 : members[0][1]]:
        indent: str | None = text[at + 1 : members[0][1]].rsplit("\n", 1)[1] or "  "
    else:
        indent = None if members else "  "
    margin = ""
    path = [*container, name]
    value: Any = entry
    while True:
        key = path[0]
        found = [m for m in members if m[0] == key]
        if found and len(path) > 1 and text[found[0][2] : found[0][3]] != "null":
            _, _, value_start, _ = found[0]
            if text[value_start] != "{":
                raise ConfigError(f"{'.'.join(container)} is not an object")
            margin = _member_margin(text, at, members, margin, indent)
            at = value_start
            members, close = _members(text, at)
            path = path[1:]
            continue
        for later in reversed(path[1:]):
            value = {later: value}
        inner = _member_margin(text, at, members, margin, indent)
        rendered = _json_value(value, indent, inner)
        if found:  # our entry (or a null container) is there: its value replaced
            _, _, value_start, value_end = found[0]
            return text[:value_start] + rendered + text[value_end:]
        member = json.dumps(key, ensure_ascii=False) + (": " if indent is not None else ":")
        member += rendered
        if members:  # after the last member, spaced as it is from the one before
            _, key_start, _, value_end = members[-1]
            space = text[len(text[:key_start].rstrip(" \t\n\r")) : key_start]
            return text[:value_end] + "," + space + member + text[value_end:]
        if indent is None:
            return text[: at + 1] + member + text[close:]
        return text[: at + 1] + "\n" + inner + member + "\n" + margin + text[close:]


def _member_margin(
    text: str,
    at: int,
    members: list[tuple[str, int, int, int]],
    margin: str,
    indent: str | None,
) -> str:
    """What starts the line of a member of the object at ``at`` whose own line starts with
    ``margin``: the first member's, when it is on a line of its own."""
    if members:
        space = text[at + 1 : members[0][1]]
        if "\n" in space:
            return space.rsplit("\n", 1)[1]
    return margin + (indent or "")


# YAML


def _yaml() -> YAML:
    reader = YAML(typ="rt")
    reader.preserve_quotes = True
    reader.width = _NO_FOLD
    reader.allow_duplicate_keys = False
    return reader


def strict_yaml(text: str) -> Any:
    """``text`` as YAML 1.2, round-trip (a key twice is refused: a reader keeps one)."""
    try:
        return _yaml().load(text)
    except RecursionError:
        raise ConfigError("nested too deeply to read") from None
    except YAMLError as error:
        said = str(error).split("To suppress this check", 1)[0]
        raise ConfigError(" ".join(said.split())) from None


def yaml_text(document: Any) -> str:
    """``document`` as a new YAML file holds it."""
    out = io.StringIO()
    _yaml().dump(document, out)
    return out.getvalue()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: list[str], start: int, column: int) -> int:
    """The line after the block of the key on line ``start`` at ``column``: the next line
    that is not blank and not indented past ``column``; the blank lines before it stay
    outside."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > column):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _shifted(text: str, column: int) -> list[str]:
    return [(" " * column + line) if line.strip() else line for line in _lines(text)]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


_EMPTY_VALUE = re.compile(r"^(?P<key>\S[^#]*?:)\s*(?P<empty>\{\s*\})?\s*(#.*)?$")


def yaml_with_entry(text: str, container: tuple[str, ...], name: str, entry: Any) -> str:
    """``text`` (a YAML mapping, or empty) with ``entry`` at ``container`` + ``name`` (one
    key deep, as Goose's ``extensions``); every other line as it was."""
    (key,) = container
    document = strict_yaml(text)
    lines = _lines(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if document is None or (isinstance(document, CommentedMap) and key not in document):
        if isinstance(document, CommentedMap) and document.fa.flow_style():
            raise ConfigError("the file is one flow mapping ({...}) we cannot add a block to")
        return "".join(lines) + yaml_text({key: {name: entry}})
    if not isinstance(document, CommentedMap):
        raise ConfigError("not a mapping")
    servers = document[key]
    key_line, key_column = document.lc.key(key)
    if key_column != 0:
        raise ConfigError(f"{key} is not at the start of its line")
    block = yaml_text({name: entry})
    if servers is None or (isinstance(servers, CommentedMap) and not servers):
        matched = _EMPTY_VALUE.match(lines[key_line].rstrip("\n"))
        if matched is None or (servers is not None and not matched.group("empty")):
            raise ConfigError(f"{key} is written in a way we cannot add a block to")
        head = lines[key_line]
        if matched.group("empty"):
            head = head.replace(matched.group("empty"), "", 1).replace(": ", ":", 1)
        replaced = [head.rstrip(" \n") + "\n", *_shifted(block, 2)]
        return "".join(lines[:key_line] + replaced + lines[key_line + 1 :])
    if not isinstance(servers, CommentedMap):
        raise ConfigError(f"{key} is not a mapping")
    if servers.fa.flow_style():
        raise ConfigError(f"{key} is a flow mapping ({{...}}) we cannot add a block to")
    first = next(iter(servers))
    column = servers.lc.key(first)[1]
    if name in servers:
        start = servers.lc.key(name)[0]
        end = _block_end(lines, start, column)
    else:
        last = list(servers)[-1]
        start = end = _block_end(lines, servers.lc.key(last)[0], column)
    return "".join(lines[:start] + _shifted(block, column) + lines[end:])


def without(document: Any, container: tuple[str, ...], name: str) -> Any:
    """A copy of ``document`` without our entry, and without a container left empty (or
    null) by that, to compare the rest of two documents."""
    if document is None:
        return {}
    copied = copy.deepcopy(document)
    parents = []
    node = copied
    for key in container:
        if not isinstance(node, dict) or key not in node:
            return copied
        parents.append((node, key))
        node = node[key]
    if isinstance(node, dict):
        node.pop(name, None)
    for parent, key in reversed(parents):
        if parent[key]:
            break
        del parent[key]
    return copied
