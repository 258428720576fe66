"""Certificates for the sandbox: site CAs, server and client certificates, the API's TLS.

Skupper issues RSA-2048 certificates valid for five years and writes each IP SAN as a DNS
SAN too, because the router checks host names against DNS SANs only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = dt.timedelta(days=5 * 365)


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem_key(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def new_ca(common_name: str) -> tuple[bytes, bytes]:
    """A self-signed CA: (certificate PEM, key PEM)."""
    key = _key()
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def issue(
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    common_name: str,
    *,
    sans: list[str] | tuple[str, ...] = (),
    server: bool = True,
    client: bool = True,
) -> tuple[bytes, bytes]:
    """A certificate signed by the CA: (certificate PEM, key PEM).

    Each SAN that is an IP address is written both as an IP SAN and as a DNS SAN.
    """
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    if not isinstance(ca_key, rsa.RSAPrivateKey):
        raise ValueError("the CA key must be an RSA key")
    key = _key()
    names: list[x509.GeneralName] = []
    for san in dict.fromkeys(s for s in sans if s):
        with contextlib.suppress(ValueError):
            names.append(x509.IPAddress(ipaddress.ip_address(san)))
        names.append(x509.DNSName(san))
    usages = []
    if server:
        usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
    if client:
        usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def dns_sans(cert_pem: bytes) -> list[str]:
    """The DNS SANs of a certificate (what a router checks a dialled host against)."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    return list(ext.value.get_values_for_type(x509.DNSName))


def aged(cert_pem: bytes, signer_key_pem: bytes, days: float) -> bytes:
    """``cert_pem`` as it is when it has ``days`` left: the same subject, issuer, key,
    serial and extensions, ending ``days`` from now, signed again by its issuer's key (the
    CA's; a CA's own for a CA). A sandbox certificate is five years old at once, without
    waiting for it: what a host's clock would see years after setup."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    key = serialization.load_pem_private_key(signer_key_pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the signing key must be an RSA key")
    now = dt.datetime.now(dt.UTC)
    end = now + dt.timedelta(days=days)
    start = min(cert.not_valid_before_utc, end - dt.timedelta(minutes=5))
    builder = (
        x509.CertificateBuilder()
        .subject_name(cert.subject)
        .issuer_name(cert.issuer)
        .public_key(cert.public_key())
        .serial_number(cert.serial_number)
        .not_valid_before(start)
        .not_valid_after(end)
    )
    for ext in cert.extensions:
        builder = builder.add_extension(ext.value, critical=ext.critical)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
