"""Certificate files of a namespace: CAs in runtime/issuers, issued certs in runtime/certs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ... import certs
from .failure import CliFailure
from .paths import ISSUER_NAMES, NamespacePaths

CERT_FILES = ("ca.crt", "tls.crt", "tls.key")
# Skupper writes its files 0640 (fs_config_renderer.go); its router reads them as their owner.
_FILE_MODE = 0o640


def write_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, _FILE_MODE)


def ensure_issuers(paths: NamespacePaths) -> None:
    """Create each CA that does not exist yet; an existing CA is kept (reload keeps them).
    A CA the user supplied in input/issuers is the one runtime/issuers holds."""
    for name in ISSUER_NAMES:
        directory = paths.issuers / name
        supplied = paths.home / "input" / "issuers" / name
        if (supplied / "tls.crt").is_file() and (supplied / "tls.key").is_file():
            cert_pem = (supplied / "tls.crt").read_bytes()
            write_file(directory / "ca.crt", cert_pem)
            write_file(directory / "tls.crt", cert_pem)
            write_file(directory / "tls.key", (supplied / "tls.key").read_bytes())
            continue
        if (directory / "tls.crt").is_file() and (directory / "tls.key").is_file():
            continue
        cert_pem, key_pem = certs.new_ca(name)
        write_file(directory / "ca.crt", cert_pem)
        write_file(directory / "tls.crt", cert_pem)
        write_file(directory / "tls.key", key_pem)


def _issuer(paths: NamespacePaths, name: str) -> tuple[bytes, bytes]:
    for base in (paths.home / "input" / "issuers", paths.issuers):
        directory = base / name
        if (directory / "tls.crt").is_file() and (directory / "tls.key").is_file():
            return (directory / "tls.crt").read_bytes(), (directory / "tls.key").read_bytes()
    raise CliFailure(f'failed to render site state: issuer "{name}" not found')


def _user_supplied(paths: NamespacePaths, name: str) -> Path | None:
    directory = paths.input_certs / name
    if all((directory / f).is_file() for f in CERT_FILES):
        return directory
    return None


def issue_cert(
    paths: NamespacePaths,
    name: str,
    issuer: str,
    sans: list[str],
    *,
    server: bool,
    connect_json: dict[str, object] | None = None,
) -> Path:
    """Write ``runtime/certs/<name>/`` (ca.crt, tls.crt, tls.key [, connect.json])."""
    directory = paths.certs / name
    supplied = _user_supplied(paths, name)
    if supplied is not None:
        for file in CERT_FILES:
            write_file(directory / file, (supplied / file).read_bytes())
    else:
        ca_cert, ca_key = _issuer(paths, issuer)
        cert_pem, key_pem = certs.issue(
            ca_cert, ca_key, name, sans=sans, server=server, client=not server
        )
        write_file(directory / "ca.crt", ca_cert)
        write_file(directory / "tls.crt", cert_pem)
        write_file(directory / "tls.key", key_pem)
    if connect_json is not None:
        write_file(directory / "connect.json", (json.dumps(connect_json, indent=2) + "\n").encode())
    return directory


def connect_json(host: str, port: int, cert_dir: str) -> dict[str, object]:
    """What a client of the router reads to connect to it (host, port and its TLS files)."""
    return {
        "scheme": "amqps",
        "host": host,
        "port": str(port),
        "tls": {
            "ca": f"{cert_dir}/ca.crt",
            "cert": f"{cert_dir}/tls.crt",
            "key": f"{cert_dir}/tls.key",
            "verify": True,
        },
    }
