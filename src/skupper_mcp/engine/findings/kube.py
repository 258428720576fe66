"""Rules about the Kubernetes site (the seed's CRC rows)."""

from __future__ import annotations

from ..findings.context import Rule

KUBE_RULES: tuple[Rule, ...] = ()
