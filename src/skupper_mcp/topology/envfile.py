"""Reading ``topology.env``: ``KEY=value`` lines split without interpreting any value, and
typed access to the values with errors that point at the file, the line and the variable.

The file is shell-style text, but it is only ever parsed, never executed: expansions
(``$VAR``, ``$(...)``, backticks) and escapes are errors.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from skupper_mcp.errors import ConfigError, cut

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)
_SCOPE_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)
_HOSTNAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?",
    re.ASCII,
)
_PORT = re.compile(r"[0-9]{1,5}", re.ASCII)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
SAFE_PATH = re.compile(r"[A-Za-z0-9_.~/+@:=,-]+", re.ASCII)
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}

T = TypeVar("T")

LABEL_RULE = "a DNS-1123 label (lowercase letters, digits and '-', 1-63 characters)"


@dataclass(frozen=True)
class Assignment:
    """One ``KEY=value`` line."""

    key: str
    value: str
    line: int


def parse_assignments(
    text: str, path: str, problems: list[ConfigError] | None = None
) -> dict[str, Assignment]:
    """Split ``topology.env`` text into assignments, without interpreting any value. With
    ``problems``, a bad line is added to it and skipped, so every line's mistake is found in
    one pass; without, the first one is raised."""
    found: dict[str, Assignment] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            assignment = _parse_line(raw, number, path, found)
        except ConfigError as error:
            if problems is None:
                raise
            problems.append(error)
            continue
        if assignment is not None:
            found[assignment.key] = assignment
    return found


def _parse_line(
    raw: str, number: int, path: str, found: Mapping[str, Assignment]
) -> Assignment | None:
    line = raw.strip()
    if not line or line.startswith("#"):
        return None
    if line.startswith("export ") or line.startswith("export\t"):
        line = line[len("export") :].lstrip()
    key, sep, rest = line.partition("=")
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(
            f"expected KEY=value, got {excerpt(raw)}; "
            "keys are letters, digits and underscores, with no spaces around '='",
            path=path,
            line=number,
        )
    value = _parse_value(rest, path=path, line=number, key=key)
    if key in found:
        raise ConfigError(
            f"set twice (first on line {found[key].line}); keep one",
            path=path,
            line=number,
            variable=key,
        )
    return Assignment(key, value, number)


def _parse_value(rest: str, *, path: str, line: int, key: str) -> str:
    def fail(message: str) -> ConfigError:
        return ConfigError(message, path=path, line=line, variable=key)

    if rest[:1] in ("'", '"'):
        quote = rest[0]
        end = rest.find(quote, 1)
        if end < 0:
            raise fail(f"missing closing {quote}")
        value, after = rest[1:end], rest[end + 1 :]
        if after.strip() and not after.lstrip().startswith("#"):
            raise fail("unexpected text after the closing quote; put a comment after '#'")
        if after and not after[:1].isspace() and after.strip():
            raise fail("a comment needs a space before '#'")
    else:
        value, _, comment = rest.partition(" #")
        if not comment:
            value, _, _ = value.partition("\t#")
        value = value.strip()
        if any(c.isspace() for c in value):
            raise fail('a value with spaces must be quoted: KEY="a b"')
        if value[:1] in ("'", '"') or value.count("'") or value.count('"'):
            raise fail("quotes may only enclose the whole value")
    if "$" in value or "`" in value:
        raise fail("expansions ($VAR, $(...), backticks) are not allowed: the file is never run")
    if "\\" in value:
        raise fail("backslash escapes are not supported; write the value literally")
    if any(ord(c) < 32 and c != "\t" for c in value):
        raise fail("control characters are not allowed")
    return value


def excerpt(text: str) -> str:
    return repr(cut(text.strip(), 40))


class Reader:
    """Typed access to the assignments, with errors that point at the right line."""

    def __init__(
        self,
        assignments: Mapping[str, Assignment],
        path: str,
        problems: list[ConfigError] | None = None,
    ) -> None:
        self.assignments = assignments
        self.path = path
        # Where a value that has a default records its mistake and falls back to the
        # default, so the rest of the file is still checked; a required value still raises.
        self.problems: list[ConfigError] = [] if problems is None else problems

    def attempt(self, work: Callable[[], T], fallback: T) -> T:
        """``work()``, or ``fallback`` with its ``ConfigError`` recorded in ``problems``."""
        try:
            return work()
        except ConfigError as error:
            self.problems.append(error)
            return fallback

    def error(self, key: str, message: str) -> ConfigError:
        found = self.assignments.get(key)
        return ConfigError(
            message, path=self.path, line=found.line if found else None, variable=key
        )

    def has(self, key: str) -> bool:
        return key in self.assignments

    def raw(self, key: str) -> str | None:
        found = self.assignments.get(key)
        if found is None:
            return None
        return found.value

    def required(self, key: str, what: str) -> str:
        value = self.raw(key)
        if value is None or value == "":
            raise ConfigError(f"required: {what}", path=self.path, variable=key)
        return value

    def text(self, key: str, default: str, pattern: re.Pattern[str], what: str) -> str:
        value = self.raw(key)
        if value is None or value == "":
            return default
        return self.attempt(lambda: self.check(key, value, pattern, what), default)

    def check(self, key: str, value: str, pattern: re.Pattern[str], what: str) -> str:
        if not pattern.fullmatch(value):
            raise self.error(key, f"{excerpt(value)} is not valid: expected {what}")
        return value

    def label(self, key: str, default: str) -> str:
        return self.text(key, default, DNS_LABEL, LABEL_RULE)

    def host(self, key: str, default: str | None = None, *, required: str = "") -> str:
        value = self.raw(key)
        if not value:
            if default is not None:
                return default
            raise ConfigError(f"required: {required}", path=self.path, variable=key)
        if default is not None:
            return self.attempt(lambda: self.check_host(key, value), default)
        return self.check_host(key, value)

    def check_host(self, key: str, value: str) -> str:
        if not _is_host(value):
            raise self.error(
                key, f"{excerpt(value)} is not a host name or IP address (letters, digits, . -)"
            )
        return value

    def port(self, key: str, default: int | None = None, *, required: str = "") -> int:
        value = self.raw(key)
        if not value:
            if default is not None:
                return default
            raise ConfigError(f"required: {required}", path=self.path, variable=key)
        if not _PORT.fullmatch(value) or not 1 <= int(value) <= 65535:
            error = self.error(key, f"{excerpt(value)} is not a port: expected 1-65535")
            if default is None:
                raise error
            self.problems.append(error)
            return default
        return int(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if not value:
            return default
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        self.problems.append(
            self.error(key, f"{excerpt(value)} is not a boolean: use true/false/yes/no/1/0")
        )
        return default

    def path_value(self, key: str, base: Path) -> Path | None:
        value = self.raw(key)
        if not value:
            return None

        def resolved() -> Path:
            self.check(key, value, SAFE_PATH, "a file path (letters, digits, / . _ - ~)")
            return self.resolve_path(key, value, base)

        return self.attempt(resolved, None)

    def resolve_path(self, key: str, value: str, base: Path) -> Path:
        """``~`` and ``~user`` expanded; a relative path is relative to ``base``."""
        try:
            path = Path(value).expanduser()
        except RuntimeError as error:  # an unknown ~user, or no home directory
            raise self.error(key, f"cannot expand {excerpt(value)}: {error}") from error
        return path if path.is_absolute() else base / path

    def words(self, key: str) -> list[str]:
        value = self.raw(key)
        return value.split() if value else []


def _is_host(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return bool(_HOSTNAME.fullmatch(value))
    # Python takes anything after an IPv6 '%' as the scope id; only an interface name is one
    _, percent, scope = value.partition("%")
    return not percent or bool(_SCOPE_ID.fullmatch(scope))
