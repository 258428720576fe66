"""Results as the tools answered them, for the renderers' and the CLI's tests."""

from __future__ import annotations

from skupper_mcp.models import StatusResult


def recorded_status() -> StatusResult:
    """A status for a stranger's two GPU hosts, one of them unreachable, with long reasons and
    Kubernetes service names. Written by hand in the shape engine/operations/status.py
    gives each field (a cluster site's router is its pods, its container running or not),
    not recorded from a run."""
    return StatusResult.model_validate(
        {
            "sites": [
                {
                    "host": "local",
                    "site": "local-workstation",
                    "role": "consumer",
                    "platform": "podman",
                    "reachable": True,
                    "state": "up",
                    "controller": "active",
                    "router": "active",
                    "container": "running",
                },
                {
                    "host": "gpu1",
                    "site": "hub-gpu1",
                    "role": "provider",
                    "platform": "podman",
                    "reachable": True,
                    "state": "stale",
                    "controller": "active",
                    "router": "active",
                    "container": "running",
                    "stale": True,
                    "detail": "the router unit is active but the container was recreated "
                    "1 minute ago; status read from /var/lib/skupper/namespaces/default",
                },
                {
                    "host": "gpu2",
                    "site": "hub-gpu2",
                    "role": "provider",
                    "platform": "podman",
                    "reachable": False,
                    "state": "unreachable",
                    "detail": "ssh gpu2.lab.example.org:22: connect timed out after 5.0s "
                    "(is the host up and is SSH listening?)",
                },
                {
                    "host": "crc",
                    "site": "crc-workstation",
                    "role": "consumer",
                    "platform": "kubernetes",
                    "reachable": True,
                    "state": "up",
                    "controller": "api v1.31.0",
                    "router": "skupper-router-7c5d9d6f4b-qg2lp Running",
                    "container": "running",
                },
            ],
            "links": [
                {
                    "from": "local-workstation",
                    "to": "hub-gpu1",
                    "endpoint": "gpu1.lab.example.org:55671",
                    "tcp_probe": True,
                    "connected": True,
                    "status": "Ready",
                },
                {
                    "from": "local-workstation",
                    "to": "hub-gpu2",
                    "endpoint": "gpu2.lab.example.org:55671",
                    "tcp_probe": False,
                    "connected": False,
                    "status": "Pending: dial tcp 198.51.100.7:55671: i/o timeout",
                },
            ],
            "listeners": [
                {
                    "site": "local-workstation",
                    "port": 9000,
                    "routing_key": "model-api-gpu1",
                    "bound": True,
                },
                {
                    "site": "crc-workstation",
                    "port": 8000,
                    "routing_key": "model-api-gpu1",
                    "bound": True,
                    "service": "model-listener-gpu1.skupper-models.svc.cluster.local:8000",
                },
            ],
            "model_actions": [
                {
                    "host": "gpu1",
                    "profile": "qwen-32k",
                    "action": "status",
                    "reason": "the provider's router is up: ask hosted-model-ctl whether its "
                    "model runs",
                },
            ],
            "summary": "4 sites: 3 reachable, 1 stale; 1 of 2 links up; 2 listeners bound",
        }
    )
