"""``python -m skupper_sandbox.router``: the router container's process.

Like the real image's launch.sh it first copies ``$QDROUTERD_CONF`` to ``/tmp/skrouterd.json``
(expanding environment variables), which fails on a host whose ``/tmp`` is not writable in
containers unless the container has a tmpfs there.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import sys
import time
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.router.config import RouterConfig, check_ssl_profiles, expand, parse
from skupper_sandbox.router.node import Router
from skupper_sandbox.router.tls import client_context

from ..errors import RouterConfigError

DEFAULT_CONF = "/etc/skupper-router/config/skrouterd.json"
COPY_PATH = "/tmp/skrouterd.json"


class _RouterLogFormat(logging.Formatter):
    """skrouterd's line shape: ``2025-01-02 03:04:05.678901 +0000 ROUTER (info) message``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(record.created))
        micros = int((record.created % 1) * 1_000_000)
        level = {"WARNING": "warning", "ERROR": "error", "CRITICAL": "critical"}.get(
            record.levelname, "info"
        )
        return f"{stamp}.{micros:06d} +0000 ROUTER ({level}) {record.getMessage()}"


def _configure_logging() -> logging.Logger:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(_RouterLogFormat())
    logger = logging.getLogger("skupper_sandbox.router")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def _tmp_is_writable(host: hostenv.HostInfo) -> bool:
    if host.tmp_writable:
        return True
    tmpfs = json.loads(os.environ.get(hostenv.TMPFS_VAR, "[]"))
    return any(str(entry).split(":", 1)[0].rstrip("/") == "/tmp" for entry in tmpfs)


def _load_ssl_profiles(config: RouterConfig) -> None:
    """Refuse to start, as skrouterd does, when a profile's PEM files do not load."""
    for profile in config.ssl_profiles.values():
        try:
            client_context(profile, hostenv.container_path)
        except (ssl.SSLError, OSError) as exc:
            raise RouterConfigError(f"sslProfile {profile.name!r} cannot be loaded: {exc}") from exc


def main() -> int:
    log = _configure_logging()
    try:
        host = hostenv.current_host()
    except (hostenv.NotOnSandboxHost, OSError) as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 1
    if not _tmp_is_writable(host):
        print(f"cp: cannot create regular file '{COPY_PATH}': Permission denied", file=sys.stderr)
        return 1
    conf = os.environ.get("QDROUTERD_CONF", DEFAULT_CONF)
    try:
        text = expand(hostenv.container_path(conf).read_text())
    except OSError as exc:
        print(f"cp: cannot stat '{conf}': {exc.strerror}", file=sys.stderr)
        return 1
    copy = hostenv.container_path(COPY_PATH)
    if copy != Path(COPY_PATH):  # only inside a container's own /tmp, never the machine's
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text)
    try:
        config = parse(text, source=COPY_PATH)
        check_ssl_profiles(config, hostenv.container_path)
        _load_ssl_profiles(config)
    except RouterConfigError as exc:
        log.critical("Router start-up failed: %s", exc)
        print(f"Router start-up failed: {exc}", file=sys.stderr)
        return 1
    log.info("Router %s (site %s) starting", config.router.id, config.router.site_name)
    asyncio.run(Router(config, host).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
