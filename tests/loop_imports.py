"""Run in a fresh interpreter by ``test_connectors_kube``: a KubeConnector's calls of every
kind (access check, core, apps, custom objects) against the cluster of the kubeconfig in
``argv[1]``; prints, as its last line, the JSON list of the ``kubernetes`` modules that were
imported on the event loop's thread. The client's import costs a second and a half of CPU
(its API classes are loaded lazily, on first use), which holds the loop 5-13 s on a busy
machine: every deadline on the loop (an SSH channel's 5 s) counts it."""

from __future__ import annotations

import asyncio
import importlib.abc
import importlib.machinery
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

LOOP_THREAD = threading.get_ident()  # asyncio.run below runs the loop on this thread
on_loop: list[str] = []


class _Watch(importlib.abc.MetaPathFinder):
    """Notes each kubernetes module imported on the loop's thread; finds nothing itself."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] == "kubernetes" and threading.get_ident() == LOOP_THREAD:
            on_loop.append(fullname)
        return None


async def main(kubeconfig: Path) -> None:
    from skupper_mcp.connectors.kube import KubeConnector

    kube = KubeConnector(kubeconfig, "crc-admin", timeout=10)
    try:
        await kube.check_access()
        await kube.list_services()
        await kube.list_pods()
        await kube.get_deployment("absent")
        await kube.list("sites")
    finally:
        await kube.close()


if __name__ == "__main__":
    sys.meta_path.insert(0, _Watch())
    asyncio.run(main(Path(sys.argv[1])))
    print(json.dumps(sorted(set(on_loop))))
