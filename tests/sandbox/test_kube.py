"""The sandbox's Kubernetes site, driven with the real ``kubernetes`` client: the API
(CRUD, selectors, patches, Status errors, auth, faults) and the controller (router pod,
TLS Secret mounting, Services, status, and TCP through a Link to a router we start)."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import pytest
import urllib3
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

import hostkit
from hostkit import router_kinds, stop_process
from polling import wait_for
from skupper_mcp.facts.precheck import parse_proc_net_address
from skupper_sandbox import certs, hostenv
from skupper_sandbox.emulated.podman.containers import pid_alive
from skupper_sandbox.kube.routerconfig import NOT_MOUNTED
from skupper_sandbox.netprobe import port_open
from skupper_sandbox.router import choice

T = TypeVar("T")
GROUP, VERSION = "skupper.io", "v2alpha1"
API_PORT = 6443
WORLD_ID = "test-kube"


def listening_addresses() -> set[str]:
    """The IPv4 addresses some TCP socket listens on (``/proc/net/tcp``, state 0A)."""
    held = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and (local := parse_proc_net_address(fields[1])) is not None:
            held.add(local[0])
    return held


def free_addresses() -> Iterator[str]:
    """This worker's loopback addresses for clusters and hubs, 127.206.0.10 on: an address
    something already listens on (a process an earlier run left) is passed over, or the
    test would meet that process instead of its own, and said so in the warnings."""
    for n in itertools.count(10):
        address = f"127.206.0.{n}"
        if address in listening_addresses():
            warnings.warn(f"{address} is held by a listening socket: not used", stacklevel=1)
            continue
        yield address


_addresses = free_addresses()


def write_host(world_dir: Path, name: str, address: str, role: str) -> Path:
    return Path(hostkit.write_host(world_dir, name, address, role=role, world_id=WORLD_ID).host_dir)


@dataclass
class Cluster:
    """A running sandbox Kubernetes API and its controller."""

    world_dir: Path
    address: str
    process: subprocess.Popen[bytes]

    @property
    def kube_dir(self) -> Path:
        return self.world_dir / "kube"

    @property
    def kubeconfig(self) -> Path:
        return self.kube_dir / "kubeconfig"

    def api_client(self) -> k8s.ApiClient:
        return k8s_config.new_client_from_config(config_file=str(self.kubeconfig))

    def core(self) -> k8s.CoreV1Api:
        return k8s.CoreV1Api(self.api_client())

    def custom(self) -> k8s.CustomObjectsApi:
        return k8s.CustomObjectsApi(self.api_client())

    def fault(self, mode: str | None) -> None:
        (self.kube_dir / "fault.json").write_text(json.dumps({"mode": mode}))
        self.process.send_signal(signal.SIGHUP)

    def log(self) -> str:
        return (self.world_dir / "kube.log").read_text(errors="replace")


def write_router_choice(world_dir: Path, kind: str) -> None:
    """``world.json``'s router: which one the router pods (and their controller) run."""
    chosen = choice.choose(kind)
    world_dir.mkdir(parents=True, exist_ok=True)
    (world_dir / "world.json").write_text(json.dumps(chosen.record()))


@pytest.fixture(params=router_kinds())
def router_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def running_cluster(
    world_dir: Path, address: str, router: str = "imitation", skupper_version: str = "2.1.1"
) -> Iterator[Cluster]:
    write_router_choice(world_dir, router)
    host_dir = Path(
        hostkit.write_host(
            world_dir,
            "crc",
            address,
            role="kubernetes",
            world_id=WORLD_ID,
            skupper_version=skupper_version,
        ).host_dir
    )
    log = (world_dir / "kube.log").open("ab")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skupper_sandbox.kube",
            "--world-dir",
            str(world_dir),
            "--host-dir",
            str(host_dir),
            "--address",
            address,
            "--port",
            str(API_PORT),
            "--interval",
            "0.2",
        ],
        stdout=log,
        stderr=log,
        env=hostenv.host_env(host_dir),
    )
    cluster = Cluster(world_dir, address, process)
    try:
        wait_for(
            lambda: process.poll() is not None or port_open(address, API_PORT),
            what="the API to listen",
        )
        assert process.poll() is None, cluster.log()
        yield cluster
    finally:
        stop_process(process)
        log.close()


@pytest.fixture
def cluster(tmp_path: Path, router_kind: str) -> Iterator[Cluster]:
    """A cluster of the test's own (for faults and router pods), on each router."""
    with running_cluster(tmp_path, next(_addresses), router_kind) as running:
        yield running


@pytest.fixture
def cluster22(tmp_path: Path, router_kind: str) -> Iterator[Cluster]:
    """A cluster of Skupper 2.2.1 (MultiKeyListener, router 3.5.1), on each router."""
    with running_cluster(tmp_path, next(_addresses), router_kind, "2.2.1") as running:
        yield running


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the API-only tests; each works in a namespace of its own."""
    with running_cluster(tmp_path_factory.mktemp("shared"), next(_addresses)) as running:
        yield running


_namespaces = (f"test-{n}" for n in itertools.count(1))


@pytest.fixture
def ns(shared: Cluster) -> str:
    name = next(_namespaces)
    make_namespace(shared.core(), name)
    return name


# -- what the API answers, narrowed to what the client's types leave optional --------------
# The client types an object's metadata and status, and most of their fields, as optional
# (they are in a body a client writes), and a custom object or a Status as a bare object.
# Each helper hands back the value the test reads or fails the test saying what was missing.


def present(value: T | None, what: str) -> T:
    """``value``, which the API must have answered: the test fails naming it if it did not."""
    assert value is not None, f"the API answered no {what}"
    return value


def json_object(answer: object) -> dict[str, Any]:
    """A custom object, list or Status as the client returns it: the decoded JSON object."""
    assert isinstance(answer, dict), f"the API answered {type(answer).__name__}, not an object"
    return answer


def error_json(error: ApiException) -> Any:
    """The body of the API's refusal, decoded."""
    return json.loads(present(error.body, f"body with its HTTP {error.status}"))


def status_body(error: ApiException) -> dict[str, Any]:
    body = json_object(error_json(error))
    assert body["kind"] == "Status"
    return body


class Described(Protocol):
    """An object the API returns with its metadata: a pod, a Secret, a ReplicaSet..."""

    @property
    def metadata(self) -> k8s.V1ObjectMeta | None: ...


def meta(obj: Described) -> k8s.V1ObjectMeta:
    return present(obj.metadata, f"metadata for a {type(obj).__name__}")


def name_of(obj: Described) -> str:
    return present(meta(obj).name, f"name for a {type(obj).__name__}")


def labels_of(obj: Described) -> dict[str, str]:
    return present(meta(obj).labels, f"labels for {type(obj).__name__} {name_of(obj)}")


def owners_of(obj: Described) -> list[k8s.V1OwnerReference]:
    return present(
        meta(obj).owner_references, f"owner references for {type(obj).__name__} {name_of(obj)}"
    )


def pod_status(pod: k8s.V1Pod) -> k8s.V1PodStatus:
    return present(pod.status, f"status for pod {name_of(pod)}")


def router_container(pod: k8s.V1Pod) -> k8s.V1ContainerStatus:
    """The status of the router pod's one container."""
    statuses = present(pod_status(pod).container_statuses, f"containers for pod {name_of(pod)}")
    return statuses[0]


def router_pid(pod: k8s.V1Pod) -> int:
    """The router's process id: the container id the sandbox writes ends in it."""
    container_id = present(router_container(pod).container_id, f"container id in {name_of(pod)}")
    return int(container_id.rsplit("/", 1)[1])


def undecoded(response: object) -> urllib3.BaseHTTPResponse:
    """The HTTP response a call made with ``_preload_content=False`` returns (the client types
    it as the decoded model), its body unread."""
    assert isinstance(response, urllib3.BaseHTTPResponse), type(response).__name__
    return response


def as_secret(body: dict[str, Any]) -> k8s.V1Secret:
    """``body`` as the client's Secret model: the conversion the client's methods make of a
    dict they are given (by its JSON names), so the API receives the same JSON."""
    return k8s.V1Secret.model_validate(body)


def make_namespace(core: k8s.CoreV1Api, name: str) -> None:
    core.create_namespace(
        k8s.V1Namespace.model_validate(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
    )


def skupper(kind: str, name: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kind,
        "metadata": {"name": name, **meta},
        "spec": spec,
    }


def tls_secret(name: str, ca: bytes, cert: bytes, key: bytes) -> k8s.V1Secret:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return as_secret(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name},
            "type": "kubernetes.io/tls",
            "data": {"ca.crt": b64(ca), "tls.crt": b64(cert), "tls.key": b64(key)},
        }
    )


def router_pods(core: k8s.CoreV1Api, namespace: str) -> list[k8s.V1Pod]:
    return core.list_namespaced_pod(namespace, label_selector="skupper.io/component=router").items


def running_router_pod(core: k8s.CoreV1Api, namespace: str) -> k8s.V1Pod | None:
    for pod in router_pods(core, namespace):
        status = pod_status(pod)
        statuses = status.container_statuses or []
        if status.phase == "Running" and statuses and statuses[0].ready:
            return pod
    return None


def cr_status(custom: k8s.CustomObjectsApi, ns: str, plural: str, name: str) -> dict[str, Any]:
    obj = json_object(custom.get_namespaced_custom_object(GROUP, VERSION, ns, plural, name))
    return obj.get("status") or {}


def condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    """The status's condition of type ``kind`` ({} while it has none)."""
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), {})


# -- the API ----------------------------------------------------------------------------


def test_kubeconfig_names_the_crc_context_and_the_client_reaches_the_api(
    shared: Cluster,
) -> None:
    config = yaml.safe_load(shared.kubeconfig.read_text())
    assert config["current-context"] == "crc-admin"
    context = config["contexts"][0]["context"]
    assert context == {"cluster": "crc", "user": "kubeadmin", "namespace": "default"}
    assert config["clusters"][0]["cluster"]["server"] == f"https://{shared.address}:6443"
    assert oct((shared.kubeconfig).stat().st_mode & 0o777) == "0o600"

    version = k8s.VersionApi(shared.api_client()).get_code()
    assert version.major == "1"
    names = [name_of(ns) for ns in shared.core().list_namespace().items]
    assert "default" in names
    groups = k8s.ApisApi(shared.api_client()).get_api_versions()
    assert [g.name for g in groups.groups] == ["apps", "skupper.io"]


def test_namespaced_objects_need_their_namespace(shared: Cluster) -> None:
    custom = shared.custom()
    with pytest.raises(ApiException) as missing:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "skupper-models", "sites", skupper("Site", "crc", {})
        )
    assert missing.value.status == 404
    assert status_body(missing.value)["reason"] == "NotFound"

    make_namespace(shared.core(), "skupper-models")
    with pytest.raises(ApiException) as again:
        make_namespace(shared.core(), "skupper-models")
    assert again.value.status == 409
    created = json_object(
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "skupper-models", "listeners", skupper("Listener", "l1", {"port": 1})
        )
    )
    assert created["metadata"]["namespace"] == "skupper-models"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert created["metadata"]["generation"] == 1 and created["metadata"]["creationTimestamp"]


def test_custom_objects_crud_selectors_and_patches(shared: Cluster, ns: str) -> None:
    custom = shared.custom()
    for name, tier in (("a", "one"), ("b", "two"), ("c", None)):
        labels = {"app": "models", **({"tier": tier} if tier else {})}
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            ns,
            "listeners",
            skupper("Listener", name, {"routingKey": name, "host": name, "port": 1}, labels=labels),
        )

    def names(label_selector: str | None = None, field_selector: str | None = None) -> list[str]:
        listing = json_object(
            custom.list_namespaced_custom_object(
                GROUP,
                VERSION,
                ns,
                "listeners",
                label_selector=label_selector,
                field_selector=field_selector,
            )
        )
        assert listing["kind"] == "ListenerList" and listing["metadata"]["resourceVersion"]
        return [item["metadata"]["name"] for item in listing["items"]]

    assert names() == ["a", "b", "c"]
    assert names(label_selector="tier=one") == ["a"]
    assert names(label_selector="app=models,tier!=one") == ["b", "c"]
    assert names(label_selector="tier in (one, two)") == ["a", "b"]
    assert names(label_selector="tier") == ["a", "b"]
    assert names(label_selector="!tier") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]

    with pytest.raises(ApiException) as exists:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, ns, "listeners", skupper("Listener", "a", {"port": 2})
        )
    assert exists.value.status == 409
    assert status_body(exists.value)["reason"] == "AlreadyExists"

    patched = json_object(
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, ns, "listeners", "a", {"spec": {"port": 8000, "host": None}}
        )
    )
    assert patched["spec"] == {"routingKey": "a", "port": 8000}
    assert patched["metadata"]["generation"] == 2

    replaced = json_object(
        custom.replace_namespaced_custom_object(
            GROUP, VERSION, ns, "listeners", "b", {**patched, "metadata": {"name": "b"}}
        )
    )
    assert replaced["spec"]["port"] == 8000

    custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "listeners", "a")
    with pytest.raises(ApiException) as gone:
        custom.get_namespaced_custom_object(GROUP, VERSION, ns, "listeners", "a")
    assert gone.value.status == 404
    assert status_body(gone.value)["message"] == 'listeners.skupper.io "a" not found'
    with pytest.raises(ApiException) as twice:
        custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "listeners", "a")
    assert twice.value.status == 404


def test_status_subresource_is_separate_from_spec(shared: Cluster, ns: str) -> None:
    custom = shared.custom()
    body = skupper("Connector", "c", {"routingKey": "k", "port": 1})
    body["status"] = {"status": "Ready"}
    created = json_object(
        custom.create_namespaced_custom_object(GROUP, VERSION, ns, "connectors", body)
    )
    assert "status" not in created
    custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        ns,
        "connectors",
        "c",
        {"status": {"message": "hi"}, "spec": {"port": 9}},
    )
    after = json_object(custom.get_namespaced_custom_object(GROUP, VERSION, ns, "connectors", "c"))
    assert after["status"]["message"] == "hi"
    assert after["spec"]["port"] == 1
    assert after["metadata"]["generation"] == 1


def test_secrets_are_validated_and_string_data_is_encoded(shared: Cluster, ns: str) -> None:
    core = shared.core()
    with pytest.raises(ApiException) as invalid:
        core.create_namespaced_secret(
            ns,
            as_secret(
                {
                    "metadata": {"name": "half"},
                    "type": "kubernetes.io/tls",
                    "data": {"tls.crt": "eA=="},
                }
            ),
        )
    assert invalid.value.status == 422
    assert "tls.key" in status_body(invalid.value)["message"]

    secret = core.create_namespaced_secret(
        ns, as_secret({"metadata": {"name": "plain"}, "stringData": {"token": "s3cret"}})
    )
    assert secret.type == "Opaque"
    assert base64.b64decode(present(secret.data, "data in the Secret")["token"]) == b"s3cret"
    assert secret.string_data is None

    patched = core.patch_namespaced_secret(
        "plain", ns, [{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}]
    )
    assert meta(patched).labels == {"x": "y"}
    core.patch_namespaced_secret("plain", ns, {"metadata": {"labels": {"z": "1"}}})
    assert meta(core.read_namespaced_secret("plain", ns)).labels == {"x": "y", "z": "1"}
    with pytest.raises(ApiException) as immutable:
        core.replace_namespaced_secret(
            "plain",
            ns,
            as_secret(
                {
                    "metadata": {"name": "plain"},
                    "type": "kubernetes.io/tls",
                    "data": {"tls.crt": "eA==", "tls.key": "eA=="},
                }
            ),
        )
    assert immutable.value.status == 422
    assert status_body(immutable.value)["message"] == (
        'Secret "plain" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable'
    )
    deleted = json_object(core.delete_namespaced_secret("plain", ns))
    assert deleted["kind"] == "Status" and deleted["status"] == "Success"


def test_a_list_of_metadata_only_and_the_secret_type_field_selector(
    shared: Cluster, ns: str
) -> None:
    core = shared.core()
    tls = {"tls.crt": "eA==", "tls.key": "eA=="}
    core.create_namespaced_secret(
        ns, as_secret({"metadata": {"name": "t"}, "type": "kubernetes.io/tls", "data": tls})
    )
    core.create_namespaced_secret(ns, as_secret({"metadata": {"name": "o"}, "data": {"k": "eA=="}}))
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    raw = core.list_namespaced_secret(ns, _preload_content=False, _headers={"Accept": accept})
    found = json.loads(undecoded(raw).read())
    assert (found["kind"], found["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert [(i["kind"], sorted(i)) for i in found["items"]] == [
        ("PartialObjectMetadata", ["apiVersion", "kind", "metadata"])
    ] * 2
    assert sorted(i["metadata"]["name"] for i in found["items"]) == ["o", "t"]
    only_tls = core.list_namespaced_secret(ns, field_selector="type=kubernetes.io/tls")
    assert [name_of(s) for s in only_tls.items] == ["t"]
    with pytest.raises(ApiException) as refused:
        core.list_namespaced_secret(
            ns, _headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
        )
    assert refused.value.status == 406


def test_wrong_token_is_401_with_a_status(shared: Cluster, tmp_path: Path) -> None:
    config = yaml.safe_load(shared.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "sha256~not-the-token"
    wrong = tmp_path / "wrong-kubeconfig"
    wrong.write_text(yaml.safe_dump(config))
    api_client = k8s_config.new_client_from_config(config_file=str(wrong))
    with pytest.raises(ApiException) as refused:
        k8s.CoreV1Api(api_client).list_namespace()
    assert refused.value.status == 401
    assert error_json(refused.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def test_unauthenticated_fault_refuses_the_right_token_until_restored(cluster: Cluster) -> None:
    core = cluster.core()
    core.list_namespace()
    cluster.fault("unauthenticated")

    def refused() -> bool:
        try:
            core.list_namespace()
        except ApiException as error:
            return error.status == 401
        return False

    wait_for(refused, what="401 under the unauthenticated fault")
    cluster.fault(None)
    wait_for(lambda: not refused(), what="the API to accept the token again")


def test_down_fault_refuses_connections_and_keeps_the_router_pod(cluster: Cluster) -> None:
    core, custom = cluster.core(), cluster.custom()
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    pod = wait_for(lambda: running_router_pod(core, "default"), what="the router pod")
    core.list_namespace()  # leaves a pooled keep-alive connection behind
    cluster.fault("down")
    wait_for(lambda: not port_open(cluster.address, API_PORT), what="the port to close")
    with pytest.raises(urllib3.exceptions.MaxRetryError) as down:
        core.list_namespace(_request_timeout=2)
    assert "refused" in str(down.value).lower()
    assert port_open(cluster.address, 5671), "the router pod keeps running"
    cluster.fault(None)
    wait_for(lambda: port_open(cluster.address, API_PORT), what="the port to reopen")
    assert name_of(present(running_router_pod(core, "default"), "router pod")) == name_of(pod)


# -- the controller -----------------------------------------------------------------------


def test_site_gets_a_router_pod_that_is_recreated_when_deleted(cluster: Cluster) -> None:
    core, custom = cluster.core(), cluster.custom()
    make_namespace(core, "skupper-models")
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "skupper-models", "sites", skupper("Site", "crc-test", {})
    )
    pod = wait_for(lambda: running_router_pod(core, "skupper-models"), what="the router pod")
    replica_set = owner_chain(cluster, pod)
    assert name_of(pod).startswith(f"{name_of(replica_set)}-")
    assert len(name_of(pod)) == len("skupper-router-6b8d5f7c9d-x2k4q")
    assert labels_of(pod)["application"] == "skupper-router"
    assert labels_of(pod)["app.kubernetes.io/name"] == "skupper-router"

    def site_ready() -> dict[str, Any] | None:
        status = cr_status(custom, "skupper-models", "sites", "crc-test")
        return status if status.get("status") == "Ready" else None

    status = wait_for(site_ready, what="the Site to be Ready")
    assert status["message"] == "OK"
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Configured": "True",
        "Running": "True",
        "Ready": "True",
    }
    assert status["sitesInNetwork"] == 1

    core.delete_collection_namespaced_pod(
        "skupper-models", label_selector="skupper.io/component=router"
    )

    def replacement() -> k8s.V1Pod | None:
        new = running_router_pod(core, "skupper-models")
        return new if new and name_of(new) != name_of(pod) else None

    new = wait_for(replacement, timeout=30, what="a new router pod")
    assert [name_of(p) for p in router_pods(core, "skupper-models")] == [name_of(new)]
    assert not (cluster.kube_dir / "pods" / name_of(pod)).exists()
    assert meta(owner_chain(cluster, new)).uid == meta(replica_set).uid

    custom.delete_namespaced_custom_object(GROUP, VERSION, "skupper-models", "sites", "crc-test")
    apps = k8s.AppsV1Api(cluster.core().api_client)
    wait_for(
        lambda: (
            not apps.list_namespaced_deployment("skupper-models").items
            and not apps.list_namespaced_replica_set("skupper-models").items
        ),
        timeout=30,
        what="the Deployment and ReplicaSet to go with the Site",
    )


def owner_chain(cluster: Cluster, pod: k8s.V1Pod) -> k8s.V1ReplicaSet:
    """The pod's ReplicaSet, after checking each link of Site -> Deployment -> ReplicaSet ->
    Pod by uid: the Site's as Skupper writes it (no controller, no blockOwnerDeletion:
    internal/kube/site/site.go@2.1.3:655-664), the others controller references, as a real
    cluster's controllers write them."""
    apps = k8s.AppsV1Api(cluster.core().api_client)
    namespace = present(meta(pod).namespace, f"namespace for pod {name_of(pod)}")
    deployment = apps.read_namespaced_deployment("skupper-router", namespace)
    site = json_object(
        cluster.custom().get_namespaced_custom_object(
            GROUP, VERSION, namespace, "sites", owners_of(deployment)[0].name
        )
    )
    (replica_set,) = apps.list_namespaced_replica_set(namespace).items
    assert name_of(replica_set).startswith("skupper-router-")
    assert labels_of(replica_set)["pod-template-hash"] == name_of(replica_set)[15:]
    chain: list[tuple[Described, str | None, str, bool | None]] = [
        (deployment, site["metadata"]["uid"], "Site", None),
        (replica_set, meta(deployment).uid, "Deployment", True),
        (pod, meta(replica_set).uid, "ReplicaSet", True),
    ]
    for owned, owner, kind, controller in chain:
        (ref,) = owners_of(owned)
        assert (ref.kind, ref.uid, ref.controller, ref.block_owner_deletion) == (
            kind,
            owner,
            controller,
            controller,
        )
    return replica_set


def test_crashed_router_is_restarted_in_its_pod(cluster: Cluster) -> None:
    core, custom = cluster.core(), cluster.custom()
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    pod = wait_for(lambda: running_router_pod(core, "default"), what="the router pod")
    os.kill(router_pid(pod), signal.SIGKILL)

    def restarted() -> k8s.V1Pod | None:
        again = running_router_pod(core, "default")
        return again if again and router_container(again).restart_count == 1 else None

    assert name_of(wait_for(restarted, what="the router restarted")) == name_of(pod)


def test_a_killed_cluster_takes_its_router_pods_with_it(cluster: Cluster) -> None:
    """The pods' processes run in sessions of their own: a cluster that is killed (its
    stop's grace ran out, a test's SIGKILL) must not leave its routers running, holding
    their addresses for whatever starts there next."""
    core, custom = cluster.core(), cluster.custom()
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    pid = router_pid(wait_for(lambda: running_router_pod(core, "default"), what="the router pod"))
    cluster.process.kill()
    cluster.process.wait()
    try:
        wait_for(lambda: not pid_alive(pid), what=f"the killed cluster's router (pid {pid})")
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # it still runs: the test's own process to stop
        raise


def test_pod_log_serves_the_router_containers_output(cluster: Cluster) -> None:
    """``GET .../pods/{name}/log`` as the API server answers it (pkg/registry/core/pod/rest/
    log.go, strategy.go ``LogLocation``): the router container's own output, the pod's only
    container by default, ``tailLines``, Status errors (404 pod, 400 container, 422 options),
    and ``previous=true`` for the container that ran before a restart."""
    core, custom = cluster.core(), cluster.custom()
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    pod = wait_for(lambda: running_router_pod(core, "default"), what="the router pod")
    name = name_of(pod)
    first = wait_for(
        lambda: core.read_namespaced_pod_log(name, "default", container="router"),
        what="the router's first lines",
    )
    assert "ROUTER (info) Router" in first, first  # skrouterd's and the imitation's startup
    assert core.read_namespaced_pod_log(name, "default").startswith(first)  # its one container
    last_two = core.read_namespaced_pod_log(name, "default", tail_lines=2).splitlines()
    assert len(last_two) == 2
    assert set(last_two) <= set(core.read_namespaced_pod_log(name, "default").splitlines())
    assert core.read_namespaced_pod_log(name, "default", tail_lines=0) == ""

    def refused(**options: Any) -> tuple[int, dict[str, Any]]:
        with pytest.raises(ApiException) as error:
            core.read_namespaced_pod_log(options.pop("pod", name), "default", **options)
        return error.value.status, status_body(error.value)

    status, body = refused(pod="skupper-router-xxxxx")
    assert (status, body["reason"]) == (404, "NotFound")
    assert body["message"] == 'pods "skupper-router-xxxxx" not found'
    status, body = refused(container="sidecar")
    assert (status, body["message"]) == (400, f"container sidecar is not valid for pod {name}")
    status, body = refused(tail_lines=-1)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        f'PodLogOptions "{name}" is invalid: tailLines: Invalid value: -1: must be greater '
        "than or equal to 0"
    )
    status, body = refused(previous=True)
    assert (status, body["message"]) == (
        400,
        f'previous terminated container "router" in pod "{name}" not found',
    )

    os.kill(router_pid(pod), signal.SIGKILL)

    def restarted() -> k8s.V1Pod | None:
        again = running_router_pod(core, "default")
        return again if again and router_container(again).restart_count == 1 else None

    wait_for(restarted, what="the router restarted")
    opening = first.splitlines()[0]
    assert opening in core.read_namespaced_pod_log(name, "default", previous=True)
    assert opening not in core.read_namespaced_pod_log(name, "default")


#: A deleted router pod is made again, its router started and then configured by the
#: controller's next pass: seconds, more on a machine busy with other tests.
RESTART = 30.0


def test_only_tls_secrets_present_at_pod_start_are_mounted(cluster: Cluster) -> None:
    core, custom = cluster.core(), cluster.custom()
    ca, ca_key = certs.new_ca("test-ca")
    cert, key = certs.issue(ca, ca_key, "client", server=False)
    core.create_namespaced_secret("default", tls_secret("early-tls", ca, cert, key))
    opaque = tls_secret("early-opaque", ca, cert, key)
    opaque.type = "Opaque"
    core.create_namespaced_secret("default", opaque)
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    pod = wait_for(lambda: running_router_pod(core, "default"), what="the router pod")
    certs_dir = cluster.kube_dir / "pods" / name_of(pod) / "certs"
    assert sorted(p.name for p in certs_dir.iterdir()) == ["early-tls-profile"]
    assert (certs_dir / "early-tls-profile" / "tls.crt").read_bytes() == cert

    core.create_namespaced_secret("default", tls_secret("late-tls", ca, cert, key))
    endpoints = [{"name": "inter-router", "host": "127.206.0.1", "port": "1"}]
    for link, secret in (("via-opaque", "early-opaque"), ("via-late", "late-tls")):
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            "default",
            "links",
            skupper("Link", link, {"tlsCredentials": secret, "endpoints": endpoints}),
        )

    def link_error(name: str) -> str | None:
        status = cr_status(custom, "default", "links", name)
        return status.get("message") if status.get("status") == "Error" else None

    assert "kubernetes.io/tls" in wait_for(lambda: link_error("via-opaque"), what="an Error")
    assert wait_for(lambda: link_error("via-late"), what="an Error") == (
        "TLS credentials secret not mounted; restart the router pod"
    )
    assert not (certs_dir / "late-tls-profile").exists()

    core.delete_namespaced_pod(name_of(pod), "default")

    def remounted() -> str | None:
        """The Link's Configured reason once its secret is mounted: the Link is configured
        then, whatever its connection (an endpoint that refuses fails it afterwards)."""
        status = cr_status(custom, "default", "links", "via-late")
        configured = condition(status, "Configured")
        return str(configured["reason"]) if configured.get("status") == "True" else None

    def configured_after_restart() -> str:
        return wait_for(
            remounted, timeout=RESTART, what="the Link configured after the pod restart"
        )

    assert configured_after_restart() == "Ready"
    new = wait_for(
        lambda: running_router_pod(core, "default"), timeout=RESTART, what="the new router pod"
    )
    new_certs = cluster.kube_dir / "pods" / name_of(new) / "certs"
    assert sorted(p.name for p in new_certs.iterdir()) == ["early-tls-profile", "late-tls-profile"]

    # Deleted and created again under its name (a link re-made by hand), the Secret is another
    # object: the running pod does not have it until it is recreated in turn.
    core.delete_namespaced_secret("late-tls", "default")
    core.create_namespaced_secret("default", tls_secret("late-tls", ca, cert, key))
    wait_for(lambda: link_error("via-late") == NOT_MOUNTED, what="the Link's Error")
    core.delete_namespaced_pod(name_of(new), "default")
    assert configured_after_restart() == "Ready"


def test_listener_gets_a_service_and_loses_it_with_the_listener(cluster: Cluster) -> None:
    core, custom = cluster.core(), cluster.custom()
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", "sites", skupper("Site", "s", {})
    )
    custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        "listeners",
        skupper("Listener", "model-l", {"routingKey": "k", "host": "model-listener", "port": 8000}),
    )

    def service() -> k8s.V1Service | None:
        with contextlib.suppress(ApiException):
            return core.read_namespaced_service("model-listener", "default")
        return None

    svc = wait_for(service, what="the listener's Service")
    spec = present(svc.spec, "spec for the Service")
    assert spec.cluster_ip == cluster.address
    assert [(p.port, p.protocol) for p in present(spec.ports, "ports")] == [(8000, "TCP")]
    status = wait_for(
        lambda: cr_status(custom, "default", "listeners", "model-l") or None, what="status"
    )
    assert status["status"] == "Pending" and status["message"] == "No matching connectors"

    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "listeners", "model-l")
    wait_for(lambda: service() is None, what="the Service to go")


# -- end to end: a Link to a router we run, and TCP through it -------------------------------


@dataclass
class Hub:
    address: str
    ca: bytes
    ca_key: bytes
    processes: list[subprocess.Popen[bytes]]


@pytest.fixture
def hub(tmp_path: Path, router_kind: str) -> Iterator[Hub]:
    """A provider host: a router accepting links on 8000 and a model server on 9000."""
    address = next(_addresses)
    write_router_choice(tmp_path / "hub-world", router_kind)
    host_dir = write_host(tmp_path / "hub-world", "hub", address, "provider")
    ca, ca_key = certs.new_ca("hub-site-ca")
    server_cert, server_key = certs.issue(ca, ca_key, "hub", sans=[address])
    profile = host_dir / "certs"
    profile.mkdir()
    (profile / "ca.crt").write_bytes(ca)
    (profile / "tls.crt").write_bytes(server_cert)
    (profile / "tls.key").write_bytes(server_key)
    config = [
        [
            "router",
            {
                "id": "hub-1",
                "mode": "interior",
                "metadata": json.dumps({"id": str(uuid.uuid4()), "name": "hub-test"}),
            },
        ],
        [
            "sslProfile",
            {
                "name": "hub-profile",
                "caCertFile": "/etc/hub/certs/ca.crt",
                "certFile": "/etc/hub/certs/tls.crt",
                "privateKeyFile": "/etc/hub/certs/tls.key",
            },
        ],
        [
            "listener",
            {
                "name": "hub-inter-router",
                "role": "inter-router",
                "host": "0.0.0.0",
                "port": 8000,
                "sslProfile": "hub-profile",
                "saslMechanisms": "EXTERNAL",
                "authenticatePeer": True,
            },
        ],
        [
            "tcpConnector",
            {"name": "model", "host": "127.0.0.1", "port": "9000", "address": "model-api"},
        ],
    ]
    (host_dir / "skrouterd.json").write_text(json.dumps(config))
    env = hostenv.host_env(host_dir)
    (host_dir / "tmp").mkdir()
    container = {
        # the container's paths: its /tmp is its own, so nothing it reads lies under it
        "QDROUTERD_CONF": "/etc/hub/skrouterd.json",
        "QDROUTERD_CONF_TYPE": "json",
        hostenv.MOUNTS_VAR: json.dumps(
            [["/etc/hub", str(host_dir)], ["/tmp", str(host_dir / "tmp")]]
        ),
    }
    log = (host_dir / "processes.log").open("ab")
    processes = [
        subprocess.Popen(
            choice.for_world(tmp_path / "hub-world").start(),
            env={**env, **container},
            stdout=log,
            stderr=log,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "skupper_sandbox.model_server"],
            env={**env, "HOST": address, "PORT": "9000", "MODEL_ID": "test-model"},
            stdout=log,
            stderr=log,
        ),
    ]
    try:
        wait_for(lambda: port_open(address, 8000) and port_open(address, 9000), what="the hub")
        yield Hub(address, ca, ca_key, processes)
    finally:
        for process in processes:
            stop_process(process)
        log.close()


def link_to_hub(core: k8s.CoreV1Api, custom: k8s.CustomObjectsApi, ns: str, hub: Hub) -> None:
    """The link Secret (a client certificate of the hub's CA) and the Link to the hub."""
    cert, key = certs.issue(hub.ca, hub.ca_key, "crc-client", server=False)
    core.create_namespaced_secret(ns, tls_secret("link-hub", hub.ca, cert, key))
    endpoints = [
        {"name": "inter-router", "host": hub.address, "port": "8000"},
        {"name": "edge", "host": hub.address, "port": "8001"},
    ]
    custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        ns,
        "links",
        skupper(
            "Link", "link-hub", {"tlsCredentials": "link-hub", "endpoints": endpoints, "cost": 1}
        ),
    )


def test_link_to_a_hub_comes_up_and_the_listener_reaches_its_model(
    cluster: Cluster, hub: Hub
) -> None:
    core, custom = cluster.core(), cluster.custom()
    make_namespace(core, "skupper-models")
    ns = "skupper-models"
    link_to_hub(core, custom, ns, hub)  # the Secret before the Site: the pod mounts it
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "sites", skupper("Site", "crc", {}))
    custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        ns,
        "listeners",
        skupper(
            "Listener", "model", {"routingKey": "model-api", "host": "model-listener", "port": 8000}
        ),
    )

    def ready(plural: str, name: str) -> dict[str, Any] | None:
        status = cr_status(custom, ns, plural, name)
        return status if status.get("status") == "Ready" else None

    link = wait_for(lambda: ready("links", "link-hub"), timeout=60, what="the Link to be Ready")
    assert link["message"] == "OK" and link["remoteSiteName"] == "hub-test"
    wait_for(lambda: ready("listeners", "model"), what="the Listener to be Ready")
    site = wait_for(
        lambda: (s := ready("sites", "crc")) and s["sitesInNetwork"] == 2 and s,
        what="two sites in the network",
    )
    assert sorted(n["name"] for n in site["network"]) == ["crc", "hub-test"]

    models = wait_for(
        lambda: _get_json(f"http://{cluster.address}:8000/v1/models"), what="the model API"
    )
    assert [m["id"] for m in models["data"]] == ["test-model"]


def _get_json(url: str) -> dict[str, Any] | None:
    try:
        response = httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
    return response.json() if response.status_code == 200 else None


def mkl(name: str, port: int, strategy: dict[str, Any]) -> dict[str, Any]:
    return skupper("MultiKeyListener", name, {"host": name, "port": port, "strategy": strategy})


def test_a_cluster_before_skupper_2_2_has_no_multikeylistener_resource(shared: Cluster) -> None:
    """The CRD came with 2.2 (config/crd/bases/skupper_multikeylistener_crd.yaml@2.2.0):
    the shared cluster runs 2.1.1, where the API does not know the resource."""
    custom = shared.custom()
    with pytest.raises(ApiException) as caught:
        custom.list_namespaced_custom_object(GROUP, VERSION, "default", "multikeylisteners")
    assert caught.value.status == 404
    listed = custom.get_api_resources(GROUP, VERSION)
    assert "multikeylisteners" not in [r.name for r in listed.resources]
    assert "listeners" in [r.name for r in listed.resources]


def test_a_multikeylisteners_strategy_kind_is_immutable_and_exactly_one(cluster22: Cluster) -> None:
    """The CRD's CEL rules: exactly one of priority and weighted, and never the other one on
    update (config/crd/bases/skupper_multikeylistener_crd.yaml@2.2.0)."""
    core, custom = cluster22.core(), cluster22.custom()
    make_namespace(core, "pools")
    priority = {"priority": {"routingKeys": ["a", "b"]}}
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "pools", "multikeylisteners", mkl("p", 1, priority)
    )
    current = json_object(
        custom.get_namespaced_custom_object(GROUP, VERSION, "pools", "multikeylisteners", "p")
    )
    current["spec"]["strategy"] = {"weighted": {"routingKeys": {"a": 1}}}
    with pytest.raises(ApiException) as caught:
        custom.replace_namespaced_custom_object(
            GROUP, VERSION, "pools", "multikeylisteners", "p", current
        )
    assert caught.value.status == 422
    assert status_body(caught.value)["message"] == (
        'MultiKeyListener.skupper.io "p" is invalid: spec.strategy: Invalid value: "object": '
        "strategy is immutable"
    )
    both = mkl("q", 2, {**priority, "weighted": {"routingKeys": {"a": 1}}})
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(GROUP, VERSION, "pools", "multikeylisteners", both)
    assert (
        "exactly one of the fields in [priority weighted] must be set"
        in status_body(caught.value)["message"]
    )
    # a new order of the same strategy is an update like any other
    current["spec"]["strategy"] = {"priority": {"routingKeys": ["b", "a"]}}
    custom.replace_namespaced_custom_object(
        GROUP, VERSION, "pools", "multikeylisteners", "p", current
    )


def test_a_multikeylistener_gets_its_service_router_entities_and_status_as_the_controller_writes(
    cluster22: Cluster, hub: Hub
) -> None:
    """A MultiKeyListener over the hub's key and one nobody serves: a Service on its host
    (port name multiaddress-<name>), the multi-address tcpListener and its listenerAddresses
    in the router pod's config, and the status the 2.2 controller writes: Pending "Not
    Operational" until a key of it has a connector, then Ready with hasDestination and the
    keys reachable in priority order (binding_status.go@2.2.0:87-121,
    multikeylistener_types.go@2.2.0:161-268)."""
    core, custom = cluster22.core(), cluster22.custom()
    ns = "skupper-models"
    make_namespace(core, ns)
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "sites", skupper("Site", "crc", {}))
    strategy = {"priority": {"routingKeys": ["nobody", "model-api"]}}
    custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, "multikeylisteners", mkl("pool", 8100, strategy)
    )

    def pending() -> dict[str, Any] | None:
        status = cr_status(custom, ns, "multikeylisteners", "pool")
        return status if status.get("status") else None

    first = wait_for(pending, what="the MultiKeyListener's first status")
    assert (first["status"], first["message"]) == ("Pending", "Not Operational")
    assert [c["type"] for c in first["conditions"]] == ["Configured"]
    assert "hasDestination" not in first
    service = wait_for(
        lambda: next(iter(core.list_namespaced_service(ns).items), None), what="the Service"
    )
    assert name_of(service) == "pool"
    assert labels_of(service)["internal.skupper.io/listener"] == "multiaddress-pool"
    ports = present(present(service.spec, "Service spec").ports, "Service ports")
    assert [(p.name, p.port) for p in ports] == [("multiaddress-pool", 8100)]
    pod = wait_for(lambda: running_router_pod(core, ns), what="the router pod")
    config = json.loads(
        (cluster22.kube_dir / "pods" / name_of(pod) / "config" / "skrouterd.json").read_text()
    )
    assert [
        "tcpListener",
        {
            "name": "multiAddress/pool",
            "host": "0.0.0.0",
            "port": "8100",
            "multiAddressStrategy": "priority",
        },
    ] in config
    assert [e[1]["name"] for e in config if e[0] == "listenerAddress"] == [
        "pool/nobody",
        "pool/model-api",
    ]

    link_to_hub(core, custom, ns, hub)
    core.delete_namespaced_pod(name_of(pod), ns)  # mounts the link's Secret

    def ready() -> dict[str, Any] | None:
        status = cr_status(custom, ns, "multikeylisteners", "pool")
        return status if status.get("status") == "Ready" else None

    status = wait_for(ready, timeout=60, what="the MultiKeyListener to be Ready")
    assert status["message"] == "OK" and status["hasDestination"] is True
    assert status["strategy"] == {"priority": {"routingKeysReachable": ["model-api"]}}
    assert [c["type"] for c in status["conditions"]] == ["Configured", "Operational"]
    models = wait_for(
        lambda: _get_json(f"http://{cluster22.address}:8100/v1/models"), what="the pool's port"
    )
    assert [m["id"] for m in models["data"]] == ["test-model"]
