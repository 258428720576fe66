"""Faults on demand, measured the way the product meets them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from polling import wait_for
from skupper_sandbox.testing import World

pytestmark = pytest.mark.sandbox


async def _connect(address: str, port: int, timeout: float = 10.0) -> None:
    """Connect and close; raises what the connect raised (a dropped SYN: TimeoutError)."""
    _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout)
    writer.close()
    await writer.wait_closed()


#: A slow fault's delay that tells a delayed command from a busy machine's slow one.
SLOW_APART = 60


@pytest.fixture
def restored(world: World) -> Iterator[World]:
    """The world, with every host restored after the test whatever it did."""
    try:
        yield world
    finally:
        world.restore_all()


async def test_down_refuses_connections_at_once(restored: World) -> None:
    rhel = restored.hosts["rhel-ai"]
    restored.fault("rhel-ai", "down")
    for port in (2222, rhel.ports["model"]):
        # refused, not dropped: a dropped SYN would be a TimeoutError, whatever the load
        with pytest.raises(ConnectionRefusedError):
            await _connect(rhel.address, port)
    await _connect(restored.hosts["local"].address, 2222)
    status = restored.sandbox("status")
    assert "down" in status.stdout
    restored.fault("rhel-ai", "restore")
    await _connect(rhel.address, 2222)


async def test_blackhole_makes_connects_time_out(restored: World) -> None:
    rhtevan = restored.hosts["rhtevan-work"]
    restored.fault("rhtevan-work", "blackhole")
    with pytest.raises(TimeoutError):
        await _connect(rhtevan.address, 2222, timeout=1.0)
    await _connect(restored.hosts["rhel-ai"].address, 2222)
    restored.fault("rhtevan-work", "restore")
    await _connect(rhtevan.address, 2222)


def test_down_and_blackhole_keep_the_hosts_processes_running(restored: World) -> None:
    restored.fault("rhel-ai", "down")
    restored.fault("rhel-ai", "restore")
    status, out, _ = restored.ssh("rhel-ai", "podman ps --format '{{.Names}}'")
    assert status == 0 and "hosted-model" in out


def test_slow_delays_every_ssh_command_until_restored(restored: World) -> None:
    restored.fault("local", "slow", "1.5")
    started = time.monotonic()
    assert restored.ssh("local", "echo late")[:2] == (0, "late\n")
    assert time.monotonic() - started >= 1.5  # a lower bound: no load makes it shorter
    # The other host and the restored one are told from a slow one by a delay no load
    # comes near (a busy machine takes seconds over an SSH command, not a minute).
    restored.fault("local", "slow", str(SLOW_APART))
    started = time.monotonic()
    restored.ssh("rhel-ai", "true")
    assert time.monotonic() - started < SLOW_APART / 2
    restored.fault("local", "restore")
    started = time.monotonic()
    restored.ssh("local", "true")
    assert time.monotonic() - started < SLOW_APART / 2


def test_kill_router_kills_only_the_router_containers(restored: World) -> None:
    image = "docker.io/library/busybox:latest"
    status, _, err = restored.ssh(
        "rhtevan-work",
        f"podman run -d --name default-skupper-router {image} sleep 300 >/dev/null"
        f" && podman run -d --name bystander {image} sleep 300 >/dev/null",
    )
    assert status == 0, err
    try:
        restored.fault("rhtevan-work", "kill-router")

        def router_state() -> str:
            return restored.ssh(
                "rhtevan-work",
                "podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "
                "default-skupper-router bystander",
            )[1]

        wait_for(
            lambda: router_state().split()[:2] == ["exited", "137"],
            what="the killed router to exit 137",
        )
        assert router_state().split()[2] == "running"
    finally:
        restored.ssh("rhtevan-work", "podman rm -f default-skupper-router bystander")


def _kube_call(world: World) -> int:
    """HTTP status of a namespace list with the world's kubeconfig (0: not reachable)."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError

    assert world.info.kube is not None
    api_client = config.new_client_from_config(world.info.kube.kubeconfig, context="crc-admin")
    api_client.configuration.retries = 0
    try:
        client.CoreV1Api(api_client).list_namespace(_request_timeout=2)
    except ApiException as exc:
        return int(exc.status)
    except HTTPError:
        return 0
    finally:
        api_client.close()
    return 200


def test_crc_faults_unauthenticated_down_restore(restored: World) -> None:
    assert restored.info.kube is not None, "the world has no Kubernetes API"
    assert _kube_call(restored) == 200
    restored.fault("crc", "unauthenticated")
    wait_for(lambda: _kube_call(restored) == 401, what="the cluster's API to answer 401")
    restored.fault("crc", "down")
    wait_for(lambda: _kube_call(restored) == 0, what="the cluster's API to stop answering")
    restored.fault("crc", "restore")
    wait_for(lambda: _kube_call(restored) == 200, what="the cluster's API to answer 200 again")


def test_bad_fault_requests_are_usage_errors(world: World) -> None:
    unknown = world.sandbox("fault", "nowhere", "down")
    assert unknown.returncode == 2 and "rhel-ai" in unknown.stderr
    wrong = world.sandbox("fault", "rhel-ai", "slow", "soon")
    assert wrong.returncode == 2 and "seconds" in wrong.stderr
