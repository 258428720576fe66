"""Results the product's operations return, as unit tests build them to feed a renderer or
a planner: a podman site's result and a finding, each with defaults that say nothing, so
a test names only what its case is about. One copy here, for every test that needs one."""

from __future__ import annotations

from typing import Any

from skupper_mcp.results import Finding, Outcome, SiteResult
from skupper_mcp.vocabulary import Role


def podman_result(
    host: str, outcome: Outcome, *, site: str | None = None, role: Role = "provider"
) -> SiteResult:
    """What an operation did at ``host``'s podman site (``hub-HOST`` unless ``site``):
    ``outcome``, having changed it."""
    return SiteResult(
        host=host,
        site=site or f"hub-{host}",
        role=role,
        platform="podman",
        outcome=outcome,
        changed=True,
    )


def made_finding(finding_id: str, **fields: Any) -> Finding:
    """The finding ``finding_id``, an error at alpha's site whose symptom, cause and fix
    are placeholders unless ``fields`` give them."""
    values: dict[str, Any] = {
        "site": "hub-alpha",
        "host": "alpha",
        "severity": "error",
        "symptom": "s",
        "cause": "c",
        "fix": "f",
        **fields,
    }
    return Finding(id=finding_id, **values)
