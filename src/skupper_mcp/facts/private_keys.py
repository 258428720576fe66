"""Which of a podman site's private-key files other users can read, and whether its router
reads them as their owner. Pure: a shell fragment, its parser, and the facts they decide.

Skupper writes every key of a namespace readable beyond its owner: the certificates (each
``tls.key``, under ``runtime/certs`` and the CAs' under ``runtime/issuers``) 0640
(``internal/nonkube/common/fs_config_renderer.go`` ``writeSecretFilesIgnore``@2.2.1), the
resource files (``Secret-*.yaml`` under ``input/resources`` and ``runtime/resources``: a
link's client key) through ``os.Create``, and the link files peers are given
(``runtime/links``) 0644. The router reads only ``runtime/certs``, as the files' owner:
Skupper creates it with ``--user <uid>:<gid>`` and, rootless, ``--userns=keep-id``
(``internal/nonkube/client/compat/container.go`` ``ToSpecGenerator``@2.1.2, @2.2.1). The
seed's ``chmod -R o+r`` was for a router re-created by hand without them, which runs as the
image's ``USER 10000`` (skupper-router ``Containerfile``@3.4.1): no router Skupper makes
needs a key readable by anyone but its owner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .userns import host_side_uid

__all__ = [
    "KEYS_CAUSE",
    "KEYS_FIX",
    "MAX_LISTED",
    "OpenKey",
    "close_keys_command",
    "open_keys",
    "open_keys_listing",
    "parse_open_key",
    "reads_as_owner",
    "summary",
]

#: At most this many open keys are listed (a site has about four per peer).
MAX_LISTED = 64
# Which files hold a private key, relative to the namespace's directory, is said once, in
# ``scripts/keys.sh`` (tls.key, resources/Secret-*, runtime/links/*).
_MODE = re.compile(r"[0-7]{3,4}")
_PATH = re.compile(r"(?:input|runtime)/[A-Za-z0-9._/?+-]{1,1000}")
#: How a key whose name holds other characters is shown (its mode still counts).
ODD_NAME = "(a file whose name has unusual characters)"


@dataclass(frozen=True)
class OpenKey:
    """A private-key file whose mode gives group or others some access."""

    mode: int
    path: str  # relative to the namespace's directory; an unprintable byte shown as ``?``

    def __str__(self) -> str:
        return f"mode {self.mode:o} {self.path}"


#: Why a key is readable beyond its owner, and what setup does about it (precheck, diagnose).
KEYS_CAUSE = (
    "Skupper writes the site's keys (certificates 0640, resource and link files 0644) "
    "readable beyond their owner; whoever reads them can link to this site or pose as it"
)
KEYS_FIX = (
    "run setup: it makes every private-key file of the site 0600 (chmod go-rwx); the router "
    "reads them as their owner"
)


def summary(keys: list[OpenKey], shown: int = 3) -> str:
    """``keys`` in a line: how many (at least, when the listing was cut) and the first few."""
    count = f"{len(keys)}{'+' if len(keys) >= MAX_LISTED else ''}"
    more = f", and {len(keys) - shown} more" if len(keys) > shown else ""
    listed = ", ".join(str(key) for key in keys[:shown])
    return f"{count} private-key file(s) group or others may read: {listed}{more}"


def open_keys_listing(nsdir: str) -> str:
    """Shell: one ``MODE PATH`` line for each key file under ``nsdir`` (a shell word) that
    group or others may read, write or run (``skmcp_open_keys``, ``scripts/keys.sh``). Each
    name is cut at a NUL and its newlines printed as ``?``, so one file is always one line
    and no name can start a line of its own; a caller still stuffs or prefixes each line."""
    return f"skmcp_open_keys {nsdir} {MAX_LISTED}"


def parse_open_key(line: str) -> OpenKey | None:
    """One line of ``open_keys_listing``, or None when it is not one (no mode first). A
    path that is not plain is shown as ``ODD_NAME``: it is the host's text."""
    mode, _, path = line.strip("\r").partition(" ")
    if not _MODE.fullmatch(mode):
        return None
    return OpenKey(int(mode, 8), path if _PATH.fullmatch(path) else ODD_NAME)


def open_keys(lines: list[str]) -> list[OpenKey]:
    """The open keys of ``open_keys_listing``'s lines (at most ``MAX_LISTED``)."""
    found = [parse_open_key(line) for line in lines[:MAX_LISTED]]
    return [key for key in found if key is not None]


def close_keys_command(nsdir: str) -> str:
    """Shell: take group's and others' access from every key file under ``nsdir``
    (``skmcp_close_keys``, ``scripts/keys.sh``)."""
    return f"skmcp_close_keys {nsdir}"


def reads_as_owner(inspect: dict[str, Any], login_uid: int) -> bool:
    """Whether the router container's process is, on the host, the user who owns the site's
    files (``login_uid``), so it reads keys only its owner may read.

    Rootful podman gives the container no user namespace: its uid is the host's. Rootless,
    ``--userns=keep-id`` maps the user's uid to itself (``userns``: real podman shows it as
    a mapping, not by name), and without it the container's root is the user; any other
    container uid is in the user's subordinate range, which owns nothing. A container
    without ``--user`` runs as its image's user (the router's 10000).
    """
    config = inspect.get("Config")
    user = str(config.get("User") or "") if isinstance(config, dict) else ""
    uid_text = user.partition(":")[0]
    if not uid_text.isascii() or not uid_text.isdigit():
        return False  # the image's user, or a name only the container's passwd resolves
    return host_side_uid(inspect, int(uid_text), login_uid) == login_uid
