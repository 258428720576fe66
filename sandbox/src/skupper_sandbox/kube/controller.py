"""The cluster's controller: per namespace with a Site, one router pod (recreated when
deleted, restarted in place when its process dies or its config changes), a Service per
Listener, and live status on Sites, Links, Listeners and Connectors."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from skupper_sandbox import hostenv, multikey
from skupper_sandbox.kube import owners, resources, status
from skupper_sandbox.kube.pods import CONTAINER, RouterPod, new_pod_name, router_image
from skupper_sandbox.kube.resources import Resource
from skupper_sandbox.kube.routerconfig import MANAGEMENT_PORT, render
from skupper_sandbox.kube.status import Check
from skupper_sandbox.kube.store import ApiError, Store, now
from skupper_sandbox.router import choice as router_choice

log = logging.getLogger(__name__)

Obj = dict[str, Any]
T = TypeVar("T")

ROUTER_LABELS = {
    "skupper.io/component": "router",
    "application": "skupper-router",
    "app.kubernetes.io/name": "skupper-router",
    "app.kubernetes.io/part-of": "skupper",
    "skupper.io/type": "site",
    "skupper.io/group": "skupper-router",
}
ROUTER_SELECTOR = "skupper.io/component=router"
LISTENER_LABEL = "internal.skupper.io/listener"
MANAGED_BY = {"app.kubernetes.io/managed-by": "skupper-controller"}
_MAX_BACKOFF = 10.0
#: The real controller is driven by informers (a change is an event; a full resync only
#: every 5 minutes, internal/kube/watchers/watchers.go@2.1.2:95) and by what the router
#: reports, not by a timer. Here a pass runs at once on a change; for SETTLE_SECONDS after
#: one (the router settling: links coming up, listeners binding) every ``interval``, and
#: otherwise every IDLE_SECONDS, which bounds how late a change seen only by the router
#: (a peer gone) reaches the status.
SETTLE_SECONDS = 15.0
IDLE_SECONDS = 5.0


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _generation(obj: Obj) -> int:
    return int(obj["metadata"].get("generation", 1))


class Controller:
    """Reconciles the store every ``interval`` seconds and whenever it changes."""

    def __init__(
        self,
        store: Store,
        *,
        kube_dir: Path,
        host_dir: Path,
        address: str,
        interval: float = 0.5,
    ) -> None:
        self.store = store
        self.pods: dict[str, RouterPod] = {}
        self._pods_dir = kube_dir / "pods"
        self._host_dir = host_dir
        info = hostenv.load_host_info(host_dir)
        self._world_dir = info.world_dir
        #: the cluster's Skupper release: its controller, CRDs and router image
        self.skupper_version = info.skupper_version
        self._router_image = router_image(info.skupper_version)
        self._address = address
        self._interval = interval
        self._wake = asyncio.Event()
        self._exited_at: dict[str, float] = {}
        # proton blocks and its connections want one thread: every router query runs on it
        self._management = router_choice.for_world(self._world_dir).management()
        self._management_thread = ThreadPoolExecutor(1, thread_name_prefix="management")
        store.subscribe(lambda *_: self._wake.set())

    async def run(self) -> None:
        """Reconcile until cancelled: at once on a change of the store or a router's exit,
        often while things settle, seldom when nothing changes."""
        changed_at = time.monotonic()
        while True:
            self._wake.clear()
            try:
                await self.reconcile()
            except Exception:
                log.exception("reconcile failed")
            if self._wake.is_set():  # the pass itself changed a status: still settling
                changed_at = time.monotonic()
            settling = time.monotonic() - changed_at < SETTLE_SECONDS
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the wake-up when
            # a cancel comes with it, and the cluster's stop would wait on this loop forever
            try:
                async with asyncio.timeout(self._interval if settling else IDLE_SECONDS):
                    await self._wake.wait()
                changed_at = time.monotonic()
            except TimeoutError:
                pass

    async def stop(self) -> None:
        """Stop every router pod's process (the cluster is shutting down). The pods go
        first, all at once: a management query still waiting on a router that does not
        answer must not hold them past the cluster's own stop (its caller's kill would leave
        them running, in sessions of their own); with its router gone it ends too."""
        await asyncio.gather(*(pod.stop_process() for pod in list(self.pods.values())))
        await self._on_management_thread(self._management.close_all)
        self._management_thread.shutdown()

    async def _on_management_thread(self, call: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            self._management_thread, call, *args
        )

    async def _ask_router(self, pod: RouterPod) -> Obj | None:
        """The pod's router's state over the connection kept to it, as the kube-adaptor keeps
        its agents (``internal/qdr/amqp_mgmt.go@2.1.3:194-224``); None when it does not run
        or answer."""
        if not pod.running:
            await self._on_management_thread(self._management.close, pod.namespace)
            return None
        return await self._on_management_thread(
            self._management.query, pod.namespace, self._address, MANAGEMENT_PORT
        )

    # -- reconcile -----------------------------------------------------------------

    async def reconcile(self) -> None:
        """One pass over every namespace."""
        sites: dict[str, Obj] = {}
        for site in self.store.items(resources.SITES):
            namespace = site["metadata"]["namespace"]
            oldest = sites.get(namespace)
            key = (site["metadata"]["creationTimestamp"], _name(site))
            if oldest is None or key < (oldest["metadata"]["creationTimestamp"], _name(oldest)):
                sites[namespace] = site
        for namespace in [ns for ns in self.pods if ns not in sites]:
            await self._remove_pod(namespace)
        for namespace, site in sorted(sites.items()):
            await self._reconcile_site(namespace, site)
        self._remove_strays(set(sites))

    async def _reconcile_site(self, namespace: str, site: Obj) -> None:
        pod = self.pods.get(namespace)
        replica_set = self._router_replica_set(namespace, site)
        if pod is not None and (
            pod.site_uid != site["metadata"]["uid"] or not self._pod_object_owned(pod, replica_set)
        ):
            await self._remove_pod(namespace)
            pod = None
        secrets = self.store.items(resources.SECRETS, namespace)
        links = self.store.items(resources.LINKS, namespace)
        listeners = self.store.items(resources.LISTENERS, namespace)
        connectors = self.store.items(resources.CONNECTORS, namespace)
        multi_key_listeners = self.store.items(resources.MULTI_KEY_LISTENERS, namespace)
        if pod is None:
            pod = RouterPod(
                name=new_pod_name(_name(replica_set)),
                namespace=namespace,
                site_uid=site["metadata"]["uid"],
                pods_dir=self._pods_dir,
                host_dir=self._host_dir,
                on_exit=self._router_exited(namespace),
            )
            pod.prepare(secrets)
        rendered = render(
            site=site,
            pod_name=pod.name,
            links=links,
            listeners=listeners,
            connectors=connectors,
            mounted=pod.still_mounted(secrets),
            secret_types={_name(s): str(s.get("type", "Opaque")) for s in secrets},
            version=self.skupper_version,
            multi_key_listeners=multi_key_listeners,
        )
        if namespace not in self.pods:
            pod.write_config(rendered.text())
            await pod.start(now())
            self.pods[namespace] = pod
            self.store.create(resources.PODS, namespace, self._pod_object(pod, replica_set))
        elif rendered.text() != pod.config_text:
            log.info("pod %s/%s: config changed, restarting the router", namespace, pod.name)
            pod.write_config(rendered.text())
            await pod.restart(now())
        elif not pod.running and self._backoff_over(pod):
            await pod.restart(now())
        answer = await self._ask_router(pod)
        pod.answering = answer is not None
        self._update_pod_status(pod)
        self._update_site(site, pod, answer)
        for link in links:
            problem = rendered.link_problems.get(_name(link))
            self._update_link(link, problem, answer)
        for listener in listeners:
            self._update_listener(listener, answer)
        for connector in connectors:
            self._update_connector(connector, answer)
        for mkl in multi_key_listeners:
            self._update_multi_key_listener(mkl, answer)
        self._reconcile_services(namespace, listeners, multi_key_listeners)

    def _router_exited(self, namespace: str) -> Any:
        def exited() -> None:
            self._exited_at[namespace] = time.monotonic()
            self._wake.set()

        return exited

    def _backoff_over(self, pod: RouterPod) -> bool:
        # Like the kubelet's crash-loop back-off: the first restart is immediate.
        delay = 0.0 if pod.restart_count == 0 else min(_MAX_BACKOFF, 2.0 ** (pod.restart_count - 1))
        return time.monotonic() - self._exited_at.get(pod.namespace, 0.0) >= delay

    # -- pods ----------------------------------------------------------------------

    def _pod_object_owned(self, pod: RouterPod, replica_set: Obj) -> bool:
        """The pod's object is still there and controlled by the current ReplicaSet."""
        try:
            found = self.store.get(resources.PODS, pod.namespace, pod.name)
        except ApiError:
            return False
        return owners.controller_uid(found) == replica_set["metadata"]["uid"]

    def _router_replica_set(self, namespace: str, site: Obj) -> Obj:
        """The ReplicaSet of the site's router Deployment; either is made anew when missing
        or controlled by an object that is gone (a Site made again)."""
        deployment = self._controlled(
            resources.DEPLOYMENTS,
            namespace,
            owners.deployment_body(site, ROUTER_LABELS),
            site,
        )
        return self._controlled(
            resources.REPLICASETS, namespace, owners.replica_set_body(deployment), deployment
        )

    def _controlled(self, resource: Resource, namespace: str, body: Obj, owner: Obj) -> Obj:
        name = _name(body)
        try:
            current: Obj | None = self.store.get(resource, namespace, name)
        except ApiError:
            current = None
        if current is not None:
            # the Site owns its Deployment without being its controller (owners.py)
            if owner["metadata"]["uid"] in owners.owner_uids(current):
                return current
            with contextlib.suppress(ApiError):
                self.store.delete(resource, namespace, name)
        return self.store.create(resource, namespace, body)

    async def _remove_pod(self, namespace: str) -> None:
        pod = self.pods.pop(namespace)
        log.info("pod %s/%s: removing", namespace, pod.name)
        await self._on_management_thread(self._management.close, namespace)
        await pod.delete()
        with contextlib.suppress(ApiError):
            self.store.delete(resources.PODS, namespace, pod.name)

    def _remove_strays(self, site_namespaces: set[str]) -> None:
        """Router pod objects no process stands behind (left by an earlier run) go."""
        ours = {(p.namespace, p.name) for p in self.pods.values()}
        for obj in self.store.items(resources.PODS, labels=ROUTER_SELECTOR):
            key = (obj["metadata"]["namespace"], _name(obj))
            if key not in ours:
                with contextlib.suppress(ApiError):
                    self.store.delete(resources.PODS, *key)
        for kind in (resources.REPLICASETS, resources.DEPLOYMENTS):
            for obj in self.store.items(kind, labels=ROUTER_SELECTOR):
                if obj["metadata"]["namespace"] not in site_namespaces:
                    with contextlib.suppress(ApiError):
                        self.store.delete(kind, obj["metadata"]["namespace"], _name(obj))
        for service in self.store.items(resources.SERVICES, labels=LISTENER_LABEL):
            if service["metadata"]["namespace"] not in site_namespaces:
                with contextlib.suppress(ApiError):
                    self.store.delete(
                        resources.SERVICES, service["metadata"]["namespace"], _name(service)
                    )

    def _pod_object(self, pod: RouterPod, replica_set: Obj) -> Obj:
        return {
            "metadata": {
                "name": pod.name,
                "namespace": pod.namespace,
                **owners.pod_metadata(replica_set),
            },
            "spec": {
                "containers": [
                    {
                        "name": CONTAINER,
                        "image": self._router_image,
                        "ports": [
                            {"name": "amqps", "containerPort": MANAGEMENT_PORT, "protocol": "TCP"}
                        ],
                    }
                ],
                "nodeName": "crc",
                "restartPolicy": "Always",
            },
            "status": self._pod_status(pod),
        }

    def _pod_status(self, pod: RouterPod) -> Obj:
        ready = "True" if pod.answering else "False"
        since = pod.started_at or now()
        state: Obj
        if pod.running:
            state = {"running": {"startedAt": since}}
        else:
            state = {"waiting": {"reason": "CrashLoopBackOff"}}
        return {
            "phase": "Running",
            "hostIP": self._address,
            "podIP": self._address,
            "podIPs": [{"ip": self._address}],
            "startTime": since,
            "conditions": [
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": ready},
                {"type": "ContainersReady", "status": ready},
                {"type": "PodScheduled", "status": "True"},
            ],
            "containerStatuses": [
                {
                    "name": CONTAINER,
                    "image": self._router_image,
                    "imageID": self._router_image,
                    "containerID": f"sandbox://{pod.pid}",
                    "ready": pod.answering,
                    "started": pod.running,
                    "restartCount": pod.restart_count,
                    "state": state,
                }
            ],
        }

    def _update_pod_status(self, pod: RouterPod) -> None:
        try:
            current = self.store.get(resources.PODS, pod.namespace, pod.name)
        except ApiError:
            return
        wanted = self._pod_status(pod)
        if current.get("status") != wanted:
            current["status"] = wanted
            current["metadata"].pop("resourceVersion", None)
            with contextlib.suppress(ApiError):
                self.store.replace(resources.PODS, pod.namespace, pod.name, current)

    # -- status of the Skupper resources -------------------------------------------

    def _write_status(
        self,
        resource: Resource,
        obj: Obj,
        checks: list[Check],
        *,
        required: tuple[str, ...] = (),
        ready_condition: bool = True,
        **extra: Any,
    ) -> None:
        new = status.build(
            checks,
            generation=_generation(obj),
            previous=obj.get("status"),
            now=now(),
            required=required,
            ready_condition=ready_condition,
            **extra,
        )
        if obj.get("status") == new:
            return
        body = {"metadata": {"name": _name(obj)}, "status": new}
        with contextlib.suppress(ApiError):
            self.store.replace(
                resource, obj["metadata"]["namespace"], _name(obj), body, status=True
            )

    def _update_site(self, site: Obj, pod: RouterPod, answer: Obj | None) -> None:
        running = (
            Check("Running", "Ready")
            if pod.answering
            else Check("Running", "Pending", "No router pod is ready")
        )
        network = list((answer or {}).get("sites") or [])
        extra: Obj = {
            "sitesInNetwork": len(network) if network else int(pod.answering),
            "network": [{"name": name} for name in network],
            "controller": {
                "name": "skupper-controller",
                "namespace": "skupper",
                "version": self.skupper_version,
            },
        }
        self._write_status(resources.SITES, site, [Check("Configured", "Ready"), running], **extra)

    def _update_link(self, link: Obj, problem: Any, answer: Obj | None) -> None:
        if problem is not None:
            failing = Check("Configured", problem.status, problem.message)
            self._write_status(
                resources.LINKS,
                link,
                [failing, Check("Operational", problem.status, problem.message)],
            )
            return
        entry = next(
            (e for e in (answer or {}).get("links") or [] if e.get("name") == _name(link)), None
        )
        extra: Obj = {}
        if entry and entry.get("status") == "up":
            operational = Check("Operational", "Ready")
            if entry.get("remoteSite"):
                extra["remoteSiteName"] = entry["remoteSite"]
        elif entry and entry.get("error"):
            operational = Check("Operational", "Error", str(entry["error"]))
        else:
            operational = Check("Operational", "Pending", "Not operational")
        self._write_status(
            resources.LINKS, link, [Check("Configured", "Ready"), operational], **extra
        )

    def _update_listener(self, listener: Obj, answer: Obj | None) -> None:
        spec = _spec(listener)
        if not (spec.get("routingKey") and spec.get("port") and spec.get("host")):
            bad = Check(
                "Configured", "Error", "spec.routingKey, spec.host and spec.port are required"
            )
            self._write_status(
                resources.LISTENERS, listener, [bad, Check("Matched", "Error", bad.message)]
            )
            return
        reachable = (answer or {}).get("reachable") or {}
        entry = next(
            (e for e in (answer or {}).get("listeners") or [] if e.get("name") == _name(listener)),
            None,
        )
        matched = spec["routingKey"] in reachable or bool(entry and entry.get("bound"))
        check = (
            Check("Matched", "Ready")
            if matched
            else Check("Matched", "Pending", "No matching connectors")
        )
        self._write_status(
            resources.LISTENERS,
            listener,
            [Check("Configured", "Ready"), check],
            hasMatchingConnector=matched,
        )

    def _update_connector(self, connector: Obj, answer: Obj | None) -> None:
        spec = _spec(connector)
        if not (spec.get("routingKey") and spec.get("port") and spec.get("host")):
            bad = Check(
                "Configured",
                "Error",
                "the sandbox cluster needs spec.host, spec.port and spec.routingKey "
                "(pod selectors are not supported)",
            )
            self._write_status(
                resources.CONNECTORS, connector, [bad, Check("Matched", "Error", bad.message)]
            )
            return
        reachable = (answer or {}).get("reachable") or {}
        matched = spec["routingKey"] in reachable
        check = (
            Check("Matched", "Ready")
            if matched
            else Check("Matched", "Pending", "No matching listeners")
        )
        self._write_status(
            resources.CONNECTORS,
            connector,
            [Check("Configured", "Ready"), check],
            hasMatchingListener=matched,
        )

    def _update_multi_key_listener(self, mkl: Obj, answer: Obj | None) -> None:
        """Configured once in the router's config; then what the network makes of it
        (``multikey.report``), once the router answers."""
        checks = [Check("Configured", "Ready")]
        previous = mkl.get("status") or {}
        fields: Obj = {k: previous[k] for k in ("hasDestination", "strategy") if k in previous}
        kept = [c for c in previous.get("conditions") or [] if c.get("type") == "Operational"]
        operational = (
            (kept[0].get("status") == "True", str(kept[0].get("message"))) if kept else None
        )
        if answer is not None:
            said = multikey.report(_spec(mkl), answer.get("reachable") or {}, previous)
            operational, fields = said.operational, said.fields
        if operational is not None:
            ok, message = operational
            checks.append(
                Check("Operational", "Ready") if ok else Check("Operational", "Pending", message)
            )
        self._write_status(
            resources.MULTI_KEY_LISTENERS,
            mkl,
            checks,
            required=("Configured", "Operational"),
            ready_condition=False,
            **fields,
        )

    # -- services ------------------------------------------------------------------

    def _service_object(self, listener: Obj) -> Obj:
        """The Service of a Listener, or of a MultiKeyListener: its port and the label name
        ``multiaddress-<name>`` (``multiKeyListenerPortName``, extended_bindings.go@2.2.0:
        212-244, site.go@2.2.0:540-608; the real Service's owner is the Site, the
        sandbox's the listener)."""
        spec = _spec(listener)
        port = int(spec["port"])
        multi = listener.get("kind") == "MultiKeyListener"
        label = f"multiaddress-{_name(listener)}" if multi else _name(listener)
        return {
            "metadata": {
                "name": str(spec["host"]),
                "namespace": listener["metadata"]["namespace"],
                "labels": {**MANAGED_BY, LISTENER_LABEL: label},
                "ownerReferences": [
                    {
                        "apiVersion": listener["apiVersion"],
                        "kind": str(listener.get("kind") or "Listener"),
                        "name": _name(listener),
                        "uid": listener["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "type": "ClusterIP",
                "clusterIP": self._address,
                "clusterIPs": [self._address],
                "ipFamilies": ["IPv4"],
                "ports": [
                    {
                        "name": label if multi else f"port{port}",
                        "port": port,
                        "targetPort": port,
                        "protocol": "TCP",
                    }
                ],
                "selector": {"skupper.io/component": "router"},
                "sessionAffinity": "None",
            },
            "status": {"loadBalancer": {}},
        }

    @staticmethod
    def _service_outdated(current: Obj, wanted: Obj) -> bool:
        """A Service of ours that differs from what its Listener wants (someone else's
        Service of the same name is left alone)."""
        labels = current["metadata"].get("labels") or {}
        if LISTENER_LABEL not in labels:
            return False
        return (
            labels != wanted["metadata"]["labels"]
            or current.get("spec") != wanted["spec"]
            or current["metadata"].get("ownerReferences") != wanted["metadata"]["ownerReferences"]
        )

    def _reconcile_services(
        self, namespace: str, listeners: list[Obj], multi_key_listeners: list[Obj]
    ) -> None:
        wanted: dict[str, Obj] = {}
        for listener in [*listeners, *multi_key_listeners]:
            spec = _spec(listener)
            try:
                valid = bool(spec.get("host")) and 0 < int(spec.get("port", 0)) < 65536
            except (TypeError, ValueError):
                valid = False
            if valid:
                wanted.setdefault(str(spec["host"]), self._service_object(listener))
        existing = {_name(s): s for s in self.store.items(resources.SERVICES, namespace)}
        for name, service in wanted.items():
            current = existing.get(name)
            try:
                if current is None:
                    self.store.create(resources.SERVICES, namespace, service)
                elif self._service_outdated(current, service):
                    self.store.replace(resources.SERVICES, namespace, name, service)
            except ApiError as error:
                log.warning("service %s/%s: %s", namespace, name, error.message)
        for name, service in existing.items():
            if LISTENER_LABEL in (service["metadata"].get("labels") or {}) and name not in wanted:
                with contextlib.suppress(ApiError):
                    self.store.delete(resources.SERVICES, namespace, name)
