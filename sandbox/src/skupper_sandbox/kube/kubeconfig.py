"""The API's credentials and the kubeconfig the product is given.

``DIR/kube/`` holds the cluster CA, the API's serving certificate for its address, a
random bearer token and ``kubeconfig`` (cluster ``crc``, user ``kubeadmin``, context
``crc-admin``). They are created once and reused, so a restarted API keeps its clients.
"""

from __future__ import annotations

import base64
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml

from skupper_sandbox import certs

CLUSTER_NAME = "crc"
USER_NAME = "kubeadmin"
CONTEXT_NAME = "crc-admin"


@dataclass(frozen=True)
class ApiCredentials:
    """Where the API's TLS material and token live, and the token itself."""

    kube_dir: Path
    token: str

    @property
    def ca_cert(self) -> Path:
        return self.kube_dir / "ca.crt"

    @property
    def server_cert(self) -> Path:
        return self.kube_dir / "server.crt"

    @property
    def server_key(self) -> Path:
        return self.kube_dir / "server.key"

    @property
    def kubeconfig(self) -> Path:
        return self.kube_dir / "kubeconfig"


def _write_private(path: Path, data: bytes) -> None:
    path.touch(mode=0o600, exist_ok=True)
    os.chmod(path, 0o600)
    path.write_bytes(data)


def _server_address(cert_path: Path) -> list[str]:
    return certs.dns_sans(cert_path.read_bytes()) if cert_path.exists() else []


def ensure_credentials(kube_dir: Path, address: str, port: int) -> ApiCredentials:
    """Create what is missing in ``kube_dir`` (CA, serving cert for ``address``, token,
    kubeconfig) and return the credentials. A serving cert for another address is
    reissued."""
    kube_dir.mkdir(parents=True, exist_ok=True)
    creds = ApiCredentials(kube_dir, "")
    ca_key_path = kube_dir / "ca.key"
    if not (creds.ca_cert.exists() and ca_key_path.exists()):
        ca_cert, ca_key = certs.new_ca("sandbox-crc-ca")
        creds.ca_cert.write_bytes(ca_cert)
        _write_private(ca_key_path, ca_key)
    if address not in _server_address(creds.server_cert) or not creds.server_key.exists():
        cert, key = certs.issue(
            creds.ca_cert.read_bytes(),
            ca_key_path.read_bytes(),
            "kube-apiserver",
            sans=[address, "api.crc.testing", "localhost"],
            client=False,
        )
        creds.server_cert.write_bytes(cert)
        _write_private(creds.server_key, key)
    token_path = kube_dir / "token"
    if not token_path.exists():
        _write_private(token_path, ("sha256~" + secrets.token_urlsafe(32)).encode())
    creds = ApiCredentials(kube_dir, token_path.read_text().strip())
    config = render_kubeconfig(f"https://{address}:{port}", creds.ca_cert.read_bytes(), creds.token)
    _write_private(creds.kubeconfig, config.encode())
    return creds


def render_kubeconfig(server: str, ca_pem: bytes, token: str) -> str:
    """A kubeconfig with one cluster, one token user and the ``crc-admin`` context."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CLUSTER_NAME,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": USER_NAME, "user": {"token": token}}],
        "contexts": [
            {
                "name": CONTEXT_NAME,
                "context": {"cluster": CLUSTER_NAME, "user": USER_NAME, "namespace": "default"},
            }
        ],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)
