"""The Kubernetes site's findings, caused as a user causes them on a real cluster: with the
kubernetes client against the world's cluster, as kubectl or oc would. diagnose, called
through the MCP client, names each on the crc site; carrying out its ``next`` through the
same client clears it, and the module leaves crc healthy as it found it."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from mcp import Client

from polling import eventually, wait_for
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.desired.cluster import link_targets
from skupper_mcp.results import DiagnoseResult, Finding, OperationResult
from skupper_mcp.server import build_server
from skupper_mcp.sites import resources as cr
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: setup on a world takes a minute or two.
CLIENT_TIMEOUT = 180.0
CRC = "crc"
ROUTER = "skupper.io/component=router"
GROUP, VERSION = "skupper.io", "v2alpha1"


def meta(pod: k8s.V1Pod) -> k8s.V1ObjectMeta:
    """A pod's metadata, which the API server always sets (the client types it optional)."""
    assert pod.metadata is not None
    return pod.metadata


@dataclass
class Cluster:
    """The world's cluster as its user reaches it: the topology's kubeconfig and context."""

    core: k8s.CoreV1Api
    custom: k8s.CustomObjectsApi
    namespace: str
    link: str  # the Link and Secret of crc's direct link to rhel-ai

    def secret(self) -> k8s.V1Secret:
        return self.core.read_namespaced_secret(self.link, self.namespace)

    def router_pod(self) -> k8s.V1Pod | None:
        pods = self.core.list_namespaced_pod(self.namespace, label_selector=ROUTER).items
        return next((p for p in pods if meta(p).deletion_timestamp is None), None)

    def recreate_secret(self, type_: str | None, data: dict[str, bytes | str] | None) -> None:
        self.core.delete_namespaced_secret(self.link, self.namespace)
        # the client takes a plain dict for a body, as kubectl's manifest would be
        body: Any = {"metadata": {"name": self.link}, "type": type_, "data": data}
        self.core.create_namespaced_secret(self.namespace, body)


@pytest.fixture
def cluster(built: World) -> Cluster:
    kube = load_topology(built.topology).kubernetes
    assert kube is not None and kube.kubeconfig is not None
    api = k8s_config.new_client_from_config(config_file=str(kube.kubeconfig), context=kube.context)
    target = link_targets(load_topology(built.topology))["rhel-ai"]
    return Cluster(
        k8s.CoreV1Api(api), k8s.CustomObjectsApi(api), kube.namespace, cr.link_name(target.site)
    )


Diagnose = Callable[[], Awaitable[DiagnoseResult]]


def over_mcp(client: Client) -> Diagnose:
    async def diagnose() -> DiagnoseResult:
        result = await client.call_tool("diagnose", {"target": "all"})
        assert not result.is_error, result.content
        return DiagnoseResult.model_validate(result.structured_content)

    return diagnose


def serious_on_crc(result: DiagnoseResult) -> list[Finding]:
    return [f for f in result.findings if f.host == CRC and f.severity != "info"]


async def crc_clean(diagnose: Diagnose, what: str) -> DiagnoseResult:
    async def clean() -> DiagnoseResult | None:
        result = await diagnose()
        return result if not serious_on_crc(result) else None

    return await eventually(clean, timeout=60, every=1.0, what=what)


async def found_only(diagnose: Diagnose, finding_id: str, evidence: str) -> Finding:
    """The one finding ``finding_id``, on crc and nowhere else, and nothing else wrong there,
    once its evidence has a line that starts with ``evidence``."""

    async def check() -> Finding | None:
        result = await diagnose()
        wrong = serious_on_crc(result)
        if [f.id for f in wrong] != [finding_id]:
            return None
        if not any(line.startswith(evidence) for line in wrong[0].evidence):
            return None
        assert [f.host for f in result.findings if f.id == finding_id] == [CRC], result.findings
        return wrong[0]

    return await eventually(check, timeout=30, every=1.0, what=f"diagnose to find {finding_id}")


async def carry_out(client: Client, found: Finding) -> None:
    """Each step of ``next``, as an agent would: the tool it names, with its arguments."""
    assert found.next, found
    for step in found.next:
        assert step.kind == "tool" and step.tool is not None, step
        result = await client.call_tool(step.tool, dict(step.arguments))
        assert not result.is_error, result.content
        done = OperationResult.model_validate(result.structured_content)
        assert done.ok, done.summary


def mcp_client(world: World) -> Client:
    return Client(build_server(world.topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT)


@pytest.fixture
async def healthy(engine: Engine, cluster: Cluster) -> AsyncIterator[None]:
    """Every site up and crc clean before; after, crc put back if the test left it broken
    (its link Secret as setup wrote it, the link re-created and the pod restarted)."""
    result = await engine.up()
    assert result.ok, result.summary
    await crc_clean(engine.diagnose, "crc clean before the test")
    original = cluster.secret()
    yield
    if serious_on_crc(await engine.diagnose()):
        cluster.recreate_secret(original.type, original.data)
        await engine.up(CRC)
        await crc_clean(engine.diagnose, "crc clean again after the test")


def secret_data_in(found: Finding, data: dict[str, Any] | None) -> list[str]:
    assert data is not None, "the link Secret has data"
    return [line for line in found.evidence if any(value in line for value in data.values())]


async def test_an_opaque_link_secret_is_crc_secret_type_and_setup_clears_it(
    built: World, healthy: None, cluster: Cluster
) -> None:
    tls = cluster.secret()
    # what `oc create secret generic link-... --from-file=...` makes of the same files
    cluster.recreate_secret("Opaque", tls.data)

    async with mcp_client(built) as client:
        # the Link settled in its Error: the router pod does not take an Opaque Secret
        found = await found_only(over_mcp(client), "crc-secret-type", f"Link {cluster.link}: Error")
        assert found.severity == "error"
        assert found.evidence[0].startswith(f"Secret {cluster.link}: type Opaque, created ")
        assert any(line.startswith(f"Link {cluster.link}: ") for line in found.evidence)
        assert any(line.startswith("router pod ") for line in found.evidence), found.evidence
        assert secret_data_in(found, tls.data) == []
        assert [step.text for step in found.next] == ["setup()"]

        await carry_out(client, found)
        await crc_clean(over_mcp(client), "crc clean after setup")
    assert cluster.secret().type == "kubernetes.io/tls"


async def test_a_link_remade_by_hand_under_the_router_pod_is_stale_and_up_crc_clears_it(
    built: World, healthy: None, cluster: Cluster
) -> None:
    pod = cluster.router_pod()
    assert pod is not None
    started = meta(pod).creation_timestamp
    assert started is not None
    # creationTimestamps have whole seconds: a Secret of the pod's own second is no evidence
    wait_for(
        lambda: dt.datetime.now(dt.UTC).replace(microsecond=0) > started,
        timeout=30,
        what="a second later than the pod's creation",
    )
    # kubectl delete -f link.yaml; kubectl apply -f link.yaml: the Secret and Link anew
    tls = cluster.secret()
    link = cast(
        dict[str, Any],
        cluster.custom.get_namespaced_custom_object(
            GROUP, VERSION, cluster.namespace, "links", cluster.link
        ),
    )
    cluster.custom.delete_namespaced_custom_object(
        GROUP, VERSION, cluster.namespace, "links", cluster.link
    )
    cluster.recreate_secret(tls.type, tls.data)
    cluster.custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        cluster.namespace,
        "links",
        {
            "apiVersion": link["apiVersion"],
            "kind": "Link",
            "metadata": {"name": cluster.link},
            "spec": link["spec"],
        },
    )

    async with mcp_client(built) as client:
        # the Link settled in its Error: the running pod does not have the new Secret
        found = await found_only(
            over_mcp(client), "crc-router-pod-stale", f"Link {cluster.link}: Error"
        )
        assert found.severity == "error"
        assert found.evidence[0].startswith(f"router pod {meta(pod).name}: created ")
        assert any(line.startswith(f"Secret {cluster.link}: created ") for line in found.evidence)
        assert any(line.startswith(f"Link {cluster.link}: ") for line in found.evidence)
        assert secret_data_in(found, tls.data) == []
        assert [step.text for step in found.next] == [f"up(target='{CRC}')"]

        await carry_out(client, found)
        await crc_clean(over_mcp(client), "crc clean after up crc")
    replacement = cluster.router_pod()
    assert replacement is not None and meta(replacement).name != meta(pod).name
