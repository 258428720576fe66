"""The topology: ``topology.env`` parsed and validated into pydantic models.

``model`` holds the models, ``envfile`` reads the file's lines and typed values,
``validation`` builds and checks a ``Topology`` from them, ``discovery`` finds and loads the
file. Callers import from here.
"""

from .discovery import ENV_VARIABLE, find_topology_path, load_topology
from .envfile import Assignment, parse_assignments
from .model import (
    DEFAULT_MIN_SKUPPER_VERSION,
    DEFAULT_SATURATED_WAITING,
    KubeSite,
    LocalSite,
    ModelEndpoint,
    ModelPool,
    PoolMember,
    ProviderHost,
    SSHSettings,
    SSHTarget,
    Topology,
    cluster_listener_name,
    default_state_dir,
)
from .validation import parse_topology, prefix_of

__all__ = [
    "DEFAULT_MIN_SKUPPER_VERSION",
    "DEFAULT_SATURATED_WAITING",
    "ENV_VARIABLE",
    "Assignment",
    "KubeSite",
    "LocalSite",
    "ModelEndpoint",
    "ModelPool",
    "PoolMember",
    "ProviderHost",
    "SSHSettings",
    "SSHTarget",
    "Topology",
    "cluster_listener_name",
    "default_state_dir",
    "find_topology_path",
    "load_topology",
    "parse_assignments",
    "parse_topology",
    "prefix_of",
]
