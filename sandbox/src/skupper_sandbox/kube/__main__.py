"""``python -m skupper_sandbox.kube``: the sandbox's Kubernetes API and controller.

Runs in the foreground until SIGTERM or SIGINT (then stops its router pods); SIGHUP
re-reads ``DIR/kube/fault.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.kube import resources
from skupper_sandbox.kube.controller import Controller
from skupper_sandbox.kube.kubeconfig import ensure_credentials
from skupper_sandbox.kube.server import KubeApi, read_fault
from skupper_sandbox.kube.store import Store

log = logging.getLogger("skupper_sandbox.kube")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m skupper_sandbox.kube",
        description="Serve the sandbox's Kubernetes API and run its controller.",
    )
    parser.add_argument("--world-dir", type=Path, required=True, help="the world's directory")
    parser.add_argument("--host-dir", type=Path, required=True, help="DIR/hosts/crc")
    parser.add_argument("--address", required=True, help="the cluster's loopback address")
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--interval", type=float, default=0.5, help="controller period (s)")
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    kube_dir = args.world_dir / "kube"
    credentials = ensure_credentials(kube_dir, args.address, args.port)
    store = Store(kube_dir / "state.json")
    release = hostenv.load_host_info(args.host_dir).skupper_version
    api = KubeApi(
        store, credentials, args.address, args.port, kube_dir / "pods", resources.served(release)
    )
    controller = Controller(
        store,
        kube_dir=kube_dir,
        host_dir=args.host_dir,
        address=args.address,
        interval=args.interval,
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()

    def reread_fault() -> None:
        task = loop.create_task(api.apply_fault(read_fault(kube_dir)))
        pending.add(task)
        task.add_done_callback(pending.discard)

    loop.add_signal_handler(signal.SIGHUP, reread_fault)
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    loop.add_signal_handler(signal.SIGINT, stopping.set)
    await api.apply_fault(read_fault(kube_dir))
    log.info("Kubernetes API on https://%s:%s", args.address, args.port)
    reconciling = asyncio.create_task(controller.run())
    try:
        await stopping.wait()
    finally:
        reconciling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reconciling
        await controller.stop()
        await api.stop()
    log.info("stopped")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
