"""Who a container's process is on its host, from ``podman inspect`` (``facts/userns.py``):
keep-id however inspect shows it, and the options that give a re-created container the
same user namespace."""

from __future__ import annotations

from typing import Any

import pytest

from skupper_mcp.facts.userns import host_side_uid, keeps_id, userns_args

KEEP_ID_1000 = ["0:1:1000", "1000:0:1", "1001:1001:64536"]  # podman 4.3.1's own shape


def inspect(mode: str = "", uid_map: list[str] | None = None) -> dict[str, Any]:
    host_config: dict[str, Any] = {"UsernsMode": mode}
    if uid_map is not None:
        host_config["IDMappings"] = {"UidMap": uid_map, "GidMap": uid_map}
    return {"HostConfig": host_config}


@pytest.mark.parametrize(
    ("made", "container_uid", "login_uid", "host_uid"),
    [
        (inspect("private", KEEP_ID_1000), 1000, 1000, 1000),  # real podman's keep-id
        (inspect("private", KEEP_ID_1000), 0, 1000, None),  # its root: a subordinate id
        (inspect("private", KEEP_ID_1000), 10000, 1000, None),
        (inspect("keep-id"), 1000, 1000, 1000),  # named (the emulation's inspect)
        (inspect("keep-id"), 10000, 1000, None),
        (inspect(""), 0, 1000, 1000),  # rootless, no namespace of its own: root is the user
        (inspect(""), 1000, 1000, None),
        (inspect(""), 10000, 0, 10000),  # rootful: no mapping at all
        (inspect("private", ["0:1:1000"]), 5, 1000, None),  # outside every range
    ],
)
def test_the_host_uid_of_a_container_uid(
    made: dict[str, Any], container_uid: int, login_uid: int, host_uid: int | None
) -> None:
    assert host_side_uid(made, container_uid, login_uid) == host_uid


def test_keep_id_is_recreated_by_name_and_another_private_namespace_by_its_mapping() -> None:
    assert keeps_id(inspect("private", KEEP_ID_1000)) and keeps_id(inspect("keep-id"))
    assert userns_args(inspect("private", KEEP_ID_1000)) == ["--userns", "keep-id"]
    other = ["0:1:65536"]
    assert not keeps_id(inspect("private", other))
    assert userns_args(inspect("private", other)) == [
        "--uidmap",
        "0:1:65536",
        "--gidmap",
        "0:1:65536",
    ]
    assert userns_args(inspect("private")) == []
    assert userns_args(inspect("host")) == ["--userns", "host"]
    assert userns_args(inspect("")) == []
    assert userns_args({"HostConfig": "not a mapping"}) == []
