"""TLS for links: mutual TLS contexts from an sslProfile and the router's host name check.

The router checks the dialled host against the server certificate's DNS SANs only (IP SANs
are ignored, as skupper-router does), so the check is done here rather than by OpenSSL.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path

from skupper_sandbox.certs import dns_sans
from skupper_sandbox.router.config import SslProfile


class HostnameMismatch(Exception):
    """The dialled host is not one of the server certificate's DNS SANs."""


def server_context(profile: SslProfile, resolve: Callable[[str], Path]) -> ssl.SSLContext:
    """A server context that presents the profile's cert and requires a client cert from its CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(resolve(profile.cert_file), resolve(profile.private_key_file))
    context.load_verify_locations(cafile=resolve(profile.ca_cert_file))
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def client_context(profile: SslProfile, resolve: Callable[[str], Path]) -> ssl.SSLContext:
    """A client context that verifies the chain against the profile's CA and sends its cert.

    OpenSSL's own host name check is off: ``check_hostname`` below does the router's.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=resolve(profile.ca_cert_file))
    context.load_cert_chain(resolve(profile.cert_file), resolve(profile.private_key_file))
    return context


def check_hostname(dialled_host: str, peer_cert_der: bytes | None) -> None:
    """Raise ``HostnameMismatch`` unless ``dialled_host`` is one of the cert's DNS SANs."""
    if not peer_cert_der:
        raise HostnameMismatch("certificate verify failed: no peer certificate")
    sans = dns_sans(ssl.DER_cert_to_PEM_cert(peer_cert_der).encode())
    wanted = dialled_host.strip("[]").lower()
    if not any(_matches(wanted, san.lower()) for san in sans):
        shown = ", ".join(sans) or "none"
        raise HostnameMismatch(
            "certificate verify failed: Hostname mismatch, certificate is not valid for"
            f" '{dialled_host}' (DNS SANs: {shown})"
        )


def _matches(host: str, san: str) -> bool:
    if san.startswith("*."):
        head, _, rest = host.partition(".")
        return bool(head) and rest == san[2:]
    return host == san
