"""One resource file of a podman site, parsed within bounds. Pure.

A resource file is the host's text: whoever can write into ``input/resources`` (or the
controller's rendered ``runtime/resources``) chooses what the parser does. Two things make a
YAML parser's work unbounded by the bytes it is given: an alias repeats the node its anchor
names, so nine lines of anchors expand to a billion nodes (468 bytes held the server 395 s and
5 GB); and PyYAML's constructor spends microseconds on each byte of a mapping (a plain 14 MiB
file took 56 s). So a file longer than ``MAX_RESOURCE_CHARS`` is refused before it is parsed,
and one that uses an anchor or an alias is refused before it is composed: a Skupper resource
needs neither, and the files Skupper writes are a few KiB (a link's Secret, with three PEM
files, is the largest). A file that nests deeper than ``host_json.MAX_DEPTH`` is refused too:
a thousand levels in 2 KB made the cache's JSON (and any serialiser) raise ``RecursionError``.
A refused file is a ``Parsed`` saying why.

A warm status finds nearly every file as it was: the document is kept as JSON, keyed by the
file's text, and ``json.loads`` makes a fresh copy in a twentieth of the YAML constructor's
time. What is kept is bounded in characters (``CACHE_CHARS``), oldest out first, so a host
that sends new text on every read cannot grow the process.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import yaml

from .. import host_json

__all__ = ["CACHE_CHARS", "MAX_RESOURCE_CHARS", "Parsed", "load_resource"]

#: The longest resource file read: some 15 times a link Secret's size, and half a second of
#: the constructor's time at its slowest (a file that is all short mapping keys).
MAX_RESOURCE_CHARS = 128 * 1024
#: What the parsed-document cache may hold, keys and values together.
CACHE_CHARS = 32 * 1024 * 1024

#: libyaml's loader where PyYAML was built with it: a site's resources parse in a tenth of
#: the pure-Python loader's time (the bulk of the product's CPU in a status); same documents.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Parsed:
    """A resource file's document (None for text YAML cannot parse: a file caught
    mid-write), or why the file is not parsed at all (``refused``)."""

    doc: Any = None
    refused: str | None = None


_ALIASES = Parsed(
    refused="it uses YAML anchors or aliases, which a resource never needs and which can"
    " expand without bound"
)


_TOO_DEEP = Parsed(
    refused=f"it nests deeper than the {host_json.MAX_DEPTH} levels a resource file may"
)


def load_resource(text: str) -> Parsed:
    """The document in ``text``, unless it is too long to parse or uses anchors or aliases."""
    if len(text) > MAX_RESOURCE_CHARS:
        return Parsed(
            refused=f"it holds {len(text)} characters, more than the {MAX_RESOURCE_CHARS}"
            " a resource file may"
        )
    kept = _CACHE.get(text)
    if kept is not None:
        return Parsed(json.loads(kept))
    parsed = _parse(text)
    as_json = None if parsed.refused else _as_json(parsed.doc)
    if as_json is not None:
        _CACHE.put(text, as_json)
    return parsed


def _parse(text: str) -> Parsed:
    # An anchor starts with ``&`` and an alias with ``*`` (YAML 1.1 §9.1.3, §9.1.4): text
    # with neither has none, and skips the event scan (most files: base64 and plain words).
    if ("&" in text or "*" in text) and _has_anchors(text):
        return _ALIASES
    # Flow style nests by brackets: counted before the parser sees them. Block style nests by
    # indentation: libyaml stops at 1000 levels and its constructor does not recurse, so the
    # document is measured once built, before anything (the cache's JSON) recurses over it.
    if host_json.depth(text) > host_json.MAX_DEPTH:
        return _TOO_DEEP
    try:
        doc = yaml.load(text, Loader=_LOADER)  # a safe loader: C or Python
    except yaml.YAMLError:
        return Parsed(None)
    except RecursionError:  # the pure-Python composer recurses once per level
        return _TOO_DEEP
    return _TOO_DEEP if host_json.deeper_than(doc, host_json.MAX_DEPTH) else Parsed(doc)


def _has_anchors(text: str) -> bool:
    """Whether ``text`` holds an anchor or an alias, by its parser events only, so nothing
    is composed or expanded: libyaml composes a document in C, where a loader subclass
    cannot step in, so the check comes before the load."""
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                return True
    except yaml.YAMLError:
        pass  # the load says so: None, as for any text YAML cannot parse
    return False


def _as_json(doc: Any) -> str | None:
    """``doc`` as JSON, or None for a document JSON cannot carry (a timestamp, a key that is
    not a string): that one is parsed anew on each read."""
    try:
        as_json = json.dumps(doc)
    except (TypeError, ValueError):
        return None
    return as_json if json.loads(as_json) == doc else None


class _Kept:
    """Parsed documents by text, least recently used out first past ``limit`` characters.
    Sites are parsed in worker threads, several at once: one lock over each use."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._docs: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> str | None:
        with self._lock:
            found = self._docs.get(text)
            if found is not None:
                self._docs.move_to_end(text)
            return found

    def put(self, text: str, as_json: str) -> None:
        size = len(text) + len(as_json)
        if size > self._limit:
            return
        with self._lock:
            if text in self._docs:
                return
            self._docs[text] = as_json
            self._chars += size
            while self._chars > self._limit:
                old, old_json = self._docs.popitem(last=False)
                self._chars -= len(old) + len(old_json)

    @property
    def chars(self) -> int:
        return self._chars

    def clear(self) -> None:
        with self._lock:
            self._docs.clear()
            self._chars = 0


_CACHE = _Kept(CACHE_CHARS)
