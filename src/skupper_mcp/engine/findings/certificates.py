"""A site whose certificates end soon or have ended: every link that uses them fails at
once, with nothing said before (issue 46). The end dates are read in the site's state read
(``facts/certificates.py``) and judged once (``engine/certificates.py``).

The fix is what the real source allows on a system site, the same at 2.1.3 and 2.2.1
(``internal/nonkube/common/fs_config_renderer.go``): ``skupper system reload`` empties
``runtime/certs`` (``reloadDirectories``, @2.2.1:33-40) and issues those certificates anew,
valid five years (``internal/certs/certs.go@2.2.1:118-121``), from the CA it keeps
(``ignoreExisting``, @2.2.1:404-414); a CA is replaced only by one the user gives in
``input/issuers/NAME`` (``loadUserCertAsSecret``, @2.2.1:525-529, which alone turns
``ignoreExisting`` off). 2.2.0's Secret of that name among the site's resources
(@2.2.1:386-392) is written only where no CA is on disk yet, so it replaces none.
Rotation on system sites is open upstream (skupper #2492).

On the Kubernetes site the certificates are Secrets (``secrets/NAME``): its CAs and the
server certificates they issue, which Skupper's controller made (``internal/kube/site/
site.go@2.2.1:265-271``), and its links' client certificates, issued by the sites they dial.
The controller issues a certificate of its own anew when it reconciles it and finds it ended
(``isSecretCorrect``, ``internal/kube/certificates/mgr.go@2.2.1:433-460``: ``NotAfter``
passed), and never before its end; its start reconciles every one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ...facts.certificates import CertificateEnd
from ...results import Finding, NextStep
from ..certificates import WARN_DAYS, SiteCertificate, site_certificate
from ..readings import ClusterReading
from ..scope import SiteRef
from .context import Network, call, finding, on_host


def _line(cert: CertificateEnd, now: int) -> str:
    days = cert.days_left(now)
    when = f"ended {-days:.0f} days ago" if days <= 0 else f"{days:.0f} days left"
    where = f"runtime/{cert.place}/{cert.file}"
    return f"{where} ({cert.kind}, {cert.subject}): ends {cert.date()}, {when}"


def _fix(cert: CertificateEnd, host: str, ns: str) -> tuple[str, list[NextStep]]:
    reload = f"SKUPPER_PLATFORM=podman skupper system reload --namespace {ns}"
    if cert.kind == "issued":
        return (
            f"on {host}, run `{reload}`: Skupper issues the site's certificates anew from its "
            "CA, valid five years (the router restarts); then run setup, which gives every "
            "site linked to this one the new client certificate",
            [on_host(host, reload), call("setup")],
        )
    if cert.kind == "link":
        return (
            "this certificate is the link's, issued by the site it dials: run "
            "`skupper system reload` there (it issues its certificates anew), then setup, "
            f"which gives {host} the new one",
            [call("setup")],
        )
    return (
        f"`{reload}` keeps the CA {cert.name}; Skupper replaces it only with one you give: "
        f"put a new CA's tls.crt, tls.key and ca.crt in input/issuers/{cert.name} of the "
        f"namespace, run `{reload}` on {host}, then setup, which gives every site "
        "linked to this one a certificate of the new CA (automatic rotation on system sites "
        "is open upstream: skupper #2492)",
        [on_host(host, reload), call("setup")],
    )


def _line_cluster(cert: CertificateEnd, now: int) -> str:
    days = cert.days_left(now)
    when = f"ended {-days:.0f} days ago" if days <= 0 else f"{days:.0f} days left"
    name = cert.place.partition("/")[2]
    return f"Secret {name}'s {cert.file} ({cert.kind}, {cert.subject}): ends {cert.date()}, {when}"


def _fix_cluster(cert: CertificateEnd, ns: str) -> tuple[str, list[NextStep]]:
    restart = (
        "kubectl rollout restart deployment/skupper-controller, in the namespace Skupper's "
        "controller was installed in"
    )
    if cert.kind == "link":
        return (
            f"this certificate is the link's (Secret {cert.name}), issued by the site it "
            "dials: renew that site's certificates there (diagnose says how on that site), "
            "then run setup, which gives the cluster the new one",
            [call("setup")],
        )
    what = (
        "a CA: once it is issued anew, the certificates it issued and the links other sites "
        "hold from it must be issued again too, so run setup after"
        if cert.kind == "ca"
        else "then run setup, which gives every site linked to this one the new certificate"
    )
    return (
        f"Skupper's controller issues its certificate {cert.name} anew, valid five years, "
        "only once it has ended, when it next reconciles it (its start reconciles every one: "
        f"`{restart}` after the end date; to renew it before, delete the Secret {cert.name} "
        f"in {ns}, then restart the controller); {what}",
        [call("setup")],
    )


def cluster_certificate_ending(network: Network) -> Iterator[Finding]:
    """The Kubernetes site's certificate Secrets near or past their end."""
    for view in network.views.values():
        if not isinstance(view, ClusterReading):
            continue
        first = site_certificate(view)
        now = view.state.read_at
        if first is None or not first.ending or now is None:
            continue
        fix = _fix_cluster(first.cert, view.site.namespace)
        yield _ending(
            view.ref,
            first,
            fix,
            [_line_cluster(c, now) for c in _near(view.state.certificates, now)],
            cause="Skupper's controller issues a Kubernetes site's certificates valid five "
            "years and renews one only once it has ended; a CA's end is the end of "
            "everything it issued",
        )


def certificate_ending(network: Network) -> Iterator[Finding]:
    for view in network.podman_readings():
        first = site_certificate(view)
        now = view.state.now
        if first is None or not first.ending or now is None:
            continue
        fix = _fix(first.cert, view.ref.host, view.namespace)
        yield _ending(
            view.ref,
            first,
            fix,
            [_line(c, now) for c in _near(view.state.certificates, now)],
            cause="Skupper issues a system site's certificates valid five years and renews "
            "none of them by itself; a CA's end is the end of everything it issued",
        )


def _near(certificates: Sequence[CertificateEnd] | None, now: int) -> list[CertificateEnd]:
    return [c for c in certificates or () if c.days_left(now) <= WARN_DAYS]


def _ending(
    ref: SiteRef,
    first: SiteCertificate,
    fix: tuple[str, list[NextStep]],
    evidence: list[str],
    cause: str,
) -> Finding:
    """One site's certificate-expiring (or -expired) finding, its first end named."""
    cert, ended = first.cert, first.ended
    return finding(
        "certificate-expired" if ended else "certificate-expiring",
        ref,
        "error" if ended else "warning",
        symptom=(
            f"{ref.site}'s certificate {cert.name} ended on {cert.date()[:10]}: every "
            "link that uses it fails"
            if ended
            else f"{ref.site}'s certificate {cert.name} ends on {cert.date()[:10]} "
            f"({first.days_left:.0f} days): every link that uses it will fail then"
        ),
        evidence=evidence,
        cause=cause,
        fix=fix[0],
        next=fix[1],
    )


CERTIFICATE_RULES = (certificate_ending, cluster_certificate_ending)
