"""The Kubernetes API seam: the few calls the Kubernetes site needs, over the official
``kubernetes`` client, with its errors translated into the project's own.

The client is the ``kubernetes`` extra (``pip install 'skupper-mcp[kubernetes]'``): only a
topology with a Kubernetes site loads it, and without it that site fails with a
``MissingExtraError`` that names the extra (``_kube_client``), while the others run.

The client is blocking, so every call runs in a worker thread of the connector's own (a
cluster that never answers cannot take the threads other sites use). Every call goes through
``_call``, which holds it to a budget: a deadline on the whole exchange, connect to last
byte, and a cap on the bytes it reads. urllib3's timeouts are per read, so a server that
trickles a byte at a time would never trip them: the budget is kept at the socket, by each
connection's ``_BoundedSocket``, and a call past it ends as a ``KubeBoundError`` naming the
bound, its connection closed. Objects go in and come out as plain JSON-shaped dicts
(camelCase keys, as in YAML), for Skupper's custom resources and core objects alike.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skupper_mcp import host_json
from skupper_mcp.errors import (
    ConnectError,
    KubeBoundError,
    KubeError,
    MissingExtraError,
    SiteConfigError,
    kind_of,
)
from skupper_mcp.vocabulary import KUBE_HOST

from .kubeconfig import plugin_for

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

__all__ = ["SKUPPER_GROUP", "SKUPPER_VERSION", "KubeConnector", "KubeObject"]

log = logging.getLogger(__name__)

SKUPPER_GROUP = "skupper.io"
SKUPPER_VERSION = "v2alpha1"

KubeObject = dict[str, Any]
"""A Kubernetes object as JSON: ``{"apiVersion", "kind", "metadata", "spec", ...}``."""
KubeObjects = list[KubeObject]

T = TypeVar("T")

#: The most one API answer may hold, headers included: a namespace's lists are far smaller;
#: an answer that never ends must not grow the process.
KUBE_MAX_BYTES = 16 * 1024 * 1024
#: Worker threads per cluster: one read asks for up to eight things at once.
KUBE_WORKERS = 8


class KubeConnector:
    """Talks to one cluster through ``kubeconfig`` (default: ``$KUBECONFIG`` or
    ``~/.kube/config``) and ``context`` (default: the current context).

    ``namespace`` is the default for every call (else the context's namespace, else
    ``default``); each method also takes ``namespace=`` to override it. ``timeout`` bounds
    each call as a whole, connect to last byte; ``max_bytes`` what one answer may hold.
    """

    def __init__(
        self,
        kubeconfig: Path | None = None,
        context: str | None = None,
        timeout: float = 10,
        *,
        namespace: str | None = None,
        max_bytes: int = KUBE_MAX_BYTES,
    ) -> None:
        self._kubeconfig = kubeconfig
        self._context = context
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._namespace = namespace
        self._api: ApiClient | None = None
        self._lock = asyncio.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._classes: dict[str, Any] = {}

    @property
    def timeout(self) -> float:
        """How long one call may take as a whole."""
        return self._timeout

    @property
    def context(self) -> str:
        """The kubeconfig context in use (its name in errors)."""
        return self._context or "current context"

    # ---- access -------------------------------------------------------------------

    async def check_access(self, namespace: str | None = None) -> str:
        """Prove the API is reachable and we are authenticated; return the server version.

        Lists the Skupper sites in ``namespace``, since ``/version`` alone needs no login.
        """
        version = await self._api_of("VersionApi")
        info = await self._call("get", "version", None, version.get_code)
        try:
            await self.list("sites", namespace=namespace)
        except KubeError as exc:
            if exc.status == 404:
                raise KubeError(
                    self.context,
                    "the skupper.io/v2alpha1 Site resource is not served: is Skupper "
                    "installed on this cluster?",
                    status=404,
                ) from exc
            raise
        return str(info.git_version)

    # ---- Skupper custom resources (skupper.io/v2alpha1) ---------------------------

    async def get(self, plural: str, name: str, *, namespace: str | None = None) -> KubeObject:
        """The named custom object; ``KubeError`` with status 404 when it is absent."""
        api = await self._custom()
        ns = await self._ns(namespace)
        return await self._call(
            "get",
            f"{plural}/{name}",
            ns,
            api.get_namespaced_custom_object,
            SKUPPER_GROUP,
            SKUPPER_VERSION,
            ns,
            plural,
            name,
        )

    async def list(
        self, plural: str, label_selector: str | None = None, *, namespace: str | None = None
    ) -> KubeObjects:
        """The custom objects of one kind in the namespace, optionally filtered by labels."""
        api = await self._custom()
        ns = await self._ns(namespace)
        extra = {"label_selector": label_selector} if label_selector else {}
        found = await self._call(
            "list",
            plural,
            ns,
            api.list_namespaced_custom_object,
            SKUPPER_GROUP,
            SKUPPER_VERSION,
            ns,
            plural,
            **extra,
        )
        return list(found.get("items") or [])

    async def apply(self, plural: str, body: KubeObject, *, namespace: str | None = None) -> bool:
        """Create the object, or replace it when it exists and differs. Returns whether
        anything changed (an identical spec, labels and annotations is no change)."""
        api = await self._custom()
        ns = await self._ns(namespace)
        name = _name_of(body)
        existing = await self._get_or_none(self.get(plural, name, namespace=ns))
        if existing is None:
            await self._call(
                "create",
                f"{plural}/{name}",
                ns,
                api.create_namespaced_custom_object,
                SKUPPER_GROUP,
                SKUPPER_VERSION,
                ns,
                plural,
                body,
            )
            return True
        if _same(existing, body, ("spec",)):
            return False
        await self._call(
            "replace",
            f"{plural}/{name}",
            ns,
            api.replace_namespaced_custom_object,
            SKUPPER_GROUP,
            SKUPPER_VERSION,
            ns,
            plural,
            name,
            _with_version(body, existing),
        )
        return True

    async def delete(self, plural: str, name: str, *, namespace: str | None = None) -> bool:
        """Delete the named custom object. Returns whether it existed (absent is fine)."""
        api = await self._custom()
        ns = await self._ns(namespace)
        return await self._deleted(
            self._call(
                "delete",
                f"{plural}/{name}",
                ns,
                api.delete_namespaced_custom_object,
                SKUPPER_GROUP,
                SKUPPER_VERSION,
                ns,
                plural,
                name,
            )
        )

    # ---- core: secrets, services, pods, namespaces --------------------------------

    async def get_secret(self, name: str, *, namespace: str | None = None) -> KubeObject:
        """The named Secret; ``KubeError`` with status 404 when it is absent."""
        core = await self._core()
        ns = await self._ns(namespace)
        secret = await self._call(
            "get", f"secrets/{name}", ns, core.read_namespaced_secret, name, ns
        )
        return await self._to_dict(secret)

    async def apply_secret(self, body: KubeObject, *, namespace: str | None = None) -> bool:
        """Create the Secret, or replace it when its type, data or labels differ (a Secret
        of another type is deleted and created anew). Returns whether anything changed.
        ``data`` values are base64, as in the API."""
        core = await self._core()
        ns = await self._ns(namespace)
        name = _name_of(body)
        existing = await self._get_or_none(self.get_secret(name, namespace=ns))
        if existing is not None and existing.get("type") != (body.get("type") or "Opaque"):
            # The API refuses to change a Secret's type (422 "field is immutable").
            await self.delete_secret(name, namespace=ns)
            existing = None
        if existing is None:
            await self._call(
                "create", f"secrets/{name}", ns, core.create_namespaced_secret, ns, body
            )
            return True
        if _same(existing, body, ("type", "data")):
            return False
        await self._call(
            "replace",
            f"secrets/{name}",
            ns,
            core.replace_namespaced_secret,
            name,
            ns,
            _with_version(body, existing),
        )
        return True

    async def read_secret(
        self, name: str, keys: tuple[str, ...] | None, *, namespace: str | None = None
    ) -> KubeObject | None:
        """The named Secret with only ``keys`` of its data (a certificate's public files,
        ``tls.crt`` and ``ca.crt``: base64 text as the API gives them; None: all of it),
        None when there is no such Secret. The rest of its data (a ``tls.key``) is dropped
        here: nothing of it is kept, logged or returned. One GET: the API has no read of a
        Secret's part, so this is the one place its whole answer is seen."""
        core = await self._core()
        ns = await self._ns(namespace)
        found: Any = await self._get_or_none(
            self._call("get", f"secrets/{name}", ns, core.read_namespaced_secret, name, ns)
        )
        if found is None:
            return None
        data = getattr(found, "data", None) or {}
        kept = {k: v for k, v in data.items() if (keys is None or k in keys) and isinstance(v, str)}
        found.data = None  # the metadata's dict never holds what was dropped
        secret = await self._to_dict(found)
        return {
            "kind": "Secret",
            "metadata": secret.get("metadata") or {},
            "type": secret.get("type") or "Opaque",
            "data": kept,
        }

    async def delete_secret(self, name: str, *, namespace: str | None = None) -> bool:
        """Delete the named Secret. Returns whether it existed."""
        core = await self._core()
        ns = await self._ns(namespace)
        return await self._deleted(
            self._call("delete", f"secrets/{name}", ns, core.delete_namespaced_secret, name, ns)
        )

    async def list_services(
        self, label_selector: str | None = None, *, namespace: str | None = None
    ) -> KubeObjects:
        """The Services in the namespace, optionally filtered by labels."""
        core = await self._core()
        ns = await self._ns(namespace)
        extra = {"label_selector": label_selector} if label_selector else {}
        found = await self._call("list", "services", ns, core.list_namespaced_service, ns, **extra)
        return list((await self._to_dict(found)).get("items") or [])

    async def list_pods(
        self, label_selector: str | None = None, *, namespace: str | None = None
    ) -> KubeObjects:
        """The Pods in the namespace, optionally filtered by labels."""
        core = await self._core()
        ns = await self._ns(namespace)
        extra = {"label_selector": label_selector} if label_selector else {}
        found = await self._call("list", "pods", ns, core.list_namespaced_pod, ns, **extra)
        return list((await self._to_dict(found)).get("items") or [])

    # ---- apps: the Deployment and ReplicaSets that own pods ------------------------

    async def get_deployment(self, name: str, *, namespace: str | None = None) -> KubeObject | None:
        """The named Deployment, or None when there is none."""
        apps = await self._apps()
        ns = await self._ns(namespace)
        found = await self._get_or_none(
            self._call("get", f"deployments/{name}", ns, apps.read_namespaced_deployment, name, ns)
        )
        return None if found is None else await self._to_dict(found)

    async def list_replica_sets(
        self, label_selector: str | None = None, *, namespace: str | None = None
    ) -> KubeObjects:
        """The ReplicaSets in the namespace, optionally filtered by labels."""
        apps = await self._apps()
        ns = await self._ns(namespace)
        extra = {"label_selector": label_selector} if label_selector else {}
        found = await self._call(
            "list", "replicasets", ns, apps.list_namespaced_replica_set, ns, **extra
        )
        return list((await self._to_dict(found)).get("items") or [])

    async def read_pod_log(
        self,
        name: str,
        *,
        container: str | None = None,
        tail_lines: int,
        max_bytes: int,
        namespace: str | None = None,
    ) -> tuple[str, bool]:
        """The last ``tail_lines`` lines of a container's log in the named Pod, and whether
        more than ``max_bytes`` came (then only the newest ``max_bytes`` are kept).

        The body is read raw and decoded here: the client's own decoding fails on a log
        that is not valid UTF-8, and ``limit_bytes`` would keep the oldest bytes, not the
        newest. ``container`` None: the Pod's only container.
        """
        core = await self._core()
        ns = await self._ns(namespace)
        extra = {"container": container} if container else {}

        def fetch(**kwargs: Any) -> tuple[bytes, bool]:
            response = core.read_namespaced_pod_log(
                name, ns, tail_lines=tail_lines, _preload_content=False, **extra, **kwargs
            )
            kept, cut = bytearray(), False
            try:
                for chunk in response.stream(64 * 1024):
                    kept += chunk
                    if len(kept) > max_bytes:
                        del kept[: len(kept) - max_bytes]
                        cut = True
            finally:
                response.release_conn()
            return bytes(kept), cut

        # No byte cap here: the read keeps only the newest max_bytes; the deadline holds.
        data, cut = await self._call("get", f"pods/{name}/log", ns, fetch, _uncapped=True)
        return data.decode(errors="replace"), cut

    async def delete_pod(self, name: str, *, namespace: str | None = None) -> bool:
        """Delete the named Pod (its controller recreates it). Returns whether it existed."""
        core = await self._core()
        ns = await self._ns(namespace)
        return await self._deleted(
            self._call("delete", f"pods/{name}", ns, core.delete_namespaced_pod, name, ns)
        )

    async def ensure_namespace(self, namespace: str | None = None) -> bool:
        """Create the namespace unless it exists. Returns whether it was created."""
        core = await self._core()
        ns = await self._ns(namespace)
        try:
            await self._call("get", f"namespaces/{ns}", None, core.read_namespace, ns)
            return False
        except KubeError as exc:
            if exc.status != 404:
                raise
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        await self._call("create", f"namespaces/{ns}", None, core.create_namespace, body)
        return True

    async def close(self) -> None:
        """Release the client's connection pool. Safe to call twice."""
        async with self._lock:
            api, self._api = self._api, None
            executor, self._executor = self._executor, None
        if api is not None:
            await asyncio.to_thread(api.close)
        if executor is not None:
            executor.shutdown(wait=False)

    # ---- plumbing -----------------------------------------------------------------

    async def _client(self) -> ApiClient:
        async with self._lock:
            if self._api is None:
                self._api = await self._in_thread(self._build_client)
            return self._api

    def _in_thread(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Run ``fn`` in one of this cluster's own worker threads."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(KUBE_WORKERS, thread_name_prefix="kube-api")
        return asyncio.get_running_loop().run_in_executor(self._executor, fn)

    def _build_client(self) -> ApiClient:
        # In a worker thread, as every import of the client is (``_api_of``): ``_call`` then
        # finds its exception modules imported.
        client = _kube_client()
        import kubernetes.client.exceptions  # noqa: F401
        import urllib3.exceptions  # noqa: F401
        from kubernetes import config

        configuration = client.Configuration()
        source = str(self._kubeconfig) if self._kubeconfig else None
        _, refused = plugin_for(self._kubeconfig, self._context)
        if refused:  # the client would run the command as it loads the file
            raise SiteConfigError(KUBE_HOST, refused, variable="CRC_KUBECONFIG")
        try:
            config.load_kube_config(
                config_file=source,
                context=self._context,
                client_configuration=configuration,
                persist_config=False,
            )
            if self._namespace is None:
                _, active = config.list_kube_config_contexts(config_file=source)
                chosen = active
                if self._context:
                    contexts, _ = config.list_kube_config_contexts(config_file=source)
                    chosen = next(c for c in contexts if c["name"] == self._context)
                self._namespace = chosen.get("context", {}).get("namespace") or "default"
                if self._context is None:
                    self._context = chosen.get("name")
        except (config.ConfigException, OSError, StopIteration) as exc:
            raise self._config_problem(source, exc) from exc
        # One quick retry at most: the request timeout, not urllib3's retries, bounds a call.
        configuration.retries = 1
        api = client.ApiClient(configuration=configuration)
        api.set_default_header("Accept-Encoding", "identity")
        _bound_connections(api.rest_client.pool_manager)
        _bound_depth(api)
        return api

    def _config_problem(self, source: str | None, exc: BaseException) -> SiteConfigError:
        """What in topology.env to fix when the kubeconfig cannot be loaded: the file
        (CRC_KUBECONFIG) or the context (CRC_CONTEXT). Nothing was asked of the cluster."""
        from kubernetes import config

        where = source or "the default kubeconfig ($KUBECONFIG, else ~/.kube/config)"
        if source and not Path(source).is_file():
            return SiteConfigError(
                KUBE_HOST,
                f"the kubeconfig {source} does not exist: CRC_KUBECONFIG in topology.env "
                "names it; fix the path, or comment out the CRC_ variables to leave the "
                "Kubernetes site out",
                variable="CRC_KUBECONFIG",
            )
        if self._context:
            try:
                contexts, _ = config.list_kube_config_contexts(config_file=source)
            except (config.ConfigException, OSError):
                contexts = None
            if contexts is not None and self._context not in {c["name"] for c in contexts}:
                known = ", ".join(sorted(c["name"] for c in contexts)) or "none"
                return SiteConfigError(
                    KUBE_HOST,
                    f"{where} has no context {self._context!r} (its contexts: {known}): "
                    "fix CRC_CONTEXT in topology.env, or log in to the cluster to create it "
                    "(e.g. `oc login`)",
                    variable="CRC_CONTEXT",
                )
        return SiteConfigError(
            KUBE_HOST,
            f"cannot load {where} (context {self.context}): {exc}; fix CRC_KUBECONFIG or "
            "CRC_CONTEXT in topology.env",
            variable="CRC_KUBECONFIG",
        )

    async def _custom(self) -> Any:
        return await self._api_of("CustomObjectsApi")

    async def _core(self) -> Any:
        return await self._api_of("CoreV1Api")

    async def _apps(self) -> Any:
        return await self._api_of("AppsV1Api")

    async def _api_of(self, name: str) -> Any:
        """The client's API class ``name`` over this connector's client. The client loads
        its API classes on first use, with every model they name: CoreV1Api alone is 0.9 s
        of CPU, 4 s of a busy machine. That load runs in a worker thread, as the client's
        import does (``_build_client``): on the loop it held every other site's work, and
        SSH channels to live hosts missed their 5 s deadline behind it (docs/sandbox.md 4a)."""
        api = await self._client()
        if name not in self._classes:
            self._classes[name] = await self._in_thread(lambda: getattr(_kube_client(), name))
        return self._classes[name](api)

    async def _ns(self, namespace: str | None) -> str:
        await self._client()
        return namespace or self._namespace or "default"

    async def _to_dict(self, model: Any) -> KubeObject:
        api = await self._client()
        result: KubeObject = api.sanitize_for_serialization(model)
        return result

    async def _call(
        self,
        verb: str,
        resource: str,
        namespace: str | None,
        fn: Callable[..., T],
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """Every API call: ``fn(*args, **kwargs)`` in a worker thread, within its budget
        (the deadline from now, the byte cap unless ``_uncapped=True``), its failures
        translated."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        uncapped = bool(kwargs.pop("_uncapped", False))
        kwargs["_request_timeout"] = self._timeout
        where = f" in namespace {namespace}" if namespace else ""
        budget = _Budget(
            self._timeout,
            None if uncapped else self._max_bytes,
            self.context,
            f"{verb} {resource}{where}",
        )

        def bounded() -> T:
            _current.budget = budget
            try:
                return fn(*args, **kwargs)
            finally:
                _current.budget = None

        try:
            return await self._in_thread(bounded)
        except RecursionError as exc:  # a backstop: _bound_depth refuses a deep answer first
            raise KubeBoundError(
                self.context,
                f"{budget.call}: the answer nests too deep to be read",
                bound="depth",
            ) from exc
        except ApiException as exc:
            raise self._api_error(exc, verb, resource, namespace) from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:  # the client's own parse
            raise KubeError(
                self.context, f"{budget.call}: the answer is not JSON", kind=kind_of(exc)
            ) from exc
        except (HTTPError, OSError) as exc:
            host = self._api.configuration.host if self._api else "the API server"
            raise ConnectError(
                self.context,
                f"cannot reach the Kubernetes API at {host}: {_reason(exc)}",
                kind=kind_of(exc),
            ) from exc

    def _api_error(self, exc: Any, verb: str, resource: str, namespace: str | None) -> KubeError:
        status = int(exc.status) if exc.status else None
        where = f" in namespace {namespace}" if namespace else ""
        message = _api_message(exc)
        if status == 401:
            reason = "not authenticated: log in again (oc login / refresh the token)"
        elif status == 403:
            reason = f"forbidden: cannot {verb} {resource}{where}: {message}"
        elif status == 404:
            reason = f"{resource} not found{where}"
        else:
            reason = f"{verb} {resource}{where} failed (HTTP {status}): {message}"
        return KubeError(self.context, reason, status=status)

    @staticmethod
    async def _get_or_none(call: Any) -> KubeObject | None:
        try:
            result: KubeObject = await call
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise
        return result

    @staticmethod
    async def _deleted(call: Any) -> bool:
        try:
            await call
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True


class _Budget:
    """What the call in progress may still read: for ``seconds`` from now, at most
    ``max_bytes`` (None: no cap). Past either, its read raises the call's ``KubeBoundError``
    (``context``, ``call``: what it asked): not an ``OSError``, so urllib3 neither retries
    nor wraps it, and closes the connection it came through."""

    def __init__(self, seconds: float, max_bytes: int | None, context: str, call: str) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.max_bytes = max_bytes
        self.context = context
        self.call = call
        self.received = 0

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise KubeBoundError(
                self.context,
                f"{self.call}: no complete answer within {self.seconds:g}s",
                bound="deadline",
            )
        return left

    def take(self, count: int) -> None:
        self.received += count
        if self.max_bytes is not None and self.received > self.max_bytes:
            raise KubeBoundError(
                self.context,
                f"{self.call}: the answer passed {_size(self.max_bytes)} and was cut off there",
                bound="size",
            )


#: The budget of the call running in this worker thread (``_call`` sets it).
_current = threading.local()


class _BoundedSocket:
    """A connection's socket whose every read keeps to the budget of the call in progress:
    it waits no longer than the time left and counts the bytes. The rest is the socket's."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def makefile(self, mode: str = "r", buffering: int | None = None, **kwargs: Any) -> Any:
        if mode != "rb":
            return self._sock.makefile(mode, buffering, **kwargs)  # type: ignore[call-overload]
        # As socket.makefile does, but reading through recv_into below.
        self._sock._io_refs += 1  # type: ignore[attr-defined]
        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]
        return io.BufferedReader(raw, buffering or io.DEFAULT_BUFFER_SIZE)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        budget: _Budget | None = getattr(_current, "budget", None)
        if budget is None:
            return self._sock.recv_into(buffer, nbytes, flags)
        before = self._sock.gettimeout()
        left = budget.remaining()
        self._sock.settimeout(left if before is None else min(before, left))
        try:
            count = self._sock.recv_into(buffer, nbytes, flags)
        except TimeoutError:
            budget.remaining()  # past the deadline: say so, not "timed out"
            raise
        finally:
            self._sock.settimeout(before)
        budget.take(count)
        return count

    def recv(self, size: int, flags: int = 0) -> bytes:
        buffer = bytearray(size)
        count = self.recv_into(buffer, size, flags)
        return bytes(buffer[:count])


class _BoundedConnection:
    """Mixed into urllib3's connection classes: the socket it connects is a bounded one."""

    sock: Any

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        if self.sock is not None and not isinstance(self.sock, _BoundedSocket):
            self.sock = _BoundedSocket(self.sock)


class _UnencodedPool:
    """Mixed into urllib3's pool classes: every request asks for its answer unencoded and
    takes it as it came. urllib3 would unpack a gzip answer whatever was asked, past the
    socket's byte cap (16 MiB of gzip is 16 GiB); a server that compresses anyway sends
    what is not JSON, refused as such."""

    def urlopen(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        # the header is the client's default (``_build_client``); urllib3's own retries pass
        # headers by position, decode_content by name
        kwargs["decode_content"] = False
        return super().urlopen(method, url, *args, **kwargs)  # type: ignore[misc]


def _bound_connections(pool_manager: Any) -> None:
    """Make every connection ``pool_manager`` opens a bounded one (plain, TLS, proxied),
    over a pool that asks for unencoded answers."""
    bounded = {}
    for scheme, pool_class in pool_manager.pool_classes_by_scheme.items():
        connection = pool_class.ConnectionCls
        mixed = type(f"Bounded{connection.__name__}", (_BoundedConnection, connection), {})
        bounded[scheme] = type(
            f"Bounded{pool_class.__name__}", (_UnencodedPool, pool_class), {"ConnectionCls": mixed}
        )
    pool_manager.pool_classes_by_scheme = bounded


def _bound_depth(api: Any) -> None:
    """Make ``api`` refuse an answer that nests deeper than ``host_json.MAX_DEPTH`` before
    it parses it: the client's ``deserialize`` calls ``json.loads`` on the whole body, and
    2 KB of ``[[[[...]]]]`` raised ``RecursionError`` out of every call of the cluster. The
    refusal is the call's ``KubeBoundError`` (bound ``depth``)."""
    parse = api.deserialize

    def deserialize(response_text: Any, response_type: Any, content_type: Any) -> Any:
        if isinstance(response_text, str):
            found = host_json.depth(response_text)
            if found > host_json.MAX_DEPTH:
                budget: _Budget | None = getattr(_current, "budget", None)
                context, call = (budget.context, budget.call) if budget else ("", "the call")
                deep = host_json.TooDeep(found, host_json.MAX_DEPTH)
                raise KubeBoundError(context, f"{call}: {deep}", bound="depth")
        return parse(response_text, response_type, content_type)

    api.deserialize = deserialize


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):g} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def _kube_client() -> Any:
    """The ``kubernetes.client`` module, or a ``MissingExtraError`` naming the extra that
    brings it when it is not installed (every call reaches the client through here)."""
    try:
        from kubernetes import client
    except ImportError as exc:
        raise MissingExtraError("a Kubernetes site", "kubernetes", "kubernetes") from exc
    return client


def _name_of(body: KubeObject) -> str:
    try:
        return str(body["metadata"]["name"])
    except (KeyError, TypeError) as exc:
        raise ValueError("a Kubernetes object needs metadata.name") from exc


def _same(existing: KubeObject, desired: KubeObject, fields: tuple[str, ...]) -> bool:
    """Whether ``existing`` already has ``desired``'s fields, labels and annotations."""
    for name in fields:
        if existing.get(name) != desired.get(name):
            return False
    have = existing.get("metadata") or {}
    want = desired.get("metadata") or {}
    for name in ("labels", "annotations"):
        wanted = want.get(name) or {}
        present = have.get(name) or {}
        if any(present.get(key) != value for key, value in wanted.items()):
            return False
    return True


def _with_version(desired: KubeObject, existing: KubeObject) -> KubeObject:
    """``desired`` carrying ``existing``'s resourceVersion, as a replace requires."""
    metadata = dict(desired.get("metadata") or {})
    version = (existing.get("metadata") or {}).get("resourceVersion")
    if version:
        metadata["resourceVersion"] = version
    return {**desired, "metadata": metadata}


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if body:
        try:
            parsed = host_json.loads(body)
        except (TypeError, ValueError):
            return str(body)[:300]
        if isinstance(parsed, dict) and parsed.get("message"):
            return str(parsed["message"])
    return str(getattr(exc, "reason", "") or "no detail")


def _reason(exc: BaseException) -> str:
    """The innermost cause of a urllib3 error, without its long wrapper text."""
    inner: object = exc
    while isinstance(getattr(inner, "reason", None), BaseException):
        inner = getattr(inner, "reason")  # noqa: B009
    text = str(inner)
    if "Connection refused" in text:
        return "connection refused"
    if "timed out" in text.lower():
        return "timed out"
    return text
