"""Take secrets out of text that leaves a host (logs, command output) before anyone sees it.

Standard library only, and at the bottom of the layers so that ``errors`` can redact a
failed command's output when the error is made (no caller can forget to). ``redact(text)``
returns the text with every secret it recognises replaced, and how many it replaced;
``redact_lines`` does the same for a list of lines (a private key may span several). Its one
state is the secrets this process registered by value (``register_secret``), which only grows.
Replacements read ``[REDACTED]``, a whole private key ``[REDACTED PRIVATE KEY]``.

Time is linear in the input whatever it holds: a line longer than ``MAX_LINE`` characters
is cut there (the rest is dropped, never matched, and the cut says how much went), and
every pattern is written so the regex engine never tries a stretch of text twice: each
starts only where a word or run starts and takes that run possessively (``*+``, ``++``).

What counts as a secret:

- PEM private keys of every kind, PGP private key blocks (``-----BEGIN ... PRIVATE KEY``
  to its END line, over lines or with escaped line breaks inside one line); a block a tail
  cut at the top (an END line alone: the base64 before it goes) or cut short (a BEGIN line
  alone: everything after it goes, up to the end of the text or of a cut line);
- base64 of anything that holds a private key, wrapped over lines (at any width) or not,
  its line breaks real or escaped in a JSON or Go string (once or twice), whatever comes
  first in it (``openssl ecparam -genkey``'s EC PARAMETERS, a certificate before its key);
- a PuTTY ``.ppk`` key's private lines (``Private-Lines: N`` and the base64 under it);
- YAML block scalars (``token: |``) and plain values on the lines below the key
  (``password:`` then an indented value) under a key that names a secret: the whole block;
- the value of a key that names a secret, as ``key=value``, ``key: value`` (the rest of
  the line: a password may hold spaces), ``"key": "value"``, ``--key value`` or
  ``--key=value``: any key containing ``token``, ``password``, ``passwd``, ``passphrase``,
  ``secret``, ``credential``, ``api_key``, ``private_key``, ``access_key``,
  ``client_key`` or ``key_data``; keys ending in ``auth``, ``pwd`` or ``cookie``; ``pass``;
  ``authorization`` (its scheme word stays), ``tls.key``, ``ca.key``, and a Skupper
  token's ``code`` and ``ca`` (and its ``url`` when it is a grant's). Keys that only name or
  point at a secret (``secretName``, ``tokenFile``, ``passwordPath``) keep their values,
  and so do empty, boolean and ``${VAR}`` values and numeric codes;
- openssl's ``-passin pass:x`` (``-passout``, ``-pass``) and curl's ``-u user:password``
  (``--user``; a UID:GID stays);
- ``Bearer <token>``, JWTs, OpenShift ``sha256~`` tokens, AWS access key ids, GitHub,
  GitLab and Slack tokens, and the password in a URL (``https://user:[REDACTED]@host``);
- every secret this process was given by value (``register_secret``: a model API key read
  from its file), wherever it appears, before anything else is matched.

Everything else is left exactly as it was: a router's or controller's own log lines pass
unchanged (``tests/test_redact.py`` holds real skupper-router logs to that).
"""

from __future__ import annotations

import base64
import functools
import re
import threading
from collections.abc import Callable, Iterator
from typing import NamedTuple

__all__ = ["MARK", "MAX_LINE", "PRIVATE_KEY_MARK", "redact", "redact_lines", "register_secret"]

MARK = "[REDACTED]"
PRIVATE_KEY_MARK = "[REDACTED PRIVATE KEY]"
#: Characters of one line that are matched; the rest of a longer line is dropped.
MAX_LINE = 16 * 1024


def redact(text: str) -> tuple[str, int]:
    """``text`` with its secrets replaced, and how many were replaced (0: unchanged
    unless a line was longer than ``MAX_LINE``)."""
    text, known = _known_secrets(text)
    text, cuts = _cap_lines(text)
    text, count = _private_keys(text, cuts)
    count += known
    for step in (
        _putty_private_keys,
        _base64_private_keys,
        _block_scalars,
        _openssl_passwords,  # before ``pass:`` is taken for a key with the rest of its line
        _key_values,
        *_TOKEN_STEPS,
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


# -- secrets known by value ----------------------------------------------------------------

_known_lock = threading.Lock()
_known_values: set[str] = set()
#: One alternation of every registered value, longest first (so a value that holds
#: another is taken whole); None while there is none.
_known_pattern: re.Pattern[str] | None = None


def register_secret(value: str) -> None:
    """Make ``redact`` replace ``value`` wherever it appears, for the rest of the process:
    for a secret this process holds (a model API key read from its file), which no
    pattern could recognise. Blank values are ignored."""
    global _known_pattern
    if not value.strip():
        return
    with _known_lock:
        if value in _known_values:
            return
        _known_values.add(value)
        ordered = sorted(_known_values, key=len, reverse=True)
        _known_pattern = re.compile("|".join(re.escape(v) for v in ordered))


def _known_secrets(text: str) -> tuple[str, int]:
    # Before the lines are cut: a cut through a known value would leave its start in sight.
    pattern = _known_pattern
    if pattern is None:
        return text, 0
    return pattern.subn(MARK, text)


# -- long lines ----------------------------------------------------------------------------

_LONG_LINE = re.compile(rf"(?m)^([^\n]{{{MAX_LINE}}})[^\n]++")


_CUT_PREFIX = " [line cut: "


def cut_mark(chars: int) -> str:
    return f"{_CUT_PREFIX}{chars} more characters not shown]"


def _cap_lines(text: str) -> tuple[str, list[int]]:
    """Lines cut to ``MAX_LINE`` characters, and where each cut mark now starts."""
    if len(text) <= MAX_LINE:
        return text, []
    parts: list[str] = []
    cuts: list[int] = []
    size = last = 0
    for long in _LONG_LINE.finditer(text):
        kept = text[last : long.end(1)]
        parts.append(kept)
        size += len(kept)
        cuts.append(size)
        mark = cut_mark(long.end() - long.end(1))
        parts.append(mark)
        size += len(mark)
        last = long.end()
    parts.append(text[last:])
    return "".join(parts), cuts


# -- PEM private keys ----------------------------------------------------------------------

_PEM_MARKER = re.compile(r"-----(?P<kind>BEGIN|END) (?:[A-Z0-9]++ )*?PRIVATE KEY(?: BLOCK)?+-----")
#: Back from an END line over a key's body, read reversed: base64 characters and line
#: breaks, real ones or escaped in a JSON or Go string (``\n`` reversed is ``n\``).
_BODY_REVERSED = re.compile(r"(?:\n\r?|n\\r\\|n\\|[A-Za-z0-9+/=])*+")


class _Event(NamedTuple):
    start: int
    end: int
    kind: str  # BEGIN, END or CUT


def _private_keys(text: str, cuts: list[int]) -> tuple[str, int]:
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    floor = 0  # nothing before this may be taken again
    for event in _pem_events(text, cuts):
        if event.kind == "BEGIN":
            opened = event.start if opened is None else opened
        elif opened is not None:  # an END closes the key; a cut line ends it too
            spans.append((opened, event.end if event.kind == "END" else event.start))
            opened = None
        elif event.kind == "END":  # a tail cut the key's top off: its body goes back
            spans.append((_body_start(text, floor, event.start), event.end))
        floor = event.end
    if opened is not None:  # the read stopped inside the key
        spans.append((opened, len(text)))
    return _replace_spans(text, spans, PRIVATE_KEY_MARK), len(spans)


def _pem_events(text: str, cuts: list[int]) -> Iterator[_Event]:
    markers = (_Event(m.start(), m.end(), m["kind"]) for m in _PEM_MARKER.finditer(text))
    cut_events = iter([_Event(c, c, "CUT") for c in cuts])
    pending = next(cut_events, None)
    for marker in markers:
        while pending is not None and pending.start <= marker.start:
            yield pending
            pending = next(cut_events, None)
        yield marker
    if pending is not None:
        yield pending
        yield from cut_events


def _body_start(text: str, floor: int, end: int) -> int:
    """Where the body of a key whose END line starts at ``end`` begins, no earlier than
    ``floor``: back over base64 and line breaks (whole lines of base64, and the base64
    tail of the line where the body starts)."""
    back = _BODY_REVERSED.match(text[floor:end][::-1])
    assert back is not None  # the pattern matches the empty string
    return end - back.end()


def _replace_spans(text: str, spans: list[tuple[int, int]], mark: str) -> str:
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts += [text[last:start], mark]
        last = end
    parts.append(text[last:])
    return "".join(parts)


# -- PuTTY private keys --------------------------------------------------------------------

#: A .ppk file's private part: ``Private-Lines: N`` and the lines of base64 under it
#: (PuTTY-User-Key-File-2 and -3 alike; the public lines before it stay).
_PPK_PRIVATE = re.compile(
    r"(?im)^(?P<head>[ \t]*+Private-Lines:[ \t]*+[0-9]{1,5}+)[ \t]*+"
    r"(?:\r?\n[ \t]*+[A-Za-z0-9+/]++={0,2}+[ \t]*+(?=\r?(?:\n|\Z)))++"
)


def _putty_private_keys(text: str) -> tuple[str, int]:
    return _PPK_PRIVATE.subn(lambda found: f"{found['head']}\n{PRIVATE_KEY_MARK}", text)


# -- base64 of private keys ----------------------------------------------------------------

#: A line break in a block of base64: a real one, or escaped in a JSON or Go string
#: (``\n``, ``\r\n``), or escaped twice (a JSON document inside a JSON string).
_B64_BREAK = r"(?:\r?\n|(?:\\{1,2}r)?\\{1,2}n)"
#: A run of base64, and the lines of base64 alone (a wrapped block: ``base64`` wraps at
#: 76 columns, ``openssl base64`` at 64, others narrower) that go on from it, each ending
#: where its line or its quoted string ends. Together long enough to hold a key
#: (``_B64_MIN``), which ``_base64_private_keys`` checks.
_B64_BLOCK = re.compile(
    r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}+={0,2}+"
    rf"(?:{_B64_BREAK}[ \t]*+[A-Za-z0-9+/]++={{0,2}}+"
    r"(?=[ \t]*+(?:\r?\n|\Z|\\{1,2}[rn]|\\{0,2}[\"'])))*+"
)
_B64_MIN = 64
#: What joins the lines of a block: whitespace and escaped line breaks.
_B64_JOINS = re.compile(r"\s++|\\++[rn]")


def _base64_of(marker: bytes) -> tuple[str, ...]:
    """The base64 characters ``marker`` always encodes to, at each of the three byte
    offsets it can have in a stream: found in a run, they say it holds ``marker``."""
    found = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + marker + b"\0\0\0").decode()
        first = -(-offset * 8 // 6)  # the first character with no bit of the padding
        last = (offset + len(marker)) * 8 // 6  # the first with a bit of what follows
        found.append(encoded[first:last])
    return tuple(found)


_B64_PRIVATE_KEY = _base64_of(b"PRIVATE KEY")


def _base64_private_keys(text: str) -> tuple[str, int]:
    def replace(match: re.Match[str]) -> str:
        run = _B64_JOINS.sub("", match[0])
        if len(run) >= _B64_MIN and any(signature in run for signature in _B64_PRIVATE_KEY):
            return PRIVATE_KEY_MARK
        return match[0]  # a certificate, which is public, or other data

    return _count_changes(_B64_BLOCK, replace, text)


def _count_changes(
    pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str], text: str
) -> tuple[str, int]:
    count = 0

    def counted(match: re.Match[str]) -> str:
        nonlocal count
        new = replace(match)
        count += new != match[0]
        return new

    return pattern.sub(counted, text), count


# -- keys that name a secret ---------------------------------------------------------------

#: Fragments one of which a key that names a secret holds: the regex's cheap first test,
#: before ``_holds_secret`` decides.
#: A key's length up to the fragment that makes it name a secret, at most.
_KEY_REACH = 64
_KEY_HINT = (
    rf"(?=[A-Za-z0-9_.-]{{0,{_KEY_REACH}}}?(?=[tpsackuTPSACKU])"
    r"(?:t(?:oken|ls\.key)|p(?:ass(?:w|phrase|(?![a-z0-9]))|rivate[_.-]?key|wd(?![a-z0-9]))|secret"
    r"|c(?:redential|lient[_.-]?key|a\.key|(?:ookie|ode|a)(?![a-z0-9]))"
    r"|a(?:pi[_.-]?key|ccess[_.-]?key|uth(?:orization)?+(?![a-z0-9]))|key[_.-]?data"
    r"|url(?![a-z0-9])))"
)
_KEY = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])(?P<dashes>--?)?+"
    + _KEY_HINT
    + r"(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*+)"
    r"(?P<quote>[\"']?+)"
    r"(?P<sep>[ \t]*+[:=][ \t]*+|(?(dashes)[ \t]++|(?!)))"
)
_SECRET_PARTS = (
    "token",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credential",
    "apikey",
    "privatekey",
    "accesskey",
    "clientkey",
    "keydata",
)
_SECRET_KEYS = frozenset({"tlskey", "cakey", "code", "ca", "url", "pass"})
_SECRET_LAST_WORDS = frozenset({"auth", "pwd", "cookie", "authorization"})
# keys that name, point at or describe a secret rather than hold one: their last word
# (secretName, token_file, PASSWORD-PATH), or an ending no secret's name has (secretname)
_REFERENCE_WORDS = frozenset(
    {
        "name",
        "names",
        "ref",
        "file",
        "files",
        "path",
        "dir",
        "type",
        "kind",
        "count",
        "id",
        "stdin",
        "required",
        "expired",
        "expiry",
        "expiration",
        "expires",
        "ttl",
        "length",
    }
)
_REFERENCE_ENDINGS = ("name", "names", "file", "files", "path")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_HARMLESS_VALUES = frozenset(
    {"", "null", "none", "nil", "<none>", "true", "false", "redacted", "***", "******"}
)
# what a router's ``auth=`` says: the SASL mechanism of a connection, not a credential
_AUTH_MECHANISMS = frozenset(
    {"external", "anonymous", "plain", "gssapi", "digest-md5", "cram-md5", "scram-sha-1"}
    | {"scram-sha-256", "scram-sha-512", "tls", "mtls"}
)
#: what ``key: |`` leaves when its block (``_block_scalars``) held nothing to take
_BLOCK_INDICATOR = re.compile(r"[|>][0-9+-]*+")
_ENV_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*+\}")
#: A Skupper grant's URL: https://host:port/<the AccessGrant's UID>
_GRANT_URL = re.compile(r"(?i)https://[^/\s]++/[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}/?+")


@functools.lru_cache(maxsize=1024)
def _secret_key(key: str) -> str | None:
    """``key`` squashed (lower case, no separators) when its value is a secret; None when it
    is not, or when it only names or points at a secret (``secretName``, ``tokenFile``)."""
    words = [w.lower() for w in _WORDS.findall(key)]
    if not words or words[-1] in _REFERENCE_WORDS or key.lower().endswith(_REFERENCE_ENDINGS):
        return None
    squashed = "".join(words)
    holds = (
        any(part in squashed for part in _SECRET_PARTS)
        or squashed in _SECRET_KEYS
        or words[-1] in _SECRET_LAST_WORDS
    )
    return squashed if holds else None


def _harmless(squashed_key: str, value: str) -> bool:
    """A value that is no secret whatever its key: what was redacted already, empty, a
    boolean, ``${VAR}``, a block scalar's indicator, an HTTP or exit ``code``, an ``auth``
    that names a SASL mechanism, a ``url`` that is not a grant's."""
    lowered = value.lower()
    return (
        value.startswith("[REDACTED")
        or lowered in _HARMLESS_VALUES
        or _ENV_REFERENCE.fullmatch(value) is not None
        or _BLOCK_INDICATOR.fullmatch(value) is not None
        or (squashed_key == "code" and value.isdigit())
        or (squashed_key.endswith("auth") and lowered in _AUTH_MECHANISMS)
        or (squashed_key == "url" and _GRANT_URL.fullmatch(value) is None)
    )


# -- YAML block scalars --------------------------------------------------------------------

_BLOCK_SCALAR = re.compile(
    r"(?im)^(?P<indent>[ \t]*+)(?P<item>-[ \t]++)?+"
    + _KEY_HINT
    + r"(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*+)"
    r"(?P<quote>[\"']?+)[ \t]*+:[ \t]*+(?P<indicator>[|>][0-9+-]*+[ \t]*+)?+(?:\#[^\n]*+)?+"
    # a plain value (no indicator) needs a line below, more indented and not blank
    r"(?(indicator)|(?=\n(?P=indent)[ \t]++\S))"
    r"(?P<block>(?:\n(?P=indent)[ \t]++[^\n]*+|\n[ \t\r]*+(?=\n))*+)"
)
#: The first line under ``key:`` when it starts a nested mapping or sequence, not a value.
_NESTED = re.compile(
    r"[ \t]*+(?:-(?:[ \t]|$)|[\"']?+[A-Za-z0-9_][A-Za-z0-9_.-]*+[\"']?+[ \t]*+:(?:[ \t]|$))"
)


def _block_scalars(text: str) -> tuple[str, int]:
    def replace(match: re.Match[str]) -> str:
        squashed = _secret_key(match["key"])
        block = match["block"]
        if squashed is None or _harmless(squashed, block.strip()):
            return match[0]
        if match["indicator"] is None:  # ``key:`` and its plain value on the lines below
            first = next((line for line in block.split("\n") if line.strip()), "")
            if not first or _NESTED.match(first):
                return match[0]
        kept = block[len(block.rstrip()) :]  # blank lines after the block are not in it
        head = f"{match['indent']}{match['item'] or ''}{match['key']}{match['quote']}"
        return f"{head}: {MARK}{kept}"

    return _count_changes(_BLOCK_SCALAR, replace, text)


# -- key = value ---------------------------------------------------------------------------

_QUOTED = r"\"(?:[^\"\\\n]|\\.)*+\"|'[^'\n]*+'|[\"'][^\n]*+"
#: After ``key=``, ``--key`` or ``"key":``: a quoted value, or one word.
_WORD_VALUE = re.compile(rf"(?:{_QUOTED}|[^\s&\"']++)")
#: After ``key:``: a quoted value, or the rest of the line (a password may hold spaces).
_LINE_VALUE = re.compile(rf"(?:{_QUOTED}|[^\r\n]++)")
_SCHEME = re.compile(r"(?i)(?:bearer|basic|digest|negotiate|token)[ \t]++")


def _key_values(text: str) -> tuple[str, int]:
    parts: list[str] = []
    count = last = 0
    for found in _KEY.finditer(text):
        squashed = _secret_key(found["key"]) if found.start() >= last else None
        if squashed is None:
            continue
        start = found.end()
        if squashed.endswith("authorization"):  # the scheme word stays: "Bearer [REDACTED]"
            scheme = _SCHEME.match(text, start)
            start = scheme.end() if scheme else start
        value = _value_pattern(found).match(text, start)
        if value is None:
            continue
        said, end = value[0], value.end()
        if (cut := said.find(_CUT_PREFIX)) >= 0:  # the cut line's mark stays in sight
            said, end = said[:cut], value.start() + cut
        quote = said[0] if said[0] in "'\"" else ""
        closed = bool(quote) and len(said) > 1 and said.endswith(quote)
        bare = said[len(quote) : len(said) - closed]
        if _harmless(squashed, bare) or _names_a_file(found["key"], quote, bare):
            continue
        parts += [text[last:start], f"{quote}{MARK}{quote if closed else ''}"]
        last = end
        count += 1
    parts.append(text[last:])
    return "".join(parts), count


def _names_a_file(key: str, quote: str, value: str) -> bool:
    """``tar: tls.key: Cannot open: ...``: a file's name before a tool's message, where a
    Secret's ``tls.key: <base64>`` has one word."""
    return "." in key and not quote and any(c.isspace() for c in value)


def _value_pattern(found: re.Match[str]) -> re.Pattern[str]:
    header_like = not found["dashes"] and not found["quote"] and ":" in found["sep"]
    return _LINE_VALUE if header_like else _WORD_VALUE


# -- tokens that say what they are ---------------------------------------------------------

_BEARER = re.compile(
    r"(?i)(?<![A-Za-z0-9_-])(bearer[ \t]++)(?!\[REDACTED)[A-Za-z0-9._~+/-]{8,}+=*+"
)
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]*+")
_SHA256_TOKEN = re.compile(r"(?<![A-Za-z0-9_~-])sha256~[A-Za-z0-9_-]{8,}+")
_AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_SERVICE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}+|glpat-[A-Za-z0-9_-]{20,}+"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}+)"
)
#: openssl's ``-passin pass:x`` (``-passout``, ``-pass``): only ``pass:`` gives the
#: password itself (``env:``, ``file:``, ``fd:`` and ``stdin`` name where it is).
_OPENSSL_PASS = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])(-{1,2}pass(?:in|out)?+(?:[ \t]++|=)[\"']?+pass:)"
    r"(?!\[REDACTED)[^\s\"']++"
)
#: curl's ``-u user:password`` (``--user``): the user stays. Neither starts with a dash
#: (that is the next option).
_USER_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<flag>-u|--user)(?P<sep>[ \t]++|=)(?P<quote>[\"']?+)"
    r"(?P<user>[^\s:\"'@-][^\s:\"'@]*+):(?!\[REDACTED)(?P<password>[^\s\"'-][^\s\"']*+)"
)
_URL_PASSWORD = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]*+://[^/\s:@]++:)(?!\[REDACTED)[^/\s@]++@"
)


def _bearer(text: str) -> tuple[str, int]:
    return _BEARER.subn(rf"\g<1>{MARK}", text)


def _standalone(pattern: re.Pattern[str]) -> Callable[[str], tuple[str, int]]:
    def step(text: str) -> tuple[str, int]:
        return pattern.subn(MARK, text)

    return step


def _openssl_passwords(text: str) -> tuple[str, int]:
    return _OPENSSL_PASS.subn(rf"\g<1>{MARK}", text)


def _user_passwords(text: str) -> tuple[str, int]:
    def replace(match: re.Match[str]) -> str:
        if match["user"].isdigit() and match["password"].isdigit():
            return match[0]  # podman's -u/--user UID:GID, not a password
        return match[0][: match.start("password") - match.start()] + MARK

    return _count_changes(_USER_PASSWORD, replace, text)


def _url_passwords(text: str) -> tuple[str, int]:
    return _URL_PASSWORD.subn(rf"\g<1>{MARK}@", text)


_TOKEN_STEPS: tuple[Callable[[str], tuple[str, int]], ...] = (
    _bearer,
    _standalone(_JWT),
    _standalone(_SHA256_TOKEN),
    _standalone(_AWS_KEY_ID),
    _standalone(_SERVICE_TOKEN),
    _user_passwords,
    _url_passwords,
)
