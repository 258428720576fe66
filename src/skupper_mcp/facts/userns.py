"""Who a container's process is on its host, read from ``podman inspect``. Pure.

Skupper creates a rootless site's router with ``--user <uid>:<gid> --userns=keep-id``
(``internal/nonkube/client/compat/container.go`` ``ToSpecGenerator``@2.1.2). Real podman does
not name keep-id in ``inspect``: ``HostConfig.UsernsMode`` is ``private`` for any user
namespace of the container's own, and ``HostConfig.IDMappings.UidMap`` shows the mapping as
``container:host:size`` entries, where ``host`` counts in the namespace rootless podman runs
in, whose id 0 is the user (``libpod/container_inspect_linux.go``, ``generateIDMappings`` in
``libpod/container_inspect.go``@v4.3.1, the same @v5.8.0). keep-id is the mapping that puts id
0 (the user) at one container uid other than 0: ``["0:1:1000", "1000:0:1", "1001:1001:64536"]``
for user 1000. Without a user namespace of its own (rootless podman's default) the container
runs in podman's, so its root is the user.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KEEP_ID", "host_side_uid", "keeps_id", "userns_args"]

KEEP_ID = "keep-id"


def _host_config(inspect: dict[str, Any]) -> dict[str, Any]:
    host_config = inspect.get("HostConfig")
    return host_config if isinstance(host_config, dict) else {}


def _uid_map(host_config: dict[str, Any]) -> list[tuple[int, int, int]]:
    """The ``UidMap`` entries as (container, host, size); nothing that is not three numbers."""
    mappings = host_config.get("IDMappings")
    entries = mappings.get("UidMap") if isinstance(mappings, dict) else None
    found = []
    for entry in entries if isinstance(entries, list) else []:
        parts = str(entry).split(":")
        if len(parts) == 3 and all(p.isascii() and p.isdigit() for p in parts):
            container, host, size = (int(p) for p in parts)
            found.append((container, host, size))
    return found


def _named_mode(host_config: dict[str, Any]) -> str:
    return str(host_config.get("UsernsMode") or "").partition(":")[0]


def keeps_id(inspect: dict[str, Any]) -> bool:
    """Whether the container was made with ``--userns keep-id``: named so (podman's
    create flag as some inspects echo it), or the mapping that puts the user at a container
    uid of its own."""
    host_config = _host_config(inspect)
    if _named_mode(host_config) == KEEP_ID:
        return True
    mapping = _uid_map(host_config)
    return any(host == 0 and size == 1 and container != 0 for container, host, size in mapping)


def host_side_uid(inspect: dict[str, Any], container_uid: int, login_uid: int) -> int | None:
    """The host uid a process running as ``container_uid`` in the container has, on a host
    whose podman runs as ``login_uid`` (None: a subordinate id, which owns none of the user's
    files). Rootful podman (``login_uid`` 0) maps nothing."""
    if login_uid == 0:
        return container_uid
    host_config = _host_config(inspect)
    mapping = _uid_map(host_config)
    if mapping:
        for container, host, size in mapping:
            if container <= container_uid < container + size:
                inner = host + container_uid - container
                return login_uid if inner == 0 else None
        return None
    if _named_mode(host_config) == KEEP_ID:  # named, without its mapping
        return container_uid if container_uid == login_uid else None
    return login_uid if container_uid == 0 else None


def userns_args(inspect: dict[str, Any]) -> list[str]:
    """The ``podman create`` options that give a new container the same user namespace:
    ``--userns keep-id`` for keep-id however inspect shows it; for another ``private`` one
    its mapping (``--uidmap``/``--gidmap`` take the ids inspect shows; rootless podman
    refuses a bare ``--userns private``: "must provide at least one UID or GID mapping");
    another named mode as it is; nothing for none."""
    if keeps_id(inspect):
        return ["--userns", KEEP_ID]
    host_config = _host_config(inspect)
    mode = str(host_config.get("UsernsMode") or "")
    if mode == "private":
        mappings = host_config.get("IDMappings")
        mappings = mappings if isinstance(mappings, dict) else {}
        args = []
        for key, flag in (("UidMap", "--uidmap"), ("GidMap", "--gidmap")):
            entries = mappings.get(key)
            for entry in entries if isinstance(entries, list) else []:
                args += [flag, str(entry)]
        return args
    return ["--userns", mode] if mode else []
