"""The Kubernetes log pod is the Deployment's own, by owner: a pod that merely carries the
router's labels (anyone who may create a pod in the namespace can copy them) is never read.

The objects are shaped as the API returns them: a Deployment, the ReplicaSet its controller
made (``<deployment>-<pod-template-hash>``, controlled by the Deployment's uid) and the pods
that ReplicaSet made (controlled by its uid)."""

from __future__ import annotations

from typing import Any

from skupper_mcp.engine.predicates import cluster_router_running
from skupper_mcp.sites.kube import ClusterSite, KubeState, controller_uid, deployment_pods

ROUTER_LABELS = {"application": "skupper-router", "skupper.io/component": "router"}


def owner(kind: str, name: str, uid: str, *, controller: bool = True) -> dict[str, Any]:
    api_version = "v1" if kind == "Pod" else "apps/v1"
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def obj(
    kind: str, name: str, uid: str, owners: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": uid,
        "labels": dict(ROUTER_LABELS),
    }
    if owners:
        metadata["ownerReferences"] = owners
    return {"kind": kind, "metadata": {**metadata, **extra.pop("metadata", {})}, **extra}


def pod(name: str, uid: str, owners: list[dict[str, Any]], created: str) -> dict[str, Any]:
    return obj(
        "Pod",
        name,
        uid,
        owners,
        metadata={"creationTimestamp": created},
        status={"phase": "Running"},
    )


def router_group(
    deployment: str, hashes: str, uids: tuple[str, str, str], created: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The site crc-t's router Deployment, its ReplicaSet and that one's pod (created at
    ``created``), each owned by the one before and named as Kubernetes names them: the
    ReplicaSet after the template's hash, the pod after that and its own (``hashes``,
    ``7c9f-x2k4q``); ``uids`` theirs in that order."""
    deployment_uid, set_uid, pod_uid = uids
    replica_set = f"{deployment}-{hashes.split('-')[0]}"
    pod_name = f"{deployment}-{hashes}"
    return (
        obj("Deployment", deployment, deployment_uid, [owner("Site", "crc-t", "site-1")]),
        obj("ReplicaSet", replica_set, set_uid, [owner("Deployment", deployment, deployment_uid)]),
        pod(pod_name, pod_uid, [owner("ReplicaSet", replica_set, set_uid)], created),
    )


DEPLOYMENT, REPLICA_SET, ROUTER_POD = router_group(
    "skupper-router", "7c9f-x2k4q", ("d-1", "rs-1", "p-1"), "2026-01-01T00:00:00Z"
)
FOREIGN_SET = obj(
    "ReplicaSet", "skupper-router-6b8d", "rs-2", [owner("Deployment", "skupper-router", "d-9")]
)
#: Newer than the router's, with its labels: each would win if labels chose the pod.
DECOYS = [
    pod("skupper-router-7c9f-decoy", "p-2", [], "2026-02-01T00:00:00Z"),
    pod(
        "skupper-router-6b8d-decoy",
        "p-3",
        [owner("ReplicaSet", "skupper-router-6b8d", "rs-2")],
        "2026-02-01T00:00:00Z",
    ),
    pod(
        "skupper-router-named-owner",
        "p-4",
        [owner("ReplicaSet", "skupper-router-7c9f", "rs-forged")],
        "2026-02-01T00:00:00Z",
    ),
    pod(
        "skupper-router-not-controller",
        "p-5",
        [owner("ReplicaSet", "skupper-router-7c9f", "rs-1", controller=False)],
        "2026-02-01T00:00:00Z",
    ),
    pod(
        "skupper-router-owned-by-deployment",
        "p-6",
        [owner("Deployment", "skupper-router", "d-1")],
        "2026-02-01T00:00:00Z",
    ),
]


def test_only_the_pod_of_the_deployments_own_replica_set_is_chosen() -> None:
    pods = [*DECOYS, ROUTER_POD]
    chosen = deployment_pods(DEPLOYMENT, [REPLICA_SET, FOREIGN_SET], pods)
    assert [p["metadata"]["name"] for p in chosen] == ["skupper-router-7c9f-x2k4q"]


def test_a_labelled_pod_with_no_such_owner_leaves_no_pod() -> None:
    assert deployment_pods(DEPLOYMENT, [REPLICA_SET, FOREIGN_SET], DECOYS) == []
    assert deployment_pods(DEPLOYMENT, [FOREIGN_SET], [ROUTER_POD]) == []
    no_uid = {**DEPLOYMENT, "metadata": {"name": "skupper-router"}}
    assert deployment_pods(no_uid, [REPLICA_SET], [ROUTER_POD]) == []


def test_the_controller_is_the_reference_marked_controller() -> None:
    assert controller_uid(ROUTER_POD) == "rs-1"
    assert controller_uid(DECOYS[0]) is None
    assert controller_uid(DECOYS[3]) is None


class RecordedApi:
    """The API's answers for one namespace, as recorded above; it reads a pod's log only."""

    def __init__(self, deployment: dict[str, Any] | None, pods: list[dict[str, Any]]) -> None:
        self.deployment = deployment
        self.pods = pods
        self.logs_read: list[str] = []
        self.deleted: list[str] = []

    async def get_deployment(self, name: str, *, namespace: str | None = None) -> Any:
        return self.deployment if self.deployment and name == "skupper-router" else None

    async def list_replica_sets(self, *, namespace: str | None = None) -> list[dict[str, Any]]:
        return [REPLICA_SET, FOREIGN_SET]

    async def list_pods(self, *, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.pods

    async def delete_pod(self, name: str, *, namespace: str | None = None) -> bool:
        self.deleted.append(name)
        return True

    async def read_pod_log(self, name: str, **_: Any) -> tuple[str, bool]:
        self.logs_read.append(name)
        return f"log of {name}\n", False


async def test_the_router_log_is_read_from_the_deployments_pod_never_a_decoy() -> None:
    api = RecordedApi(DEPLOYMENT, [*DECOYS, ROUTER_POD])
    site = ClusterSite(api, "default")  # type: ignore[arg-type]
    name, text, cut = await site.pod_log("skupper-router", "router", 10, 1000)
    assert (name, text, cut) == (
        "skupper-router-7c9f-x2k4q",
        "log of skupper-router-7c9f-x2k4q\n",
        False,
    )
    assert api.logs_read == ["skupper-router-7c9f-x2k4q"]


async def test_only_decoys_or_no_deployment_is_no_pod_and_no_read() -> None:
    for api in (RecordedApi(DEPLOYMENT, DECOYS), RecordedApi(None, [ROUTER_POD])):
        site = ClusterSite(api, "default")  # type: ignore[arg-type]
        assert await site.pod_log("skupper-router", "router", 10, 1000) == (None, "", False)
        assert api.logs_read == []


async def test_a_router_restart_deletes_the_deployments_pod_and_no_decoy() -> None:
    api = RecordedApi(DEPLOYMENT, [*DECOYS, ROUTER_POD])
    detail = await ClusterSite(api, "default").restart_router()  # type: ignore[arg-type]
    assert api.deleted == ["skupper-router-7c9f-x2k4q"] and "x2k4q" in detail


async def test_a_running_decoy_does_not_make_a_stopped_router_look_running() -> None:
    stopped = {**ROUTER_POD, "status": {"phase": "Pending"}}
    site = ClusterSite(RecordedApi(DEPLOYMENT, [*DECOYS, stopped]), "default")  # type: ignore[arg-type]
    pods = await site.owned_pods("skupper-router")
    assert [p["metadata"]["name"] for p in pods] == ["skupper-router-7c9f-x2k4q"]
    assert not cluster_router_running(KubeState(version="v1", site=None, router_pods=pods))


# -- an HA site (spec.ha): a second router Deployment, skupper-router-2 --------------------

#: internal/kube/site/site.go@2.2.1:329-335: an HA site's groups, each a Deployment
SECOND, SECOND_SET, SECOND_POD = router_group(
    "skupper-router-2", "5d4c-q8w2e", ("d-2", "rs-3", "p-7"), "2026-01-01T00:00:05Z"
)


class HaApi(RecordedApi):
    """An HA site's namespace: both router Deployments, their ReplicaSets and pods."""

    async def get_deployment(self, name: str, *, namespace: str | None = None) -> Any:
        return {"skupper-router": DEPLOYMENT, "skupper-router-2": SECOND}.get(name)

    async def list_replica_sets(self, *, namespace: str | None = None) -> list[dict[str, Any]]:
        return [REPLICA_SET, FOREIGN_SET, SECOND_SET]


async def test_an_ha_site_is_read_and_restarted_with_both_routers() -> None:
    api = HaApi(DEPLOYMENT, [*DECOYS, ROUTER_POD, SECOND_POD])
    site = ClusterSite(api, "default")  # type: ignore[arg-type]
    pods = await site.router_pods()
    assert [p["metadata"]["name"] for p in pods] == [
        "skupper-router-7c9f-x2k4q",
        "skupper-router-2-5d4c-q8w2e",
    ]
    # one of the two routers running is a router running
    first_down = {**ROUTER_POD, "status": {"phase": "Pending"}}
    assert cluster_router_running(
        KubeState(version="v1", site=None, router_pods=[first_down, SECOND_POD])
    )
    detail = await site.restart_router()
    assert api.deleted == ["skupper-router-7c9f-x2k4q", "skupper-router-2-5d4c-q8w2e"]
    assert "q8w2e" in detail and "x2k4q" in detail
    # a site without HA has no second Deployment: its one router, as before
    plain = ClusterSite(RecordedApi(DEPLOYMENT, [ROUTER_POD, SECOND_POD]), "default")  # type: ignore[arg-type]
    assert [p["metadata"]["name"] for p in await plain.router_pods()] == [
        "skupper-router-7c9f-x2k4q"
    ]
