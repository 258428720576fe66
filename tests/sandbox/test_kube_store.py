"""The sandbox Kubernetes API's pure parts: selectors, patches, the store, router config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skupper_sandbox.kube import resources
from skupper_sandbox.kube.patches import PatchError, json_patch, merge_patch
from skupper_sandbox.kube.routerconfig import NOT_MOUNTED, render
from skupper_sandbox.kube.selectors import SelectorError, field_selector, label_selector
from skupper_sandbox.kube.store import ApiError, Store


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=1", {"a": "1"}, True),
        ("a==1", {"a": "2"}, False),
        ("a!=1", {}, True),
        ("a in (1, 2),b", {"a": "2", "b": ""}, True),
        ("a notin (1,2)", {"a": "1"}, False),
        ("!a", {"a": "1"}, False),
        ("skupper.io/component=router", {"skupper.io/component": "router"}, True),
        ("", {}, True),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert label_selector(selector)(labels) is expected


def test_bad_selectors_are_errors() -> None:
    with pytest.raises(SelectorError):
        label_selector("a in 1")
    with pytest.raises(SelectorError):
        field_selector("spec.port=1")
    assert field_selector("metadata.name!=x")({"metadata": {"name": "y"}})


def test_merge_patch_deletes_nulls_and_replaces_lists() -> None:
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2]}
    assert merge_patch(target, {"a": {"b": None, "d": 3}, "l": [3]}) == {
        "a": {"c": 2, "d": 3},
        "l": [3],
    }
    assert target == {"a": {"b": 1, "c": 2}, "l": [1, 2]}


def test_json_patch_operations() -> None:
    doc = {"spec": {"endpoints": [{"port": "1"}]}}
    patched = json_patch(
        doc,
        [
            {"op": "add", "path": "/spec/endpoints/-", "value": {"port": "2"}},
            {"op": "replace", "path": "/spec/endpoints/0/port", "value": "9"},
            {"op": "copy", "from": "/spec/endpoints/1", "path": "/spec/first"},
            {"op": "remove", "path": "/spec/endpoints/1"},
            {"op": "test", "path": "/spec/first/port", "value": "2"},
        ],
    )
    assert patched == {"spec": {"endpoints": [{"port": "9"}], "first": {"port": "2"}}}
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "test", "path": "/spec", "value": 1}])
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "remove", "path": "/nope"}])


def test_store_versions_generations_and_persistence(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    store = Store(state)
    body = {"metadata": {"name": "s"}, "spec": {"linkAccess": "none"}}
    created = store.create(resources.SITES, "default", body)
    patched = store.patch(
        resources.SITES,
        "default",
        "s",
        {"metadata": {"labels": {"x": "y"}}},
        "application/merge-patch+json",
    )
    assert patched["metadata"]["generation"] == 1
    assert int(patched["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    spec_change = store.patch(
        resources.SITES, "default", "s", {"spec": {"edge": True}}, "application/merge-patch+json"
    )
    assert spec_change["metadata"]["generation"] == 2
    with pytest.raises(ApiError) as stale:
        store.replace(resources.SITES, "default", "s", {**created, "spec": {}})
    assert stale.value.code == 409 and stale.value.reason == "Conflict"

    reloaded = Store(state)
    assert reloaded.get(resources.SITES, "default", "s") == spec_change
    assert json.loads(state.read_text())["resourceVersion"] >= 4


def test_deleting_a_namespace_deletes_its_objects() -> None:
    store = Store()
    store.create(resources.NAMESPACES, None, {"metadata": {"name": "ns1"}})
    store.create(resources.CONFIGMAPS, "ns1", {"metadata": {"name": "c"}, "data": {}})
    store.delete(resources.NAMESPACES, None, "ns1")
    with pytest.raises(ApiError) as gone:
        store.get(resources.CONFIGMAPS, "ns1", "c")
    assert gone.value.code == 404
    assert store.items(resources.CONFIGMAPS, "ns1") == []  # a list there is empty, as in k8s
    assert store.items(resources.CONFIGMAPS) == []


def test_invalid_names_and_secret_data_are_422() -> None:
    store = Store()
    for body in (
        {"metadata": {"name": "Bad_Name"}},
        {"metadata": {"name": "s"}, "data": {"k": "not base64!"}},
    ):
        with pytest.raises(ApiError) as invalid:
            store.create(resources.SECRETS, "default", body)
        assert invalid.value.code == 422


def test_a_secrets_type_is_immutable_by_replace_and_by_patch() -> None:
    store = Store()
    tls: dict[str, Any] = {
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Yw==", "tls.key": "aw=="},
    }
    created = store.create(resources.SECRETS, "default", {"metadata": {"name": "s"}, **tls})
    opaque = {"metadata": {"name": "s"}, "type": "Opaque", "data": created["data"]}
    untyped = {"metadata": {"name": "s"}, "data": created["data"]}  # defaults to Opaque
    for change in (
        lambda: store.replace(resources.SECRETS, "default", "s", opaque),
        lambda: store.replace(resources.SECRETS, "default", "s", untyped),
        lambda: store.patch(
            resources.SECRETS, "default", "s", {"type": "Opaque"}, "application/merge-patch+json"
        ),
    ):
        with pytest.raises(ApiError) as refused:
            change()
        assert refused.value.code == 422
        assert refused.value.message == (
            'Secret "s" is invalid: type: Invalid value: "Opaque": field is immutable'
        )
    assert store.get(resources.SECRETS, "default", "s")["type"] == "kubernetes.io/tls"
    data = {"metadata": {"name": "s"}, **tls, "data": {**tls["data"], "ca.crt": "Yw=="}}
    assert "ca.crt" in store.replace(resources.SECRETS, "default", "s", data)["data"]
    store.delete(resources.SECRETS, "default", "s")
    assert store.create(resources.SECRETS, "default", opaque)["type"] == "Opaque"


def _obj(kind: str, name: str, spec: dict[str, object], uid: str = "u") -> dict[str, object]:
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": spec}


def test_router_config_from_links_and_listeners() -> None:
    endpoints = [
        {"name": "edge", "host": "h", "port": "45671"},
        {"name": "inter-router", "host": "h", "port": "8000"},
    ]
    rendered = render(
        site=_obj("Site", "crc", {}),
        pod_name="skupper-router-abcde",
        links=[
            _obj("Link", "to-hub", {"tlsCredentials": "hub", "endpoints": endpoints, "cost": 0}),
            _obj("Link", "late", {"tlsCredentials": "late", "endpoints": endpoints}),
        ],
        listeners=[_obj("Listener", "l", {"routingKey": "k", "host": "svc", "port": 8000})],
        connectors=[],
        mounted={"hub"},
        secret_types={"hub": "kubernetes.io/tls", "late": "kubernetes.io/tls"},
        version="2.2.1",
        multi_key_listeners=[
            _obj(
                "MultiKeyListener",
                "pool",
                {
                    "host": "pool",
                    "port": 8100,
                    "strategy": {"priority": {"routingKeys": ["a", "b"]}},
                },
            )
        ],
    )
    by_type: dict[str, list[dict[str, object]]] = {}
    for kind, attrs in rendered.entities:
        by_type.setdefault(kind, []).append(attrs)
    assert by_type["connector"] == [
        {
            "name": "to-hub",
            "role": "inter-router",
            "host": "h",
            "port": "8000",
            "sslProfile": "hub-profile",
            "cost": 1,
        }
    ]
    assert by_type["sslProfile"][0]["caCertFile"] == "${SSL_PROFILE_BASE_PATH}/hub-profile/ca.crt"
    assert by_type["tcpListener"] == [
        {"name": "l", "host": "0.0.0.0", "port": "8000", "address": "k"},
        {
            "name": "multiAddress/pool",
            "host": "0.0.0.0",
            "port": "8100",
            "multiAddressStrategy": "priority",
        },
    ]
    # internal/site/multikeylistener.go@2.2.0:39-50: the first key the highest value
    assert by_type["listenerAddress"] == [
        {"name": "pool/a", "address": "a", "value": 1, "listener": "multiAddress/pool"},
        {"name": "pool/b", "address": "b", "value": 0, "listener": "multiAddress/pool"},
    ]
    assert by_type["listener"][0]["port"] == 5671
    assert rendered.link_problems["late"].message == NOT_MOUNTED
