"""The management client's TLS contexts: one per client certificate until its files change,
and none of proton's defaults for connections that bring their own. A controller connects
again whenever its router restarts or is still starting; each proton context is made from
the system's CA bundle (about 30 ms of CPU), where Skupper's Go client parses only its CA."""

from __future__ import annotations

from pathlib import Path

import pytest
from proton import SSLDomain

from skupper_sandbox import certs
from skupper_sandbox.router import amqp_management
from sshkit import free_port


def write_client_cert(directory: Path, ca: tuple[bytes, bytes]) -> amqp_management.ClientCert:
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = certs.issue(*ca, "skupper-local-client", server=False)
    (directory / "ca.crt").write_bytes(ca[0])
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    return amqp_management.ClientCert(directory)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The mode of every proton TLS context made from here on."""
    modes: list[int] = []
    original = SSLDomain.__init__

    def counting(self: SSLDomain, mode: int) -> None:
        modes.append(mode)
        original(self, mode)

    monkeypatch.setattr(SSLDomain, "__init__", counting)
    monkeypatch.setattr(amqp_management, "_domains", {})
    return modes


def test_connecting_again_makes_no_new_tls_context(tmp_path: Path, made: list[int]) -> None:
    cert = write_client_cert(tmp_path / "local-client", certs.new_ca("skupper-site-ca"))
    port = free_port("127.0.0.1")
    for _ in range(3):  # a router that is still starting: the controller tries again
        with pytest.raises(amqp_management.ManagementError, match="cannot reach"):
            amqp_management.Management("127.0.0.1", port, cert, timeout=2)
    assert made == [SSLDomain.MODE_CLIENT]


def test_new_certificate_files_get_a_new_context(tmp_path: Path, made: list[int]) -> None:
    directory = tmp_path / "local-client"
    first = amqp_management._client_domain(write_client_cert(directory, certs.new_ca("ca")))
    same = amqp_management._client_domain(amqp_management.ClientCert(directory))
    renewed = amqp_management._client_domain(write_client_cert(directory, certs.new_ca("ca")))
    assert same is first and renewed is not first
    assert made == [SSLDomain.MODE_CLIENT, SSLDomain.MODE_CLIENT]


def test_missing_certificate_files_are_a_management_error(tmp_path: Path) -> None:
    cert = amqp_management.ClientCert(tmp_path / "nothing-here")
    with pytest.raises(amqp_management.ManagementError, match="cannot reach"):
        amqp_management.Management("127.0.0.1", free_port("127.0.0.1"), cert, timeout=2)


def test_the_default_contexts_are_made_when_first_used(made: list[int]) -> None:
    from proton.reactor import Container

    amqp_management._defer_default_tls()
    container = Container()
    assert made == []
    assert isinstance(container.ssl.client, SSLDomain)
    assert container.ssl.client is container.ssl.client
    assert made == [SSLDomain.MODE_CLIENT]
