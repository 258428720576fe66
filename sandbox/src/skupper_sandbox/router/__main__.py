"""``python -m skupper_sandbox.router``: the router container's process on the imitation.

It follows the image's ``launch.sh``/``configure.sh`` (``Imitation.config``): the config
named by ``$QDROUTERD_CONF`` is copied to ``/tmp/skrouterd.json`` with its variables
expanded; when ``/tmp`` cannot be written (a host whose ``tmp_writable`` is false, without
``--tmpfs /tmp``) ``configure.sh``'s error is printed and the router starts on the image's
default config instead: standalone, one listener on the ``amqp`` port, no links, no
tcpListeners. It keeps running, as the real container does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
import uuid

from skupper_sandbox import hostenv, lifeline
from skupper_sandbox.router.config import (
    Listener,
    RouterConfig,
    RouterIdentity,
    check_ssl_profiles,
    parse,
)
from skupper_sandbox.router.imitation import COPY_PATH, Imitation
from skupper_sandbox.router.node import Router

from ..errors import RouterConfigError

AMQP_PORT = 5672


class _RouterLogFormat(logging.Formatter):
    """skrouterd's line shape: ``2025-01-02 03:04:05.678901 +0000 SERVER (info) message``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(record.created))
        micros = int((record.created % 1) * 1_000_000)
        level = {"WARNING": "warning", "ERROR": "error", "CRITICAL": "critical"}.get(
            record.levelname, "info"
        )
        module = getattr(record, "skmodule", "ROUTER")
        return f"{stamp}.{micros:06d} +0000 {module} ({level}) {record.getMessage()}"


def _configure_logging() -> logging.Logger:
    # skrouterd logs to stderr
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RouterLogFormat())
    logger = logging.getLogger("skupper_sandbox.router")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def standalone(host: hostenv.HostInfo) -> RouterConfig:
    """The image's default config: standalone, one listener on 0.0.0.0:amqp (here the
    host's address), nothing else."""
    identity = RouterIdentity(f"Standalone_{uuid.uuid4().hex[:20]}", "standalone", "", "")
    amqp = Listener("amqp", "normal", host.address, AMQP_PORT, None, False)
    return RouterConfig(identity, listeners=[amqp])


def _stop_on_sigterm(log: logging.Logger) -> None:
    """skrouterd shuts down on SIGTERM and exits 0."""

    def stop(signum: int, frame: object) -> None:
        log.info("Shut Down", extra={"skmodule": "SERVER"})
        sys.stderr.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)


def main() -> int:
    lifeline.hold()
    log = _configure_logging()
    try:
        host = hostenv.current_host()
    except (hostenv.NotOnSandboxHost, OSError) as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 1
    imitation = Imitation()
    started = imitation.config(host, os.environ)
    for line in started.stdout:
        print(line, flush=True)
    for line in started.stderr:
        print(line, file=sys.stderr, flush=True)
    _stop_on_sigterm(log)
    if started.text is None:
        config = standalone(host)
        log.info("Router started in Standalone mode")
        log.info("Version: %s", imitation.version())
        asyncio.run(Router(config, host).run())
        return 0
    try:
        config = parse(started.text, source=COPY_PATH)
        check_ssl_profiles(config, hostenv.container_path)
    except RouterConfigError as exc:
        log.critical("Router start-up failed: %s", exc)
        return 1
    mode = config.router.mode.capitalize()
    log.info("Router started in %s mode, area=0 id=%s", mode, config.router.id)
    log.info("Version: %s", imitation.version())
    asyncio.run(Router(config, host).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
