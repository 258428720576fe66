"""The router's Deployment and ReplicaSet, made as a cluster's controllers make them, so the
router pod carries the owner chain a real one does: Site -> Deployment ``skupper-router`` ->
ReplicaSet ``skupper-router-<pod-template-hash>`` -> Pod.

- The Site's reference on the Deployment is Skupper's own: no ``controller`` and no
  ``blockOwnerDeletion`` (``site_owner_ref``); the cluster's controllers make the two below.

- A controller reference is ``apiVersion``, ``kind``, ``name``, ``uid``, ``controller: true``
  and ``blockOwnerDeletion: true``
  (``metav1.NewControllerRef``, staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/controller_ref.go).
- The Deployment controller names the ReplicaSet ``<deployment>-<pod-template-hash>``, adds
  the ``pod-template-hash`` label to its template and selector, and makes the Deployment its
  controller (``getNewReplicaSet``, pkg/controller/deployment/sync.go).
- The ReplicaSet controller creates each pod from the template with the ReplicaSet as its
  controller and ``generateName`` ``<replicaset>-`` (``manageReplicas``,
  pkg/controller/replicaset/replica_set.go; ``GetPodFromTemplate``,
  pkg/controller/controller_utils.go).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

Obj = dict[str, Any]

ROUTER_DEPLOYMENT = "skupper-router"
APPS_V1 = "apps/v1"
SKUPPER_V2 = "skupper.io/v2alpha1"
TEMPLATE_HASH_LABEL = "pod-template-hash"
#: The characters Kubernetes keeps in generated names (``rand.SafeEncodeString``).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def controller_ref(owner: Obj, kind: str, api_version: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def site_owner_ref(site: Obj) -> Obj:
    """The reference Skupper's kube site puts on what it makes, the router Deployment
    included: ``kind``, ``apiVersion``, ``name``, ``uid`` and nothing else (no ``controller``,
    no ``blockOwnerDeletion``: internal/kube/site/site.go@2.1.3:655-664 ``ownerReferences``)."""
    return {
        "apiVersion": SKUPPER_V2,
        "kind": "Site",
        "name": site["metadata"]["name"],
        "uid": site["metadata"]["uid"],
    }


def owner_uids(obj: Obj) -> set[str]:
    """The uids of every owner of ``obj``, controller or not."""
    return {str(ref.get("uid")) for ref in obj["metadata"].get("ownerReferences") or []}


def controller_uid(obj: Obj) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") is True:
            return str(ref.get("uid"))
    return None


def deployment_body(site: Obj, labels: dict[str, str]) -> Obj:
    """The router Deployment of ``site``, owned by it."""
    return {
        "metadata": {
            "name": ROUTER_DEPLOYMENT,
            "labels": dict(labels),
            "ownerReferences": [site_owner_ref(site)],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"skupper.io/component": "router"}},
            "template": {"metadata": {"labels": dict(labels)}},
        },
    }


def replica_set_body(deployment: Obj) -> Obj:
    """The ReplicaSet the Deployment controller makes for the Deployment's template."""
    spec = deployment["spec"]
    template_hash = _template_hash(spec["template"])
    labels = {**spec["template"]["metadata"]["labels"], TEMPLATE_HASH_LABEL: template_hash}
    selector = {**spec["selector"]["matchLabels"], TEMPLATE_HASH_LABEL: template_hash}
    return {
        "metadata": {
            "name": f"{deployment['metadata']['name']}-{template_hash}",
            "labels": labels,
            "ownerReferences": [controller_ref(deployment, "Deployment", APPS_V1)],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": labels}},
        },
    }


def pod_metadata(replica_set: Obj) -> Obj:
    """What a pod made by ``replica_set`` takes from it: labels, generateName, controller."""
    return {
        "generateName": f"{replica_set['metadata']['name']}-",
        "labels": dict(replica_set["spec"]["template"]["metadata"]["labels"]),
        "ownerReferences": [controller_ref(replica_set, "ReplicaSet", APPS_V1)],
    }


def _template_hash(template: Obj) -> str:
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])
