"""Skupper on the Kubernetes consumer site (e.g. CRC), through the Kubernetes API.

Reads the site's objects concurrently; changes are ``ApiCall`` lists (data, built by
``apply_calls``, ``delete_calls`` and ``RESTART_ROUTER``) that ``ClusterSite.execute`` runs.
The router pod is restarted after a link's Secret changes: the kube-adaptor mounts only the
TLS Secrets that existed when the pod started.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ..connectors.kube import KubeConnector
from ..connectors.kubeconfig import (
    CredentialPlugin,
    KubeconfigDocument,
    kubeconfig_files,
    plugin_for,
    read_documents,
)
from ..errors import KubeBoundError, KubeError, Unparsed
from ..facts.certificates import (
    CLUSTER_CAS,
    CLUSTER_ISSUED,
    PUBLIC_KEYS,
    CertificateEnd,
    parse_secret_certificates,
)
from ..facts.site_state import pod_running
from ..topology import KubeSite
from ..vocabulary import KUBE_HOST
from .resources import Resource, key, other_strategy, resource_status
from .work import ApiCall

#: The Deployments whose pods the product reads, restarts and takes logs from: a pod is
#: chosen by owner, never by label, since anyone who may create a pod in the namespace can
#: copy the labels.
ROUTER_DEPLOYMENT = "skupper-router"
#: Every router Deployment a site may have: an HA site (``spec.ha``) runs a second one
#: (``internal/kube/site/site.go@2.2.1:329-335``, ``groups``: each group is a Deployment of
#: that name, ``skupper-router-deployment.yaml@2.2.1:36``).
ROUTER_DEPLOYMENTS = (ROUTER_DEPLOYMENT, "skupper-router-2")
#: The controller's Deployment, when it runs in the site's own namespace (a
#: namespace-scoped install); a cluster-wide install runs it elsewhere.
CONTROLLER_DEPLOYMENT = "skupper-controller"
#: The router pod's containers are ``router`` and ``kube-adaptor``: a log read names one.
ROUTER_CONTAINER = "router"
#: Delete the router pod so its Deployment recreates it with the current Secrets mounted.
RESTART_ROUTER = ApiCall("delete", "Pod", f"of Deployment/{ROUTER_DEPLOYMENT}")
#: How long one API call may take as a whole, connect to last byte.
KUBE_TIMEOUT = 10.0
#: How long reading the site's state may take, in KUBE_TIMEOUTs: the access check and
#: the reads after it are two waves of calls.
READ_TIMEOUTS = 2.5
PLURALS = {
    "Site": "sites",
    "Listener": "listeners",
    "Connector": "connectors",
    "Link": "links",
    "RouterAccess": "routeraccesses",
    "MultiKeyListener": "multikeylisteners",
}


def credential_plugin(kube: KubeSite) -> tuple[CredentialPlugin | None, str | None]:
    """The command the site's kubeconfig runs for its credentials, and why the connector
    will not run it (None: it will). Reads the kubeconfig files: call in a thread."""
    return plugin_for(kube.kubeconfig, kube.context)


def site_kubeconfigs(kube: KubeSite) -> list[KubeconfigDocument]:
    """The kubeconfig files the client reads for the site, parsed (unreadable ones left
    out). Reads the files: call in a thread."""
    return read_documents(kubeconfig_files(kube.kubeconfig))


def apply_calls(resources: list[Resource]) -> tuple[ApiCall, ...]:
    """Create or update each resource, in order (Secrets before the Links that use them)."""
    return tuple(ApiCall("apply", *key(r), body=r) for r in resources)


def delete_calls(keys: list[tuple[str, str]]) -> tuple[ApiCall, ...]:
    return tuple(ApiCall("delete", kind, name) for kind, name in keys)


def status_of(obj: dict[str, Any] | None) -> str:
    """A CR's ``status.status`` with its message, e.g. ``Ready`` or ``Pending: Not operational``."""
    return resource_status(obj).text


def ready(obj: dict[str, Any] | None) -> bool:
    return resource_status(obj).ready


@dataclass
class KubeState:
    version: str
    site: dict[str, Any] | None
    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    listeners: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: read only when the topology may have put one there (``ClusterSite.multi_key_listeners``)
    multi_key_listeners: dict[str, dict[str, Any]] = field(default_factory=dict)
    secrets: dict[str, dict[str, Any]] = field(default_factory=dict)
    services: dict[str, dict[str, Any]] = field(default_factory=dict)
    router_pods: list[dict[str, Any]] = field(default_factory=list)
    #: The site's certificates (its CAs, what they issued, its links' Secrets) with their
    #: ends, earliest first; None when they could not be read (``certificates_error``)
    certificates: list[CertificateEnd] | None = None
    certificates_error: str | None = None
    #: This machine's clock when the site was read (unix seconds): what the ends are from
    read_at: int | None = None

    def existing(self, resource: Resource) -> dict[str, Any] | None:
        kind, name = key(resource)
        if kind == "Site":
            return self.site if self.site and self.site["metadata"]["name"] == name else None
        if kind == "Link":
            return self.links.get(name)
        if kind == "Listener":
            return self.listeners.get(name)
        if kind == "MultiKeyListener":
            return self.multi_key_listeners.get(name)
        if kind == "Secret":
            return self.secrets.get(name)
        return None


@dataclass
class ClusterSite:
    """The Skupper site in one namespace of one cluster."""

    api: KubeConnector
    namespace: str
    secret_names: tuple[str, ...] = ()
    #: whether reads list the MultiKeyListeners (a pool on the cluster may have made one;
    #: a cluster whose Skupper predates 2.2 has no such resource)
    multi_key_listeners: bool = False

    @classmethod
    def open(
        cls, kube: KubeSite, secret_names: tuple[str, ...] = (), multi_key_listeners: bool = False
    ) -> ClusterSite:
        """The site ``kube`` names, over an API connector of its own (``close`` it)."""
        api = KubeConnector(kube.kubeconfig, kube.context, KUBE_TIMEOUT, namespace=kube.namespace)
        return cls(api, kube.namespace, secret_names, multi_key_listeners)

    @property
    def host(self) -> str:
        return KUBE_HOST

    async def check_access(self) -> str:
        """The API answers and accepts our credentials: the server's version."""
        return await self.api.check_access(self.namespace)

    async def close(self) -> None:
        await self.api.close()

    async def read(self, secret_data: bool = False) -> KubeState:
        """The site's resources, Services and router pods, its link Secrets (their
        metadata, type and public files, or with ``secret_data`` their whole data: setup and
        up compare a Secret's CA with the peer's) and its certificates (``_secrets``). A
        ``KubeBoundError`` when they cannot all be read within ``READ_TIMEOUTS`` times
        ``KUBE_TIMEOUT`` (each call is bounded on its own too)."""
        seconds = READ_TIMEOUTS * self.api.timeout
        try:
            async with asyncio.timeout(seconds):
                return await self._read(secret_data)
        except TimeoutError:
            raise KubeBoundError(
                self.api.context,
                f"the site's state was not read within {seconds:g}s",
                bound="deadline",
            ) from None

    async def _read(self, secret_data: bool) -> KubeState:
        version = await self.api.check_access(self.namespace)
        ns = self.namespace
        # two gathers: asyncio.gather keeps its results' types for at most six awaitables
        (sites, links, listeners, services, pods, multi), (secrets, certs) = await asyncio.gather(
            asyncio.gather(
                self.api.list("sites", namespace=ns),
                self.api.list("links", namespace=ns),
                self.api.list("listeners", namespace=ns),
                self.api.list_services(namespace=ns),
                self.router_pods(),
                self._multi_key_listeners(),
            ),
            self._secrets(secret_data),
        )
        return KubeState(
            version=version,
            site=sites[0] if sites else None,
            links=_by_name(links),
            listeners=_by_name(listeners),
            multi_key_listeners=_by_name(multi),
            secrets=secrets,
            services=_by_name(services),
            router_pods=pods,
            certificates=certs[0],
            certificates_error=certs[1],
            read_at=int(time.time()),
        )

    async def _secrets(
        self, secret_data: bool
    ) -> tuple[dict[str, dict[str, Any]], tuple[list[CertificateEnd] | None, str | None]]:
        """The Secrets the site's state needs, each read once by its name: the CA and
        server Secrets the controller makes (``CLUSTER_CAS``, ``CLUSTER_ISSUED``: their
        names in internal/kube/site/site.go@2.1.3 and @2.2.1) and the links' (ours,
        ``secret_names``). Of each only ``tls.crt`` and ``ca.crt`` are kept
        (``read_secret`` drops the rest), a link Secret's whole data with ``secret_data``
        (setup and up compare its CA with the peer's).

        Returns the link Secrets by name (metadata, type, the data kept) and the
        certificates with their ends; (None, why) for these when a certificate Secret
        cannot be read, which fails no other fact. A link Secret that cannot be read fails
        the read, as its absence and type decide setup and findings."""
        links = tuple(dict.fromkeys(self.secret_names))
        names = (*(n for n in (*CLUSTER_CAS, *CLUSTER_ISSUED) if n not in links), *links)
        found = await asyncio.gather(
            *(
                self.api.read_secret(
                    n, None if secret_data and n in links else PUBLIC_KEYS, namespace=self.namespace
                )
                for n in names
            ),
            return_exceptions=True,
        )
        read = dict(zip(names, found, strict=True))
        for n in links:
            if isinstance(read[n], BaseException):
                raise read[n]  # type: ignore[misc]
        secrets = {n: s for n in links if isinstance(s := read[n], dict)}
        return secrets, self._certificates(read)

    def _certificates(
        self, read: dict[str, dict[str, Any] | BaseException | None]
    ) -> tuple[list[CertificateEnd] | None, str | None]:
        """The certificates of what ``_secrets`` read, with their ends (only the public
        files: ``parse_secret_certificates`` never sees a ``tls.key``)."""
        failed = next((e for e in read.values() if isinstance(e, BaseException)), None)
        if isinstance(failed, KubeError):
            return None, f"the site's certificate Secrets could not be read: {failed}"
        if failed is not None:
            raise failed
        files = {
            n: {k: v for k, v in (s.get("data") or {}).items() if k in PUBLIC_KEYS}
            for n, s in read.items()
            if isinstance(s, dict)
        }
        try:
            return parse_secret_certificates(
                {n: data for n, data in files.items() if data}, frozenset(self.secret_names)
            ), None
        except Unparsed as exc:
            return None, f"a certificate Secret could not be read: {exc}"

    async def _multi_key_listeners(self) -> list[dict[str, Any]]:
        """The MultiKeyListeners when asked for; none where the cluster's Skupper has no such
        resource (404: its CRD came with 2.2, config/crd/bases@2.2.0) or our role may not
        list it (403, what a namespace role without the kind answers even for a resource
        the cluster lacks): an any pool needs none, and applying one says the 403 itself."""
        if not self.multi_key_listeners:
            return []
        try:
            return await self.api.list(PLURALS["MultiKeyListener"], namespace=self.namespace)
        except KubeError as exc:
            if exc.status in (403, 404):
                return []
            raise

    async def execute(self, calls: tuple[ApiCall, ...]) -> str:
        """Run calls of one verb built by ``apply_calls``, ``delete_calls`` or
        ``RESTART_ROUTER``; the step's detail."""
        verbs = {c.verb for c in calls}
        if calls == (RESTART_ROUTER,):
            return await self.restart_router()
        if verbs == {"apply"}:
            return await self.apply([c.body for c in calls if c.body is not None])
        if verbs == {"delete"}:
            return await self.delete([(c.kind, c.name) for c in calls])
        raise ValueError(f"cannot run {', '.join(c.summary for c in calls)} as one step")

    async def apply(self, resources: list[Resource]) -> str:
        """Create or update resources in order; Secrets before the Links that use them."""
        await self.api.ensure_namespace(self.namespace)
        changed = []
        for resource in resources:
            kind, name = key(resource)
            if kind == "Secret":
                did = await self.api.apply_secret(resource, namespace=self.namespace)
            elif kind == "MultiKeyListener" and await self._other_strategy(resource):
                # the CRD holds the strategy's kind immutable: a new one is a new object
                await self.api.delete(PLURALS[kind], name, namespace=self.namespace)
                did = await self.api.apply(PLURALS[kind], resource, namespace=self.namespace)
            else:
                did = await self.api.apply(PLURALS[kind], resource, namespace=self.namespace)
            if did:
                changed.append(f"{kind}/{name}")
        return "applied " + ", ".join(changed) if changed else "already applied"

    async def _other_strategy(self, resource: Resource) -> bool:
        """Whether the cluster has this MultiKeyListener with the other strategy, which the
        CRD refuses to change in place (``resources.other_strategy``)."""
        from ..errors import KubeError

        kind, name = key(resource)
        try:
            held = await self.api.get(PLURALS[kind], name, namespace=self.namespace)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return other_strategy(resource, held)

    async def delete(self, keys: list[tuple[str, str]]) -> str:
        gone = []
        for kind, name in keys:
            if kind == "Secret":
                did = await self.api.delete_secret(name, namespace=self.namespace)
            else:
                did = await self.api.delete(PLURALS[kind], name, namespace=self.namespace)
            if did:
                gone.append(f"{kind}/{name}")
        return "deleted " + ", ".join(gone) if gone else "nothing to delete"

    async def pod_log(
        self, deployment: str, container: str | None, lines: int, max_bytes: int
    ) -> tuple[str | None, str, bool]:
        """The log of the newest running pod of ``deployment`` in the site's namespace:
        (pod name, text, cut at the front); (None, "", False) when it has no pod."""
        owned = await self.owned_pods(deployment)
        if not owned:
            return None, "", False
        newest = max(
            owned,
            key=lambda p: (
                pod_running(p),
                str(p["metadata"].get("creationTimestamp") or ""),
            ),
        )
        name = str(newest["metadata"]["name"])
        text, cut = await self.api.read_pod_log(
            name,
            container=container,
            tail_lines=lines,
            max_bytes=max_bytes,
            namespace=self.namespace,
        )
        return name, text, cut

    async def router_pods(self) -> list[dict[str, Any]]:
        """The pods of every router Deployment the site has (two on an HA site), by owner."""
        ns = self.namespace
        replica_sets, pods, deployments = await asyncio.gather(
            self.api.list_replica_sets(namespace=ns),
            self.api.list_pods(namespace=ns),
            asyncio.gather(*(self.api.get_deployment(d, namespace=ns) for d in ROUTER_DEPLOYMENTS)),
        )
        return [
            pod
            for found in deployments
            if found is not None
            for pod in deployment_pods(found, replica_sets, pods)
        ]

    async def owned_pods(self, deployment: str) -> list[dict[str, Any]]:
        """The pods of ``deployment`` by owner (``deployment_pods``); [] without it."""
        found, replica_sets, pods = await asyncio.gather(
            self.api.get_deployment(deployment, namespace=self.namespace),
            self.api.list_replica_sets(namespace=self.namespace),
            self.api.list_pods(namespace=self.namespace),
        )
        return deployment_pods(found, replica_sets, pods) if found is not None else []

    async def restart_router(self) -> str:
        """Delete the router pod so its Deployment recreates it with the Secrets mounted;
        a pod that only wears the router's labels is not the router's and is left alone."""
        pods = await self.router_pods()
        for pod in pods:
            await self.api.delete_pod(pod["metadata"]["name"], namespace=self.namespace)
        return f"deleted router pod {', '.join(p['metadata']['name'] for p in pods) or '(none)'}"


def deployment_pods(
    deployment: dict[str, Any], replica_sets: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The pods ``deployment`` owns, as its controller made them: each controlled (by uid) by
    a ReplicaSet the Deployment controls. A pod that only carries the right labels is not."""
    uid = deployment.get("metadata", {}).get("uid")
    if not uid:
        return []
    owned_sets = {
        rs["metadata"]["uid"]
        for rs in replica_sets
        if controller_uid(rs) == uid and rs.get("metadata", {}).get("uid")
    }
    return [pod for pod in pods if controller_uid(pod) in owned_sets]


def controller_uid(obj: dict[str, Any]) -> str | None:
    """The uid of the object's controller: its ownerReference with ``controller: true``."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") is True and ref.get("uid"):
            return str(ref["uid"])
    return None


def _by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["metadata"]["name"]: i for i in items if i.get("metadata", {}).get("name")}
