"""When a podman site's certificates end, read in the site's one state read. Pure.

Skupper writes a system site's CAs under ``runtime/issuers/<name>/`` and every certificate
it issues, or a link's Secret holds, under ``runtime/certs/<name>/`` (``pkg/nonkube/api/
environment.go@2.2.1:20-22``), each valid five years (``internal/certs/certs.go@2.2.1:118-
121``). ``scripts/state.sh`` sends the certificate files (never a key: only ``tls.crt`` and
``ca.crt``) as ``@@file cert DIR/NAME/FILE`` frames; ``parse_certificates`` reads their end
dates. A file that is no certificate is ``Unparsed``: the site's end dates are then unknown,
never an empty list that reads as "nothing ends".

What renews which, on a system site (``internal/nonkube/common/fs_config_renderer.go``,
the same at 2.1.3 and 2.2.1): ``skupper system reload`` empties ``runtime/certs``
(``reloadDirectories``) and issues its certificates anew from the kept CA; it keeps a CA
under ``runtime/issuers`` (``ignoreExisting``) unless one is given in ``input/issuers``. A
link's certificate (``runtime/certs/<secret>-profile``) is the Secret the peer issued, so
only a new Secret from that peer renews it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass
from typing import Literal

from ..errors import Unparsed
from .unparsed import ParseError

#: At most this many certificate files are read of a site (a link adds two).
MAX_CERT_FILES = 96
#: A PEM certificate Skupper writes is under 2 KiB; a bigger file is not one of them.
MAX_CERT_CHARS = 16 * 1024

#: What a certificate is to the site: its own CA (kept by reload), one it issued itself
#: (renewed by reload), or a link's (issued by the peer the link dials).
CertificateKind = Literal["ca", "issued", "link"]


@dataclass(frozen=True)
class CertificateEnd:
    """One certificate of a site and when it ends."""

    #: where it is, under the namespace's runtime directory: ``issuers/skupper-site-ca``,
    #: ``certs/skupper-site-server``, ``certs/<secret>-profile``
    place: str
    #: the file: ``tls.crt`` or ``ca.crt``
    file: str
    kind: CertificateKind
    subject: str
    #: the end of its validity (unix seconds, UTC)
    not_after: int

    @property
    def name(self) -> str:
        """The directory's last part, as Skupper names the certificate."""
        return self.place.rpartition("/")[2]

    def date(self) -> str:
        """The end as an ISO 8601 UTC time."""
        return dt.datetime.fromtimestamp(self.not_after, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def days_left(self, now: int) -> float:
        """Days from ``now`` (the host's clock) to the end; negative once it has ended."""
        return (self.not_after - now) / 86400


def _kind(place: str, file: str) -> CertificateKind:
    if place.startswith("issuers/") or (file == "ca.crt" and not place.endswith("-profile")):
        return "ca"
    return "link" if place.endswith("-profile") else "issued"


def _load(text: str) -> tuple[str, int]:
    """The subject's common name (or the whole subject) and the end of one PEM certificate."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    if len(text) > MAX_CERT_CHARS:
        raise Unparsed(f"{len(text)} characters, more than a certificate's {MAX_CERT_CHARS}")
    try:
        cert = x509.load_pem_x509_certificate(text.encode("ascii", "replace"))
    except ValueError as exc:
        raise Unparsed(f"not a PEM certificate ({str(exc)[:120]})") from exc
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    subject = str(names[0].value) if names else cert.subject.rfc4514_string()
    return subject[:120], int(cert.not_valid_after_utc.timestamp())


def parse_certificates(files: dict[str, str]) -> list[CertificateEnd]:
    """``{"issuers/NAME/tls.crt": PEM, ...}`` -> each certificate once (a CA copied beside
    every certificate it issued is listed once, under ``issuers`` first), earliest end
    first. A file that is not a certificate is ``Unparsed``, naming the file."""
    if len(files) > MAX_CERT_FILES:
        raise Unparsed(f"{len(files)} certificate files, more than the {MAX_CERT_FILES} read")
    found: dict[tuple[str, int], CertificateEnd] = {}
    for path in sorted(files, key=lambda p: (not p.startswith("issuers/"), p)):
        place, _, file = path.rpartition("/")
        try:
            subject, not_after = _load(files[path])
        except Unparsed as exc:
            raise Unparsed(f"runtime/{path}: {exc}") from exc
        found.setdefault(
            (subject, not_after),
            CertificateEnd(place, file, _kind(place, file), subject, not_after),
        )
    return sorted(found.values(), key=lambda c: (c.not_after, c.place))


#: The Secrets of a Kubernetes site that hold a certificate of its own: the CAs Skupper's
#: controller makes (``EnsureCA``) and what they issue (``Ensure``), ``internal/kube/site/
#: site.go@2.2.1:265-271,402-403``; a link's Secret is the peer's certificate.
CLUSTER_CAS = ("skupper-site-ca", "skupper-local-ca")
CLUSTER_ISSUED = ("skupper-site-server", "skupper-local-server")
#: The files of such a Secret read: never ``tls.key``.
PUBLIC_KEYS = ("tls.crt", "ca.crt")


def _unbase64(value: str) -> str:
    if len(value) > MAX_CERT_CHARS * 2:
        raise Unparsed(f"{len(value)} characters, more than a certificate's")
    try:
        return base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise Unparsed(f"not base64 PEM text ({str(exc)[:80]})") from exc


def parse_secret_certificates(
    secrets: dict[str, dict[str, str]], links: frozenset[str] = frozenset()
) -> list[CertificateEnd]:
    """A Kubernetes site's certificate Secrets, ``{name: {"tls.crt": B64, "ca.crt": B64}}``
    (their public halves only, base64 as the API gives them), -> each certificate once,
    earliest end first, placed ``secrets/NAME``: a CA Secret's (``CLUSTER_CAS``) and every
    ``ca.crt`` are ``ca``, a link Secret's (``links``, its ``ca.crt`` the peer's CA too)
    ``link``, the others ``issued``. A value that is no certificate is ``Unparsed``, naming
    the Secret."""
    files = {
        f"secrets/{name}/{key}": text
        for name, data in secrets.items()
        for key, text in data.items()
        if key in PUBLIC_KEYS
    }
    if len(files) > MAX_CERT_FILES:
        raise Unparsed(f"{len(files)} certificates, more than the {MAX_CERT_FILES} read")

    def kind(name: str, file: str) -> CertificateKind:
        if name in links:
            return "link"
        return "ca" if name in CLUSTER_CAS or file == "ca.crt" else "issued"

    found: dict[tuple[str, int], CertificateEnd] = {}
    # a CA's own Secret first, and its tls.crt before a ca.crt copy: listed under its name
    order = sorted(files, key=lambda p: (p.split("/")[1] not in CLUSTER_CAS, "ca.crt" in p, p))
    for path in order:
        place, _, file = path.rpartition("/")
        try:
            subject, not_after = _load(_unbase64(files[path]))
        except Unparsed as exc:
            raise Unparsed(f"Secret {place.partition('/')[2]}'s {file}: {exc}") from exc
        name = place.partition("/")[2]
        found.setdefault(
            (subject, not_after), CertificateEnd(place, file, kind(name, file), subject, not_after)
        )
    return sorted(found.values(), key=lambda c: (c.not_after, c.place))


#: The command a certificate parse error names.
CERT_COMMAND = "cat runtime/issuers/*/tls.crt runtime/certs/*/{tls,ca}.crt"


def certificates_or_error(
    files: dict[str, str], errors: list[ParseError]
) -> list[CertificateEnd] | None:
    """``parse_certificates`` of a read's files; when they cannot be read, None (unknown)
    and the ``ParseError`` added to ``errors``."""
    try:
        return parse_certificates(files)
    except Unparsed as exc:
        errors.append(ParseError("certificates", CERT_COMMAND, "", str(exc)))
        return None


def earliest(certificates: list[CertificateEnd] | None) -> CertificateEnd | None:
    """The certificate of a site that ends first (None: none read)."""
    return min(certificates, key=lambda c: c.not_after) if certificates else None
