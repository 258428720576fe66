"""Take secrets out of text that leaves a host (logs, command output) before anyone sees it.

Pure, standard library only. ``redact(text)`` returns the text with every secret it
recognises replaced, and how many it replaced; ``redact_lines`` does the same for a list of
lines (a private key may span several). Replacements read ``[REDACTED]``, a whole private
key ``[REDACTED PRIVATE KEY]``. What counts as a secret:

- PEM private keys (``-----BEGIN ... PRIVATE KEY-----`` to its END line); a block a tail cut
  at the top (an END line alone: the key body before it goes) or cut short (a BEGIN line
  alone: everything after it goes); base64 of one (``LS0tLS1CRUdJTi...``, as a Secret's
  ``data`` holds it);
- ``Authorization`` header values and ``Bearer <token>``;
- JWTs (``eyJ...``.``eyJ...``.``...``: Kubernetes service account tokens);
- the value of a key that names a secret, as ``key=value``, ``key: value`` or
  ``"key": "value"``: any key containing ``token``, ``password``, ``passwd``,
  ``passphrase``, ``secret``, ``api_key``, ``private_key`` or ``access_key``
  (``client_secret``, ``accessToken``), and ``tls.key`` / ``ca.key``. Keys that only name or
  point at a secret (``secretName``, ``tokenFile``, ``passwordPath``) keep their values, and
  so do empty, boolean and ``${VAR}`` values;
- the password in a URL (``https://user:[REDACTED]@host``).

Everything else is left exactly as it was: a router's or controller's own log lines pass
unchanged (``tests/test_redact.py`` holds real skupper-router logs to that).
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["MARK", "PRIVATE_KEY_MARK", "redact", "redact_lines"]

MARK = "[REDACTED]"
PRIVATE_KEY_MARK = "[REDACTED PRIVATE KEY]"

_PEM_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.DOTALL
)
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")
# base64 of "-----BEGIN": the start of a PEM file as a Secret's data holds it
_B64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
# Line breaks inside a key body: real ones, or escaped ones in a JSON or Go string.
_BREAKS = ("\\r\\n", "\\n", "\r\n", "\n")

_AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?)"
    r"((?:bearer|basic|digest|negotiate|token)\s+)?+"
    r"(?!\[REDACTED)([^\s\"',;]+)"
)
# at least 8 characters: "bearer token expired" is prose, not a credential
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?!\[REDACTED)([A-Za-z0-9\-._~+/]{8,}=*)")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)(?!\[REDACTED)([^/\s@]+)(@)")
_KEY_VALUE = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])"
    r"(?P<key>[A-Za-z0-9_.-]*?"
    r"(?:token|password|passwd|passphrase|secret|api[_-]?key|private[_-]?key|access[_-]?key)"
    r"[A-Za-z0-9_.-]*|tls\.key|ca\.key)"
    r"(?P<sep>[\"']?\s*[:=]\s*)"
    r"(?P<value>\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s,;&}\])\"']+)"
)
# keys that name, point at or describe a secret rather than hold one: their last word
# (secretName, token_file, PASSWORD-PATH), or an ending no secret's name has (secretname)
_REFERENCE_WORDS = frozenset(
    {"name", "names", "ref", "file", "files", "path", "dir", "type", "kind", "count", "id"}
)
_REFERENCE_ENDINGS = ("name", "names", "file", "files", "path")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_HARMLESS_VALUES = frozenset(
    {"", "null", "none", "nil", "<none>", "true", "false", "redacted", "***", "******"}
)


def redact(text: str) -> tuple[str, int]:
    """``text`` with its secrets replaced, and how many were replaced (0: unchanged)."""
    count = 0
    for step in (
        _private_keys,
        _base64_private_keys,
        _authorization,
        _bearer,
        _jwts,
        _url_passwords,
        _key_values,
    ):
        text, found = step(text)
        count += found
    return text, count


def redact_lines(lines: list[str]) -> tuple[list[str], int]:
    """``redact`` over lines taken together (a private key spans several); the lines that
    remain (a key's lines become one) and how many secrets were replaced."""
    if not lines:
        return [], 0
    text, count = redact("\n".join(lines))
    return text.split("\n"), count


def _private_keys(text: str) -> tuple[str, int]:
    text, count = _PEM_BLOCK.subn(PRIVATE_KEY_MARK, text)
    # An END line left over has no BEGIN before it: a tail cut the key's top off.
    while (end := _PEM_END.search(text)) is not None:
        start = _key_body_start(text, end.start())
        text = text[:start] + PRIVATE_KEY_MARK + text[end.end() :]
        count += 1
    # A BEGIN line left over has no END after it: the key runs to the end of what was read.
    begin = _PEM_BEGIN.search(text)
    if begin is not None:
        text = text[: begin.start()] + PRIVATE_KEY_MARK
        count += 1
    return text, count


def _key_body_start(text: str, end: int) -> int:
    """Where the base64 body of a key whose END line starts at ``end`` begins: back over
    whole lines of base64, and the base64 tail of the line where the body starts."""
    pos = end
    while pos > 0:
        broke = next((b for b in _BREAKS if text.endswith(b, 0, pos)), None)
        if broke is not None:
            pos -= len(broke)
        start = pos
        while start > 0 and text[start - 1] in _B64_CHARS and not _escaped(text, start - 1):
            start -= 1
        line_begins = start == 0 or any(text.endswith(b, 0, start) for b in _BREAKS)
        if not line_begins:
            return start
        if broke is None and start == pos:
            return pos
        pos = start
    return pos


def _escaped(text: str, index: int) -> bool:
    """Whether ``text[index]`` is the letter of an escape such as ``\\n``."""
    return text[index] in "nr" and index > 0 and text[index - 1] == "\\"


def _base64_private_keys(text: str) -> tuple[str, int]:
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        head = match.group(0)[:60]
        try:
            decoded = base64.b64decode(head[: len(head) // 4 * 4])
        except (binascii.Error, ValueError):
            return match.group(0)
        if b"PRIVATE KEY" not in decoded:
            return match.group(0)  # a certificate, which is public
        count += 1
        return PRIVATE_KEY_MARK

    return _B64_PEM.sub(replace, text), count


def _authorization(text: str) -> tuple[str, int]:
    return _AUTHORIZATION.subn(lambda m: f"{m.group(1)}{m.group(2) or ''}{MARK}", text)


def _bearer(text: str) -> tuple[str, int]:
    return _BEARER.subn(lambda m: f"{m.group(1)}{MARK}", text)


def _jwts(text: str) -> tuple[str, int]:
    return _JWT.subn(MARK, text)


def _url_passwords(text: str) -> tuple[str, int]:
    return _URL_PASSWORD.subn(lambda m: f"{m.group(1)}{MARK}{m.group(3)}", text)


def _names_a_secret(key: str) -> bool:
    """Whether a key only names or points at a secret (``secretName``, ``tokenFile``)."""
    words = _WORDS.findall(key)
    last = words[-1].lower() if words else ""
    return last in _REFERENCE_WORDS or key.lower().endswith(_REFERENCE_ENDINGS)


def _key_values(text: str) -> tuple[str, int]:
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        key, value = match.group("key"), match.group("value")
        if _names_a_secret(key):
            return match.group(0)
        quote = value[0] if value[:1] in ("'", '"') else ""
        bare = value[1:-1] if quote else value
        if bare.lower() in _HARMLESS_VALUES or bare.startswith(("$", "[REDACTED")):
            return match.group(0)
        count += 1
        return f"{key}{match.group('sep')}{quote}{MARK}{quote}"

    return _KEY_VALUE.sub(replace, text), count
