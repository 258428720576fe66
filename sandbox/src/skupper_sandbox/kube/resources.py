"""The resource types the sandbox API serves: group, version, plural, kind."""

from __future__ import annotations

from dataclasses import dataclass

SKUPPER_GROUP = "skupper.io"
SKUPPER_VERSION = "v2alpha1"


@dataclass(frozen=True)
class Resource:
    """One served resource type."""

    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    has_status: bool = False
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",))
SECRETS = Resource("", "v1", "secrets", "Secret")
SERVICES = Resource("", "v1", "services", "Service", short_names=("svc",))
PODS = Resource("", "v1", "pods", "Pod", short_names=("po",))
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", short_names=("cm",))
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True, True, ("deploy",))
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True, True, ("rs",))


def _skupper(plural: str, kind: str, *short: str) -> Resource:
    return Resource(SKUPPER_GROUP, SKUPPER_VERSION, plural, kind, True, True, short)


SITES = _skupper("sites", "Site", "st")
LISTENERS = _skupper("listeners", "Listener", "lnr")
CONNECTORS = _skupper("connectors", "Connector", "cnr")
LINKS = _skupper("links", "Link", "ln")
ROUTER_ACCESSES = _skupper("routeraccesses", "RouterAccess")
ACCESS_GRANTS = _skupper("accessgrants", "AccessGrant", "grant", "gr")
ACCESS_TOKENS = _skupper("accesstokens", "AccessToken", "token", "to")
SECURED_ACCESSES = _skupper("securedaccesses", "SecuredAccess")
CERTIFICATES = _skupper("certificates", "Certificate")
#: Skupper 2.2.0 adds its CRD (config/crd/bases/skupper_multikeylistener_crd.yaml@2.2.0,
#: absent @2.1.x): a cluster of an older release has no such resource.
MULTI_KEY_LISTENERS = _skupper("multikeylisteners", "MultiKeyListener")
MULTI_KEY_LISTENER_SINCE = (2, 2)

ALL: tuple[Resource, ...] = (
    NAMESPACES,
    SECRETS,
    SERVICES,
    PODS,
    CONFIGMAPS,
    DEPLOYMENTS,
    REPLICASETS,
    SITES,
    LISTENERS,
    CONNECTORS,
    LINKS,
    ROUTER_ACCESSES,
    ACCESS_GRANTS,
    ACCESS_TOKENS,
    SECURED_ACCESSES,
    CERTIFICATES,
    MULTI_KEY_LISTENERS,
)


def served(skupper_version: str) -> tuple[Resource, ...]:
    """The resource types a cluster with Skupper ``skupper_version``'s CRDs serves."""
    release = tuple(int(p) for p in skupper_version.split(".")[:2])
    if release >= MULTI_KEY_LISTENER_SINCE:
        return ALL
    return tuple(r for r in ALL if r is not MULTI_KEY_LISTENERS)


def lookup(
    group: str, version: str, plural: str, among: tuple[Resource, ...] = ALL
) -> Resource | None:
    """The served resource (of ``among``) for an API path's group, version and plural."""
    for resource in among:
        if (resource.group, resource.version, resource.plural) == (group, version, plural):
            return resource
    return None


def in_group(group: str, version: str, among: tuple[Resource, ...] = ALL) -> list[Resource]:
    """Every resource (of ``among``) of one group version (for discovery)."""
    return [r for r in among if (r.group, r.version) == (group, version)]
