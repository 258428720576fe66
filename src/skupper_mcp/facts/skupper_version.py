"""What ``skupper version`` says about the CLI: its version, or why there is none. Pure.

The one reading of that output; the precheck, setup and up all decide from it. What the
real CLI prints (skupperproject/skupper, ``internal/cmd/skupper/version``):

- 2.0.x and 2.1.x (``nonkube/version.go``): a tab-padded ``COMPONENT``/``VERSION`` table.
  Its ``cli`` row is the CLI's version; the other rows (``router 3.4.2``,
  ``prometheus v2.42.0``) are image versions and never the Skupper version. Without
  ``docker`` on the PATH, 2.0.1+ first writes ``Warning: Docker is not installed...`` on
  stderr (``internal/utils/configs/manifest.go``).
- 2.0.1 to 2.1.x without the namespace directory: ``there is no definition for namespace
  "<ns>"`` on stdout, exit status 2 (``ValidateInput`` + ``utils.HandleError``).
- 2.2.x (``version/version.go``): the bare version, e.g. ``2.2.1``.
- 1.x: ``client version                 1.8.1`` (``cmd/skupper/skupper.go``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_VERSION = re.compile(r"v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?([-+][0-9A-Za-z.+-]*)?", re.ASCII)
_NO_NAMESPACE = re.compile(r'there is no definition for namespace "([^"]*)"')


@dataclass(frozen=True, order=True)
class Version:
    """A version as ``major.minor.patch``; a pre-release or build suffix is kept for display
    but not compared (``2.2.0-rc1`` counts as 2.2.0)."""

    major: int
    minor: int
    patch: int = 0
    text: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str) -> Version | None:
        """``2.1.3``, ``v2.1``, ``2.2.0-rc1`` -> a Version; anything else -> None."""
        match = _VERSION.fullmatch(text.strip())
        if match is None:
            return None
        major, minor, patch, _ = match.groups()
        return cls(int(major), int(minor), int(patch or 0), text.strip().removeprefix("v"))

    def __str__(self) -> str:
        return self.text or f"{self.major}.{self.minor}.{self.patch}"


#: The shell's exit status for a command it could not find (POSIX, "Command Search and
#: Execution"): the CLI is not installed, whatever the shell printed about it.
COMMAND_NOT_FOUND = 127


@dataclass(frozen=True)
class SkupperVersion:
    """The answer of ``skupper version``: ``cli`` is the CLI's version, or None and
    ``problem`` says why. ``missing_namespace`` is the namespace a 2.0.1-2.1.x CLI found no
    directory for (it then prints no version at all). ``not_installed``: the shell found no
    ``skupper`` command (exit status 127, POSIX's "command not found")."""

    cli: Version | None
    problem: str | None = None
    missing_namespace: str | None = None
    not_installed: bool = False

    def meets(self, minimum: str) -> bool | None:
        """Whether the CLI is at least ``minimum``; None when its version is unknown."""
        if self.cli is None:
            return None
        floor = Version.parse(minimum)
        if floor is None:
            raise ValueError(f"not a version: {minimum!r}")
        return self.cli >= floor


def parse_skupper_version(output: str, exit_status: int | None = 0) -> SkupperVersion:
    """Read ``skupper version``'s output (stdout and stderr together) and exit status.

    ``exit_status`` None means it was not recorded; the output alone then decides.
    """
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        missing = _NO_NAMESPACE.search(line)
        if missing:
            return SkupperVersion(None, line, missing_namespace=missing.group(1))
    if exit_status == COMMAND_NOT_FOUND:
        return SkupperVersion(None, "the skupper CLI is not installed", not_installed=True)
    if exit_status not in (0, None):
        return SkupperVersion(None, output.strip()[-300:] or "skupper: command not found")
    rows = [line.split() for line in lines]
    table = any(len(r) >= 2 and (r[0], r[1]) == ("COMPONENT", "VERSION") for r in rows)
    cli_rows = [r for r in rows if r[0].lower() == "cli"]
    if table or cli_rows:
        if not cli_rows:
            return SkupperVersion(None, "the COMPONENT/VERSION table has no cli row")
        found = Version.parse(cli_rows[0][1]) if len(cli_rows[0]) >= 2 else None
        if found is None:
            return SkupperVersion(None, f"the cli row has no version: {' '.join(cli_rows[0])}")
        return SkupperVersion(found)
    for words in rows:
        if [w.lower() for w in words[:2]] == ["client", "version"] and len(words) >= 3:
            found = Version.parse(words[2])
            if found is not None:
                return SkupperVersion(found)
    for line in lines:
        found = Version.parse(line)
        if found is not None:
            return SkupperVersion(found)
    if "undefined" in lines:
        return SkupperVersion(None, "the skupper CLI reports no version (a development build)")
    tail = " | ".join(lines[-2:])
    return SkupperVersion(None, f"no version in the output: {tail}" if tail else "no output")
