"""The API server's object store: namespaced objects with the bookkeeping the real API
server does (uid, resourceVersion, generation, creationTimestamp), validation of what the
product sends, selectors, patches and the status subresource.

Every operation is synchronous and runs on the server's event loop, so nothing here locks.
Objects go in and come out as deep copies; the store is saved to a JSON file on change so
a restarted API keeps its cluster's objects, as etcd would.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime as dt
import itertools
import json
import os
import re
import secrets as pysecrets
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skupper_sandbox.kube import resources
from skupper_sandbox.kube.patches import PatchError, json_patch, merge_patch
from skupper_sandbox.kube.resources import Resource
from skupper_sandbox.kube.selectors import (
    KIND_FIELDS,
    SelectorError,
    field_selector,
    label_selector,
)

Obj = dict[str, Any]
ChangeListener = Callable[[Resource, str, Obj], None]

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public")

MERGE_PATCH_TYPES = frozenset(
    {"application/merge-patch+json", "application/strategic-merge-patch+json"}
)
JSON_PATCH_TYPE = "application/json-patch+json"


class ApiError(Exception):
    """A failed API call, rendered as a Kubernetes Status object."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> Obj:
        body: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def not_found(resource: Resource, name: str) -> ApiError:
    what = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
    return ApiError(
        404,
        "NotFound",
        f'{what} "{name}" not found',
        {"name": name, "group": resource.group, "kind": resource.plural},
    )


def invalid(resource: Resource, name: str, cause: str) -> ApiError:
    """422 Invalid; the kind qualified by its group outside the core one, as the API server
    names it (``MultiKeyListener.skupper.io "x" is invalid: ...``)."""
    kind = f"{resource.kind}.{resource.group}" if resource.group else resource.kind
    return ApiError(
        422,
        "Invalid",
        f'{kind} "{name}" is invalid: {cause}',
        {"name": name, "group": resource.group, "kind": resource.kind},
    )


def now() -> str:
    """A timestamp in the API's format (RFC 3339, seconds, UTC)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec_part(obj: Obj) -> Obj:
    """What counts for generation: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


class Store:
    """All objects of one sandbox cluster."""

    def __init__(self, state_file: Path | None = None) -> None:
        self._state_file = state_file
        self._objects: dict[tuple[str, str], dict[str, Obj]] = {}
        self._version = itertools.count(1)
        self._last_version = 0
        self._listeners: list[ChangeListener] = []
        if state_file is not None and state_file.exists():
            self._load(state_file)
        for name in INITIAL_NAMESPACES:
            if name not in self._bucket(resources.NAMESPACES, ""):
                self.create(resources.NAMESPACES, None, {"metadata": {"name": name}})

    # -- listeners and persistence -------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> None:
        """Call ``listener(resource, event, object)`` after every change (ADDED, MODIFIED,
        DELETED)."""
        self._listeners.append(listener)

    def _changed(self, resource: Resource, event: str, obj: Obj) -> None:
        self._save()
        for listener in self._listeners:
            listener(resource, event, copy.deepcopy(obj))

    def _load(self, path: Path) -> None:
        data = json.loads(path.read_text())
        for entry in data.get("objects", []):
            resource = resources.lookup(entry["group"], entry["version"], entry["plural"])
            if resource is not None:
                obj = entry["object"]
                self._bucket(resource, obj["metadata"].get("namespace", ""))[
                    obj["metadata"]["name"]
                ] = obj
        self._last_version = int(data.get("resourceVersion", 0))
        self._version = itertools.count(self._last_version + 1)

    def _save(self) -> None:
        if self._state_file is None:
            return
        entries: list[Obj] = []
        for (key, _ns), bucket in self._objects.items():
            group, version, plural = key.split("|")
            entries.extend(
                {"group": group, "version": version, "plural": plural, "object": obj}
                for obj in bucket.values()
            )
        temporary = self._state_file.with_suffix(".tmp")
        temporary.write_text(
            json.dumps({"resourceVersion": self._last_version, "objects": entries})
        )
        os.replace(temporary, self._state_file)

    # -- lookup --------------------------------------------------------------------

    def _bucket(self, resource: Resource, namespace: str) -> dict[str, Obj]:
        key = _key(resource)
        return self._objects.setdefault((key, namespace if resource.namespaced else ""), {})

    def _next_version(self) -> str:
        self._last_version = next(self._version)
        return str(self._last_version)

    def _require_namespace(self, resource: Resource, namespace: str | None) -> str:
        if not resource.namespaced:
            return ""
        if not namespace:
            raise ApiError(400, "BadRequest", "a namespace is required")
        if namespace not in self._bucket(resources.NAMESPACES, ""):
            raise not_found(resources.NAMESPACES, namespace)
        return namespace

    def _existing(self, resource: Resource, namespace: str | None, name: str) -> Obj:
        bucket = self._bucket(resource, self._require_namespace(resource, namespace))
        if name not in bucket:
            raise not_found(resource, name)
        return bucket[name]

    def get(self, resource: Resource, namespace: str | None, name: str) -> Obj:
        """One object (404 NotFound when absent)."""
        return copy.deepcopy(self._existing(resource, namespace, name))

    def items(
        self,
        resource: Resource,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> list[Obj]:
        """Objects of one type, in one namespace or all, that match the selectors."""
        try:
            label_match = label_selector(labels)
            field_match = field_selector(fields, KIND_FIELDS.get(resource.kind, frozenset()))
        except SelectorError as error:
            raise ApiError(400, "BadRequest", str(error)) from error
        if namespace and resource.namespaced:
            # As the real API server: listing in a namespace that does not exist is an
            # empty list, not an error (get, create and delete there are 404).
            buckets = [self._objects.get((_key(resource), namespace), {})]
        else:
            buckets = [b for (k, _), b in sorted(self._objects.items()) if k == _key(resource)]
        found = [
            copy.deepcopy(obj)
            for bucket in buckets
            for _, obj in sorted(bucket.items())
            if label_match(obj["metadata"].get("labels") or {}) and field_match(obj)
        ]
        return found

    def list(
        self,
        resource: Resource,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Obj:
        """The ``<Kind>List`` the API answers to a list call."""
        return {
            "kind": f"{resource.kind}List",
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(self._last_version)},
            "items": self.items(resource, namespace, labels, fields),
        }

    # -- changes -------------------------------------------------------------------

    def _check_body(self, resource: Resource, body: Any, name: str) -> Obj:
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body must be a JSON object")
        for field, expected in (("kind", resource.kind), ("apiVersion", resource.api_version)):
            if body.get(field) not in (None, expected):
                raise ApiError(
                    400,
                    "BadRequest",
                    f"the {field} {body.get(field)!r} does not match the expected {expected!r}",
                )
        if not isinstance(body.get("metadata", {}), dict):
            raise invalid(resource, name, "metadata: must be an object")
        obj = copy.deepcopy(body)
        obj["kind"], obj["apiVersion"] = resource.kind, resource.api_version
        obj.setdefault("metadata", {})
        return obj

    def _validate(self, resource: Resource, obj: Obj) -> None:
        name = obj["metadata"].get("name") or ""
        pattern = _DNS_LABEL if resource in (resources.NAMESPACES, resources.SERVICES) else None
        if not (pattern or _DNS_SUBDOMAIN).match(name) or len(name) > 253:
            raise invalid(
                resource, name, f"metadata.name: Invalid value: {name!r}: must be a DNS name"
            )
        for field in ("labels", "annotations"):
            values = obj["metadata"].get(field)
            if values is not None and (
                not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values())
            ):
                raise invalid(resource, name, f"metadata.{field}: values must be strings")
        if resource is resources.SECRETS:
            self._normalise_secret(obj)
        if resource is resources.MULTI_KEY_LISTENERS:
            _check_multi_key_listener(obj, None)

    def _normalise_secret(self, obj: Obj) -> None:
        """Fold stringData into data and check the type's required keys, as the API does."""
        name = obj["metadata"]["name"]
        data = obj.get("data") or {}
        string_data = obj.pop("stringData", None) or {}
        if not isinstance(data, dict) or not isinstance(string_data, dict):
            raise invalid(resources.SECRETS, name, "data: must be a map of strings")
        for key, value in data.items():
            if not _SECRET_KEY.match(key):
                raise invalid(resources.SECRETS, name, f"data[{key}]: Invalid key")
            try:
                base64.b64decode(str(value), validate=True)
            except (binascii.Error, ValueError) as error:
                raise invalid(
                    resources.SECRETS, name, f"data[{key}]: illegal base64 data"
                ) from error
        for key, value in string_data.items():
            if not _SECRET_KEY.match(key):
                raise invalid(resources.SECRETS, name, f"stringData[{key}]: Invalid key")
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data
        obj["type"] = obj.get("type") or "Opaque"
        if obj["type"] == "kubernetes.io/tls":
            for key in ("tls.crt", "tls.key"):
                if key not in data:
                    raise invalid(resources.SECRETS, name, f"data[{key}]: Required value")

    def create(self, resource: Resource, namespace: str | None, body: Any) -> Obj:
        """Create an object (409 AlreadyExists when the name is taken)."""
        obj = self._check_body(resource, body, "")
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + pysecrets.token_hex(3)[:5]
        ns = self._require_namespace(resource, namespace or meta.get("namespace"))
        if resource.namespaced and meta.get("namespace") not in (None, ns):
            raise ApiError(400, "BadRequest", "the namespace of the object does not match")
        self._validate(resource, obj)
        bucket = self._bucket(resource, ns)
        name = meta["name"]
        if name in bucket:
            what = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
            raise ApiError(
                409,
                "AlreadyExists",
                f'{what} "{name}" already exists',
                {"name": name, "group": resource.group, "kind": resource.plural},
            )
        if ns:
            meta["namespace"] = ns
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now()
        meta["generation"] = 1
        meta["resourceVersion"] = self._next_version()
        if resource.has_status:
            obj.pop("status", None)
        if resource is resources.NAMESPACES:
            obj["spec"] = {"finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        bucket[name] = obj
        self._changed(resource, "ADDED", obj)
        return copy.deepcopy(obj)

    def replace(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        status: bool = False,
    ) -> Obj:
        """Replace an object (PUT), or only its status with ``status=True``.

        A resourceVersion in the body must match the stored one (409 Conflict).
        """
        current = self._existing(resource, namespace, name)
        obj = self._check_body(resource, body, name)
        if obj["metadata"].get("name") not in (None, name):
            raise ApiError(400, "BadRequest", "the name of the object does not match the URL")
        wanted_version = obj["metadata"].get("resourceVersion")
        if wanted_version and wanted_version != current["metadata"]["resourceVersion"]:
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {resource.plural} "{name}": the object has '
                "been modified; please apply your changes to the latest version and try again",
                {"name": name, "group": resource.group, "kind": resource.plural},
            )
        return self._store_update(resource, current, obj, status=status)

    def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str,
        *,
        status: bool = False,
    ) -> Obj:
        """Patch an object with a merge patch (strategic merge is treated as merge) or a
        JSON patch."""
        current = self._existing(resource, namespace, name)
        media_type = content_type.split(";")[0].strip().lower()
        try:
            if media_type in MERGE_PATCH_TYPES:
                patched = merge_patch(current, patch)
            elif media_type == JSON_PATCH_TYPE:
                patched = json_patch(current, patch)
            else:
                raise ApiError(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types "
                    f"include: {JSON_PATCH_TYPE}, application/merge-patch+json, "
                    "application/strategic-merge-patch+json",
                )
        except PatchError as error:
            raise invalid(resource, name, str(error)) from error
        if not isinstance(patched, dict):
            raise invalid(resource, name, "the patched object is not an object")
        patched.setdefault("metadata", {})
        patched["metadata"].pop("resourceVersion", None)
        return self._store_update(resource, current, patched, status=status)

    def _store_update(self, resource: Resource, current: Obj, obj: Obj, *, status: bool) -> Obj:
        meta = obj["metadata"]
        for field in ("name", "namespace", "uid", "creationTimestamp", "generation"):
            if field in current["metadata"]:
                meta[field] = current["metadata"][field]
            else:
                meta.pop(field, None)
        obj["kind"], obj["apiVersion"] = resource.kind, resource.api_version
        if status:
            # The status subresource changes only the status.
            updated = copy.deepcopy(current)
            if "status" in obj:
                updated["status"] = obj["status"]
            else:
                updated.pop("status", None)
            obj = updated
        elif resource.has_status:
            obj.pop("status", None)
            if "status" in current:
                obj["status"] = copy.deepcopy(current["status"])
        self._validate(resource, obj)
        if resource is resources.MULTI_KEY_LISTENERS:
            _check_multi_key_listener(obj, current)
        if resource is resources.SECRETS and obj["type"] != current.get("type", "Opaque"):
            # ValidateSecretUpdate: a Secret's type is immutable (delete and create it anew).
            raise invalid(
                resource,
                meta["name"],
                f'type: Invalid value: "{obj["type"]}": field is immutable',
            )
        obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        if obj == current:
            return copy.deepcopy(current)
        if _spec_part(obj) != _spec_part(current):
            obj["metadata"]["generation"] = int(current["metadata"].get("generation", 1)) + 1
        obj["metadata"]["resourceVersion"] = self._next_version()
        self._bucket(resource, obj["metadata"].get("namespace", ""))[meta["name"]] = obj
        self._changed(resource, "MODIFIED", obj)
        return copy.deepcopy(obj)

    def delete(self, resource: Resource, namespace: str | None, name: str) -> Obj:
        """Delete an object (404 NotFound when absent) and return it. Deleting a namespace
        deletes everything in it."""
        current = self._existing(resource, namespace, name)
        if resource is resources.NAMESPACES:
            for other in resources.ALL:
                if other.namespaced:
                    for child in list(self._bucket(other, name)):
                        self.delete(other, name, child)
        del self._bucket(resource, current["metadata"].get("namespace", ""))[name]
        self._last_version = next(self._version)
        self._changed(resource, "DELETED", current)
        return copy.deepcopy(current)

    def delete_collection(
        self, resource: Resource, namespace: str | None, labels: str | None, fields: str | None
    ) -> Obj:
        """Delete every matching object; answers the list of what was deleted."""
        gone = [
            self.delete(resource, obj["metadata"].get("namespace"), obj["metadata"]["name"])
            for obj in self.items(resource, namespace, labels, fields)
        ]
        listing = self.list(resource, namespace, labels, fields)
        listing["items"] = gone
        return listing


def _check_multi_key_listener(obj: Obj, old: Obj | None) -> None:
    """The CRD's schema and CEL rules (config/crd/bases/skupper_multikeylistener_crd.yaml
    @2.2.0): host, port and strategy required; exactly one of priority and weighted; and on
    update the strategy's kind is immutable (a priority one never becomes weighted)."""
    name = obj["metadata"].get("name") or ""
    kind = resources.MULTI_KEY_LISTENERS
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise invalid(kind, name, "spec: Required value")
    for field in ("host", "port", "strategy"):
        if spec.get(field) in (None, ""):
            raise invalid(kind, name, f"spec.{field}: Required value")
    strategy = spec["strategy"]
    if not isinstance(strategy, dict) or ("priority" in strategy) == ("weighted" in strategy):
        raise invalid(
            kind,
            name,
            'spec.strategy: Invalid value: "object": exactly one of the fields in '
            "[priority weighted] must be set",
        )
    before = ((old or {}).get("spec") or {}).get("strategy") or {}
    if any(k in before and k not in strategy for k in ("priority", "weighted")):
        raise invalid(kind, name, 'spec.strategy: Invalid value: "object": strategy is immutable')


def _key(resource: Resource) -> str:
    return f"{resource.group}|{resource.version}|{resource.plural}"
