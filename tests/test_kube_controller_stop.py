"""The Kubernetes imitation's controller loop ends when its cluster stops it, whatever else
happens at that moment: a loop that missed its cancel kept running, the cluster's stop waited
on it until the cluster was killed, and the killed cluster's router pods ran on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hostkit import write_host
from skupper_sandbox.kube import resources
from skupper_sandbox.kube.controller import Controller
from skupper_sandbox.kube.store import Store


async def test_the_loop_ends_on_a_cancel_that_comes_with_a_wake_up(tmp_path: Path) -> None:
    host = write_host(tmp_path, "crc", "127.206.1.1", role="kubernetes")
    (tmp_path / "kube").mkdir()
    store = Store(tmp_path / "kube" / "state.json")
    controller = Controller(
        store,
        kube_dir=tmp_path / "kube",
        host_dir=Path(host.host_dir),
        address=host.address,
    )
    passed = asyncio.Event()

    async def reconcile() -> None:  # nothing to reconcile: only the loop is under test
        passed.set()

    controller.reconcile = reconcile  # type: ignore[method-assign]
    loop = asyncio.create_task(controller.run())
    await asyncio.wait_for(passed.wait(), 10)  # its first pass made, the loop waits
    # A store change (or a router's exit) and the cluster's SIGTERM in one turn of the
    # event loop: Python 3.11's asyncio.wait_for returned the wake-up and lost the cancel.
    store.create(resources.NAMESPACES, None, {"metadata": {"name": "changed"}})
    loop.cancel()
    done, _ = await asyncio.wait({loop}, timeout=10)
    assert loop in done and loop.cancelled(), "the controller's loop did not end on its cancel"
    await controller.stop()
