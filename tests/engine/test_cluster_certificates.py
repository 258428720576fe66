"""Issue 46 item 5 on the Kubernetes site: its CA, server and link Secrets' certificates read
once (only ``tls.crt`` and ``ca.crt``; a ``tls.key`` never leaves the API connector), the
earliest in status, diagnose warning 30 days before with the fix the controller allows."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.engine.certificates import site_certificate
from skupper_mcp.engine.findings import Network
from skupper_mcp.engine.findings.certificates import cluster_certificate_ending
from skupper_mcp.engine.readings import ClusterReading
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import Unparsed
from skupper_mcp.facts.certificates import parse_secret_certificates
from skupper_mcp.sites.kube import ClusterSite, KubeState
from skupper_mcp.topology import load_topology
from skupper_sandbox import certs

STATES = Path(__file__).parent / "site_states"
NOW = int(dt.datetime.now(dt.UTC).timestamp())
CRC = SiteRef("crc", "crc-site", "consumer", "kubernetes")
LINK = "link-rhel-ai"


def b64(pem: bytes) -> str:
    return base64.b64encode(pem).decode()


def secrets(days_server: float = 1000, days_link: float = 1000) -> dict[str, dict[str, str]]:
    """The site's CA and server Secrets and one link's, as the API gives their data."""
    ca, ca_key = certs.new_ca("crc-site site CA")
    server, _ = certs.issue(ca, ca_key, "skupper-router", sans=["skupper-router"])
    server = certs.aged(server, ca_key, days_server)
    peer_ca, peer_key = certs.new_ca("hub-rhel-ai site CA")
    client, _ = certs.issue(peer_ca, peer_key, "crc-site", sans=[])
    client = certs.aged(client, peer_key, days_link)
    return {
        "skupper-site-ca": {"tls.crt": b64(ca), "ca.crt": b64(ca)},
        "skupper-site-server": {"tls.crt": b64(server), "ca.crt": b64(ca)},
        LINK: {"tls.crt": b64(client), "ca.crt": b64(peer_ca)},
    }


def test_each_certificate_is_read_once_with_its_kind() -> None:
    found = parse_secret_certificates(secrets(days_server=10), frozenset({LINK}))
    kinds = {(c.place, c.file): c.kind for c in found}
    assert kinds[("secrets/skupper-site-ca", "tls.crt")] == "ca"
    assert ("secrets/skupper-site-server", "ca.crt") not in kinds  # the CA's copy, once
    assert kinds[("secrets/skupper-site-server", "tls.crt")] == "issued"
    assert kinds[("secrets/" + LINK, "tls.crt")] == "link"
    assert kinds[("secrets/" + LINK, "ca.crt")] == "link"
    assert found[0].name == "skupper-site-server"  # earliest first


def test_a_value_that_is_no_certificate_is_unparsed_naming_the_secret() -> None:
    bad = secrets() | {"skupper-local-server": {"tls.crt": b64(b"-----BEGIN nothing")}}
    with pytest.raises(Unparsed, match="skupper-local-server"):
        parse_secret_certificates(bad)
    with pytest.raises(Unparsed, match="base64"):
        parse_secret_certificates({"skupper-site-ca": {"tls.crt": "%%% not base64"}})


class KeysApi:
    """The API connector's certificate read: the Secrets' data, minus all but the keys."""

    def __init__(self, found: dict[str, dict[str, str]]) -> None:
        self.found = found
        self.asked: list[str] = []

    async def read_secret(
        self, name: str, keys: tuple[str, ...] | None, *, namespace: str | None = None
    ) -> dict[str, Any] | None:
        self.asked.append(name)
        assert keys is not None and "tls.key" not in keys
        data = self.found.get(name)
        if data is None:
            return None
        kept = {k: v for k, v in data.items() if k in keys}
        return {"kind": "Secret", "metadata": {"name": name}, "type": "Opaque", "data": kept}


def cluster(found: dict[str, dict[str, str]]) -> ClusterSite:
    api: Any = KeysApi(found)
    return ClusterSite(api, "skupper", secret_names=(LINK,))


def test_the_cluster_reads_its_ca_server_and_link_secrets() -> None:
    site = cluster(secrets(days_link=12))
    _, (found, error) = asyncio.run(site._secrets(secret_data=False))
    assert error is None and found is not None
    api: Any = site.api
    assert {"skupper-site-ca", "skupper-local-ca", "skupper-site-server", LINK} <= set(api.asked)
    assert found[0].name == LINK and found[0].kind == "link"


def reading(days_server: float) -> ClusterReading:
    state = KubeState(version="v1", site=None, read_at=NOW)
    state.certificates = parse_secret_certificates(
        secrets(days_server=days_server), frozenset({LINK})
    )
    return ClusterReading(CRC, cluster({}), state)


def test_status_shows_the_clusters_first_end_and_diagnose_warns_with_the_fix() -> None:
    view = reading(10)
    first = site_certificate(view)
    assert first is not None and first.cert.name == "skupper-site-server"
    assert 9 <= first.row().days_left <= 10
    net = Network(load_topology(STATES / "topology.env"), {"crc": view})
    (found,) = cluster_certificate_ending(net)
    assert found.id == "certificate-expiring" and found.severity == "warning"
    assert first.cert.date()[:10] in found.symptom
    assert "skupper-controller" in found.fix and "skupper-site-server" in found.fix
    assert any("Secret skupper-site-server's tls.crt" in e for e in found.evidence)
    ended = Network(load_topology(STATES / "topology.env"), {"crc": reading(-2)})
    assert [f.id for f in cluster_certificate_ending(ended)] == ["certificate-expired"]
    # far from its end: nothing to say
    far = Network(load_topology(STATES / "topology.env"), {"crc": reading(400)})
    assert list(cluster_certificate_ending(far)) == []
