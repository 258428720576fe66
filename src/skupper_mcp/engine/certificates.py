"""When a site's certificates end, decided once from its reading: what status shows and
diagnose judges (``findings/certificates.py``). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from ..facts.certificates import CertificateEnd, earliest
from ..results import CertificateEnd as CertificateEndRow
from .readings import ClusterReading, PodmanReading, Reading

#: diagnose warns this many days before a certificate ends
WARN_DAYS = 30


@dataclass(frozen=True)
class SiteCertificate:
    """The site's certificate that ends first, and the days left by the host's clock."""

    cert: CertificateEnd
    days_left: float

    @property
    def ended(self) -> bool:
        return self.days_left <= 0

    @property
    def ending(self) -> bool:
        """Ends within ``WARN_DAYS`` (or has ended)."""
        return self.days_left <= WARN_DAYS

    def row(self) -> CertificateEndRow:
        return CertificateEndRow(
            name=self.cert.name,
            kind=self.cert.kind,
            ends=self.cert.date(),
            days_left=round(self.days_left, 1),
        )


def site_certificate(reading: Reading) -> SiteCertificate | None:
    """The reading's first certificate to end (None: not read, its certificates not read,
    or the clock they are judged by not read): a podman site's by its host's clock, the
    cluster's by this machine's when it was read."""
    match reading:
        case PodmanReading(state=state):
            certificates, now = state.certificates, state.now
        case ClusterReading(state=kube):
            certificates, now = kube.certificates, kube.read_at
        case _:
            return None
    first = earliest(certificates)
    if first is None or now is None:
        return None
    return SiteCertificate(first, first.days_left(now))
