"""Custom resources as YAML files: ``<Kind>-<name>.yaml`` in input/ and runtime/ resources."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .failure import CliFailure

API_VERSION = "skupper.io/v2alpha1"

APPLY_KINDS = (
    "Site",
    "Listener",
    "Connector",
    "MultiKeyListener",
    "Link",
    "RouterAccess",
    "AccessToken",
    "Secret",
    "SecuredAccess",
    "Certificate",
)

Resource = dict[str, Any]

#: libyaml's loader and emitter where PyYAML was built with it: the same documents and the
#: same text as the pure-Python ones (tests/sandbox/test_resources_yaml.py) for a sixth to a
#: ninth of the CPU. The controller and every render read and write a namespace's every
#: resource file, which the real ones do in Go.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def file_name(resource: Resource) -> str:
    """The file a resource is stored in: ``<Kind>-<name>.yaml``."""
    return f"{resource['kind']}-{resource['metadata']['name']}.yaml"


def parse_documents(text: str, source: str) -> list[Resource]:
    """Every non-empty document of a (multi-document) YAML text; each must be a resource."""
    try:
        documents = [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]
    except yaml.YAMLError as exc:
        raise CliFailure(f"Unable to parse {source}: {exc}") from exc
    for doc in documents:
        if not isinstance(doc, dict) or not doc.get("kind"):
            raise CliFailure(f"Invalid resource in {source}: kind is missing")
        name = (doc.get("metadata") or {}).get("name")
        if not name:
            raise CliFailure(f"Invalid {doc['kind']} in {source}: metadata.name is missing")
    return documents


def dump(resource: Resource) -> str:
    return yaml.dump(resource, Dumper=_DUMPER, sort_keys=False, default_flow_style=False)


def write(directory: Path, resource: Resource, *, create: bool = True) -> Path:
    """Write a resource to its file in ``directory``, only when the content changes. Without
    ``create`` a missing directory is FileNotFoundError: a writer that only updates status
    must not bring back a directory a render removed meanwhile."""
    if create:
        directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(resource)
    text = dump(resource)
    if not path.exists() or path.read_text() != text:
        # a name of its own: the controller may write the same file as a render, and one
        # writer's rename must not take the other's half-done file (Go's os.Create never fails
        # so: site_state.go@2.1.3 marshal)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def load_dir(directory: Path) -> list[Resource]:
    """All resources stored in a directory, in file name order."""
    if not directory.is_dir():
        return []
    found: list[Resource] = []
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.suffix in {".yaml", ".yml", ".json"}:
            found.extend(parse_documents(path.read_text(), str(path)))
    return found


def of_kind(resources: Iterable[Resource], kind: str) -> list[Resource]:
    return [r for r in resources if r.get("kind") == kind]


def name_of(resource: Resource) -> str:
    return str(resource["metadata"]["name"])


def spec(resource: Resource) -> dict[str, Any]:
    value = resource.get("spec")
    return value if isinstance(value, dict) else {}


def new(kind: str, name: str, namespace: str, spec_: dict[str, Any]) -> Resource:
    """A fresh resource as the CLI's create commands write it."""
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec_,
    }


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Condition:
    """One metav1 Condition; ``ok`` is status "True"."""

    type: str
    ok: bool
    message: str = "OK"
    reason: str = ""

    def as_dict(self, stamp: str) -> dict[str, Any]:
        reason = self.reason or ("Ready" if self.ok else "Pending")
        return {
            "type": self.type,
            "status": "True" if self.ok else "False",
            "reason": reason,
            "message": self.message,
            "lastTransitionTime": stamp,
            "observedGeneration": 1,
        }


@dataclass
class Status:
    """A resource status: the Ready condition is the AND of the kind's conditions."""

    conditions: list[Condition]
    extra: dict[str, Any] = field(default_factory=dict)
    # condition types Ready needs that may not be set yet: a missing one reads
    # "Not <type>" (readyState, pkg/apis/skupper/v2alpha1/types.go@2.1.2:70-76)
    required: tuple[str, ...] = ()
    # false: no Ready condition among the conditions, only status and message (a
    # MultiKeyListener's setReady, multikeylistener_types.go@2.2.0:161-174)
    ready_condition: bool = True

    def as_dict(self, stamp: str) -> dict[str, Any]:
        found = self._as_dict(stamp)
        if not self.ready_condition:
            found["conditions"] = [c for c in found["conditions"] if c["type"] != "Ready"]
        return found

    def _as_dict(self, stamp: str) -> dict[str, Any]:
        failing = [c for c in self.conditions if not c.ok]
        present = {c.type for c in self.conditions}
        missing = [t for t in self.required if t not in present]
        if missing and not failing:
            message = f"Not {missing[0]}"
            ready = Condition("Ready", False, message, "Pending")
            return {
                "status": "Pending",
                "message": message,
                "conditions": [c.as_dict(stamp) for c in [*self.conditions, ready]],
                **self.extra,
            }
        if not failing:
            status, message = "Ready", "OK"
        else:
            first = failing[0]
            status = "Error" if first.reason == "Error" else "Pending"
            message = first.message
        ready = Condition("Ready", not failing, message, "Ready" if not failing else status)
        return {
            "status": status,
            "message": message,
            "conditions": [c.as_dict(stamp) for c in [*self.conditions, ready]],
            **self.extra,
        }


def with_status(resource: Resource, status: Status, stamp: str) -> Resource:
    """A copy of ``resource`` carrying ``status`` (spec and metadata unchanged)."""
    copy = {k: v for k, v in resource.items() if k != "status"}
    copy["status"] = status.as_dict(stamp)
    return copy


def status_stamp_free(resource: Resource) -> Resource:
    """The resource without condition timestamps: to compare content across polls."""
    copy = dict(resource)
    status = dict(copy.get("status") or {})
    status["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
    ]
    copy["status"] = status
    return copy
