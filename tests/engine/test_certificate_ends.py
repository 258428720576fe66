"""Issue 46 item 5, the pure half: a site's certificate files, framed as the state read
sends them, read into end dates once; the one that ends first decided once; diagnose's
rule warns 30 days before and errors after, naming the fix the release allows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.certificates import site_certificate
from skupper_mcp.engine.findings import Network
from skupper_mcp.engine.findings.certificates import certificate_ending
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import sites as all_sites
from skupper_mcp.errors import Unparsed
from skupper_mcp.facts.certificates import parse_certificates
from skupper_mcp.facts.site_state import SiteState, parse_site_state
from skupper_mcp.facts.skupper_version import parse_skupper_version
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import Topology, load_topology
from skupper_sandbox import certs

STATES = Path(__file__).parent / "site_states"
HOST = "rhel-ai"

#: the host's clock: today's (a certificate made here starts today and lasts five years)
NOW = int(dt.datetime.now(dt.UTC).timestamp())


def _pem(days: float, *, ca: bool = False) -> tuple[str, str, str]:
    """A CA and a certificate it issued, ending ``days`` after NOW's wall clock (aged)."""
    ca_cert, ca_key = certs.new_ca("skupper-site-ca")
    cert, _ = certs.issue(ca_cert, ca_key, "hub-public", sans=["hub.example"])
    now_days = (NOW - dt.datetime.now(dt.UTC).timestamp()) / 86400
    if ca:
        ca_cert = certs.aged(ca_cert, ca_key, now_days + days)
    else:
        cert = certs.aged(cert, ca_key, now_days + days)
    return ca_cert.decode(), cert.decode(), ca_key.decode()


def _framed(files: dict[str, str]) -> str:
    out = ["@@user cloud-user", f"@@now {NOW}"]
    for name, text in files.items():
        out.append(f"@@file cert {name}")
        out += ["|" + line for line in text.rstrip("\n").split("\n")]
    return "\n".join([*out, "@@end", ""])


def test_the_state_read_gives_each_certificate_once_earliest_first() -> None:
    ca, cert, _ = _pem(10)
    state = parse_site_state(
        _framed(
            {
                "issuers/skupper-site-ca/tls.crt": ca,
                "certs/hub-public/tls.crt": cert,
                "certs/hub-public/ca.crt": ca,  # the CA's copy: listed once, as the issuer
            }
        )
    )
    assert state.parse_errors == []
    assert state.certificates is not None
    assert [(c.place, c.kind) for c in state.certificates] == [
        ("certs/hub-public", "issued"),
        ("issuers/skupper-site-ca", "ca"),
    ]
    first = state.certificates[0]
    assert first.subject == "hub-public" and round(first.days_left(NOW)) == 10


def test_a_file_that_is_no_certificate_is_the_facts_typed_error_not_an_empty_list() -> None:
    state = parse_site_state(_framed({"certs/hub-public/tls.crt": "<html>no</html>"}))
    assert state.certificates is None
    [error] = state.parse_errors
    assert error.fact == "certificates" and "runtime/certs/hub-public/tls.crt" in error.reason
    with pytest.raises(Unparsed):
        parse_certificates({"certs/x/tls.crt": "A" * 20000})


def test_a_site_without_certificates_has_none_to_end() -> None:
    state = parse_site_state(_framed({}))
    assert state.certificates == [] and state.parse_errors == []


@pytest.fixture(scope="module")
def topology() -> Topology:
    return load_topology(STATES / "topology.env")


def states() -> dict[str, SiteState]:
    return {HOST: parse_site_state((STATES / "up" / f"{HOST}.txt").read_text())}


def network(topology: Topology, read: dict[str, SiteState]) -> Network:
    """rhel-ai's reading as ``read`` gives it, the only site the rule is shown."""
    ref = next(r for r in all_sites(topology) if r.host == HOST)
    provider = topology.provider(HOST)
    assert provider is not None
    site = PodmanSite(FakeConnector(HOST), provider.namespace)
    return Network(topology, {HOST: PodmanReading(ref, site, read[HOST], None)}, [])


def _with(state: SiteState, days: float, *, ca: bool = False, release: str = "2.2.1") -> SiteState:
    ca_pem, cert, _ = _pem(days, ca=ca)
    files = {"issuers/skupper-site-ca/tls.crt": ca_pem, "certs/hub-rhel-ai-public/tls.crt": cert}
    state.certificates = parse_certificates(files)
    state.now = NOW
    state.skupper = parse_skupper_version(f"{release}\n", 0)
    return state


def test_ten_days_left_is_a_warning_with_the_date_and_reload(topology: Topology) -> None:
    read = states()
    net = network(topology, {"rhel-ai": _with(read["rhel-ai"], 10)})
    [found] = list(certificate_ending(net))
    ends = dt.datetime.fromtimestamp(NOW + 10 * 86400, dt.UTC).strftime("%Y-%m-%d")
    assert (found.id, found.host, found.severity) == ("certificate-expiring", "rhel-ai", "warning")
    assert ends in found.symptom and "hub-rhel-ai-public" in found.symptom
    assert "skupper system reload --namespace" in found.fix
    assert [n.kind for n in found.next] == ["host", "tool"]
    decided = site_certificate(net.views["rhel-ai"])
    assert decided is not None and decided.row().ends.startswith(ends)


def test_forty_days_left_says_nothing(topology: Topology) -> None:
    net = network(topology, {"rhel-ai": _with(states()["rhel-ai"], 40)})
    assert list(certificate_ending(net)) == []


@pytest.mark.parametrize("release", ["2.1.3", "2.2.1"])
def test_an_ended_ca_is_an_error_whose_fix_is_what_the_release_reads(
    topology: Topology,
    release: str,
) -> None:
    net = network(topology, {"rhel-ai": _with(states()["rhel-ai"], -2, ca=True, release=release)})
    [found] = list(certificate_ending(net))
    assert (found.id, found.severity) == ("certificate-expired", "error")
    assert "input/issuers/skupper-site-ca" in found.fix and "keeps the CA" in found.fix
    # 2.2's Secret of the CA's name is written only where no CA is on disk: no fix here
    assert "Secret" not in found.fix
