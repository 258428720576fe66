"""The Kubernetes API on HTTPS: discovery, bearer-token auth, the ``unauthenticated`` and
``down`` faults, and the REST paths of the served resources mapped onto the store."""

from __future__ import annotations

import hmac
import json
import logging
import ssl
from pathlib import Path
from typing import Any

from skupper_sandbox.kube import resources
from skupper_sandbox.kube.httpserver import HttpServer, Request, Response
from skupper_sandbox.kube.kubeconfig import ApiCredentials
from skupper_sandbox.kube.podlog import pod_log
from skupper_sandbox.kube.resources import Resource
from skupper_sandbox.kube.store import ApiError, Store

log = logging.getLogger(__name__)

FAULT_MODES = (None, "unauthenticated", "down")
KUBERNETES_VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.6",
    "gitCommit": "sandbox",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.22.12",
    "compiler": "gc",
    "platform": "linux/amd64",
}
# Objects whose DELETE answers the object rather than a Status (graceful deletion, CRs).
_DELETE_RETURNS_OBJECT = {resources.PODS, *(r for r in resources.ALL if r.group)}


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def read_fault(kube_dir: Path) -> str | None:
    """The fault in ``kube_dir/fault.json`` (``{"mode": ...}``); none when absent."""
    path = kube_dir / "fault.json"
    try:
        mode = json.loads(path.read_text()).get("mode")
    except (FileNotFoundError, ValueError, AttributeError):
        return None
    if mode not in FAULT_MODES:
        log.warning("ignoring unknown fault mode %r in %s", mode, path)
        return None
    return str(mode) if mode else None


def _resource_list(group: str, version: str, among: tuple[Resource, ...]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [
            {
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": [
                    "create",
                    "delete",
                    "deletecollection",
                    "get",
                    "list",
                    "patch",
                    "update",
                ],
                **({"shortNames": list(r.short_names)} if r.short_names else {}),
            }
            for r in resources.in_group(group, version, among)
        ]
        + [
            {
                "name": f"{r.plural}/status",
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "patch", "update"],
            }
            for r in resources.in_group(group, version, among)
            if r.has_status
        ],
    }


def _group(name: str, version: str) -> dict[str, Any]:
    entry = {"groupVersion": f"{name}/{version}", "version": version}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": [entry],
        "preferredVersion": entry,
    }


_GROUPS = {"apps": "v1", resources.SKUPPER_GROUP: resources.SKUPPER_VERSION}


class KubeApi:
    """The API's request handling and its listening state."""

    def __init__(
        self,
        store: Store,
        credentials: ApiCredentials,
        address: str,
        port: int,
        pods_dir: Path,
        served: tuple[Resource, ...] = resources.ALL,
    ) -> None:
        self.store = store
        self.served = served
        self._pods_dir = pods_dir
        self._token = credentials.token.encode()
        self._address = address
        self._port = port
        self.fault: str | None = None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(credentials.server_cert, credentials.server_key)
        self._http = HttpServer(self.handle, address, port, context)

    @property
    def listening(self) -> bool:
        return self._http.listening

    async def apply_fault(self, mode: str | None) -> None:
        """Put a fault in force (or none): ``down`` closes the port and every connection."""
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        self.fault = mode
        if mode == "down":
            await self._http.stop()
        else:
            await self._http.start()
        log.info("fault mode: %s", mode or "none")

    async def stop(self) -> None:
        await self._http.stop()

    def _authenticated(self, request: Request) -> bool:
        if self.fault == "unauthenticated":
            return False
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), self._token
        )

    async def handle(self, request: Request) -> Response:
        """Answer one request; API errors become Status objects."""
        try:
            if not self._authenticated(request):
                raise unauthorized()
            answer = self._route(request)
            return answer if isinstance(answer, Response) else Response(*answer)
        except ApiError as error:
            return Response(error.code, error.status())

    def _route(self, request: Request) -> tuple[int, Any] | Response:
        parts = [p for p in request.path.split("/") if p]
        if parts == ["version"]:
            return 200, KUBERNETES_VERSION
        if parts == ["api"]:
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self._address}:{self._port}"}
                ],
            }
        if parts == ["apis"]:
            groups = [_group(name, version) for name, version in _GROUPS.items()]
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in _GROUPS:
            return 200, _group(parts[1], _GROUPS[parts[1]])
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            if not resources.in_group(group, version, self.served):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return 200, _resource_list(group, version, self.served)
        return self._resource_call(request, group, version, rest)

    def _resource_call(
        self, request: Request, group: str, version: str, rest: list[str]
    ) -> tuple[int, Any] | Response:
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        resource = resources.lookup(group, version, rest[0], self.served)
        if resource is None or len(rest) > 3 or (namespace is not None and not resource.namespaced):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) >= 2 else None
        subresource = rest[2] if len(rest) == 3 else None
        if resource is resources.PODS and subresource == "log" and name and namespace:
            if request.method != "GET":
                allowed = f"the server does not allow {request.method} here"
                raise ApiError(405, "MethodNotAllowed", allowed)
            return pod_log(self.store, self._pods_dir, request, namespace, name)
        if subresource not in (None, "status") or (subresource and not resource.has_status):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if name is not None and resource.namespaced and namespace is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return self._dispatch(request, resource, namespace, name, subresource == "status")

    def _dispatch(
        self,
        request: Request,
        resource: Resource,
        namespace: str | None,
        name: str | None,
        status: bool,
    ) -> tuple[int, Any]:
        method, query, store = request.method, request.query, self.store
        labels, fields = query.get("labelSelector"), query.get("fieldSelector")
        if method == "GET" and query.get("watch") in ("true", "1"):
            raise ApiError(405, "MethodNotAllowed", "watch is not supported by the sandbox API")
        if name is None:
            if method == "GET":
                found = store.list(resource, namespace, labels, fields)
                return 200, as_requested(found, request.headers.get("accept", ""))
            if method == "POST":
                return 201, store.create(resource, namespace, self._body(request))
            if method == "DELETE":
                return 200, store.delete_collection(resource, namespace, labels, fields)
        else:
            if method == "GET":
                return 200, store.get(resource, namespace, name)
            if method == "PUT":
                return 200, store.replace(
                    resource, namespace, name, self._body(request), status=status
                )
            if method == "PATCH":
                content_type = request.headers.get("content-type", "")
                return 200, store.patch(
                    resource, namespace, name, self._body(request), content_type, status=status
                )
            if method == "DELETE" and not status:
                deleted = store.delete(resource, namespace, name)
                if resource in _DELETE_RETURNS_OBJECT:
                    return 200, deleted
                return 200, {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": {
                        "name": name,
                        "group": resource.group,
                        "kind": resource.plural,
                        "uid": deleted["metadata"].get("uid"),
                    },
                }
        raise ApiError(405, "MethodNotAllowed", f"the server does not allow {method} here")

    @staticmethod
    def _body(request: Request) -> Any:
        try:
            return request.json()
        except ValueError as error:
            raise ApiError(400, "BadRequest", f"the body is not valid JSON: {error}") from error


#: What a client asks with ``Accept: application/json;as=PartialObjectMetadataList;g=...;v=...``
#: to get a list's metadata only (the objects' other fields, a Secret's data included, are
#: never sent): k8s.io/apiserver pkg/endpoints/handlers/response.go asPartialObjectMetadataList.
METADATA_GROUP_VERSIONS = {"v1", "v1beta1"}


def as_requested(found: dict[str, Any], accept: str) -> dict[str, Any]:
    """A list as the Accept header asks: whole, or as a PartialObjectMetadataList. Another
    ``as=`` the sandbox does not serve is 406, as the real server answers a kind it lacks."""
    params = _media_params(accept)
    if "as" not in params:
        return found
    version = params.get("v", "")
    if (
        params["as"] != "PartialObjectMetadataList"
        or params.get("g") != "meta.k8s.io"
        or version not in METADATA_GROUP_VERSIONS
    ):
        raise ApiError(406, "NotAcceptable", f"the sandbox API cannot serve {accept!r}")
    api_version = f"meta.k8s.io/{version}"
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": api_version,
        "metadata": found.get("metadata", {}),
        "items": [
            {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": i["metadata"]}
            for i in found.get("items", [])
        ],
    }


def _media_params(accept: str) -> dict[str, str]:
    """The parameters of the first media type of an Accept header that has ``as=``."""
    for media in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in media.split(";")[1:] if "=" in p)
        if "as" in params:
            return params
    return {}
