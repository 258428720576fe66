"""Which host user a container's process is, and what it may therefore read.

Every sandbox process really runs as this machine's user, so file permissions are checked
here against the ids a real host would give the container (podman's user namespaces):

- a root host has no user namespace: the container's uid is the host uid;
- a rootless host maps container uid 0 to the user, and every other container uid into
  the user's subordinate range (`/etc/subuid`), which owns nothing on the host;
- `--userns=keep-id` maps the user's own uid to itself (and the rest into the range).

The host's files belong to the host's user (`host.json` `uid`/`gid`). The router image runs
as `USER 10000` (skupper-router `Containerfile`) unless `--user` says otherwise; Skupper
creates it with `--user <uid>:<gid>` and, rootless, `--userns=keep-id`
(`internal/nonkube/client/compat/container.go` `ToSpecGenerator`).
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from skupper_sandbox import hostenv

from .containers import Container

ROUTER_IMAGE_USER = 10000
ROUTER_CONFIG = "/etc/skupper-router/config/skrouterd.json"
_SUBORDINATE = -1  # an id of the user's subordinate range: owns nothing on the host


def _ids(user: str, default_uid: int) -> tuple[int, int]:
    uid_text, _, gid_text = (user or str(default_uid)).partition(":")
    uid = int(uid_text) if uid_text.isdigit() else default_uid
    gid = int(gid_text) if gid_text.isdigit() else uid
    return uid, gid


def host_ids(c: Container, info: hostenv.HostInfo, image_user: int = 0) -> tuple[int, int]:
    """The host uid and gid of the container's process (`_SUBORDINATE` for a mapped id)."""
    uid, gid = _ids(c.user, image_user)
    if info.is_root:
        return uid, gid
    keep_id = c.userns.split(":", 1)[0] == "keep-id"

    def mapped(container_id: int, own: int) -> int:
        if keep_id:
            return own if container_id == own else _SUBORDINATE
        return own if container_id == 0 else _SUBORDINATE

    return mapped(uid, info.uid), mapped(gid, info.group_id)


def may_read(path: Path, ids: tuple[int, int], info: hostenv.HostInfo) -> bool:
    """Whether a process with host ``ids`` may read ``path`` (a file of the host's user)."""
    uid, gid = ids
    mode = path.stat().st_mode
    if uid == 0 and info.is_root:
        return True
    if uid == info.uid:
        return bool(mode & stat.S_IRUSR)
    if gid == info.group_id:
        return bool(mode & stat.S_IRGRP)
    return bool(mode & stat.S_IROTH)


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), value)


def router_unreadable_certificate(c: Container, info: hostenv.HostInfo) -> str | None:
    """The error skrouterd stops with when an sslProfile file is unreadable, else None.

    The wording is skupper-router's (`src/tls/tls_amqp.c`@3.4.1); a configuration error
    at startup ends the router.
    """
    env = {**c.env}
    env.setdefault("SSL_PROFILE_BASE_PATH", "/etc/skupper-router")
    config = hostenv.container_path(ROUTER_CONFIG, {hostenv.MOUNTS_VAR: json.dumps(c.mounts)})
    try:
        entities = json.loads(config.read_text())
    except (OSError, ValueError):
        return None
    ids = host_ids(c, info, ROUTER_IMAGE_USER)
    mounts = {hostenv.MOUNTS_VAR: json.dumps(c.mounts)}
    for entity in entities if isinstance(entities, list) else []:
        if not (isinstance(entity, list) and len(entity) == 2 and entity[0] == "sslProfile"):
            continue
        profile = entity[1]
        for key in ("caCertFile", "certFile", "privateKeyFile"):
            inside = profile.get(key)
            if not inside:
                continue
            outside = hostenv.container_path(_expand(str(inside), env), mounts)
            if outside.is_file() and not may_read(outside, ids, info):
                what = "caCertFile" if key == "caCertFile" else "certFile"
                shown = profile.get("certFile") if key == "privateKeyFile" else inside
                return (
                    f"Failed to configure TLS {what} '{_expand(str(shown), env)}' from "
                    f"sslProfile '{profile.get('name', '')}': Permission denied"
                )
    return None
