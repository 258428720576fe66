"""The diagnose rules: pure functions from what one read of every site showed to findings.

Each module holds the rules of one subject (a podman host's router and units, the links
between sites, the Kubernetes site, the versions). ``RULES`` is every rule, in the order
their findings are listed.
"""

from __future__ import annotations

from .certificates import CERTIFICATE_RULES
from .context import Network, Rule
from .kube import KUBE_RULES
from .links import LINK_RULES
from .podman import PODMAN_RULES
from .pools import POOL_RULES
from .releases import RELEASE_RULES
from .sites import SITE_RULES
from .upgrades import UPGRADE_RULES

RULES: tuple[Rule, ...] = (
    SITE_RULES
    + PODMAN_RULES
    + RELEASE_RULES
    + UPGRADE_RULES
    + CERTIFICATE_RULES
    + LINK_RULES
    + KUBE_RULES
    + POOL_RULES
)

__all__ = ["RULES", "Network", "Rule"]
