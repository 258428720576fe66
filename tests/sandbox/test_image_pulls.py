"""Issue 46 item 3 on a sandbox world: Skupper's images are not on two providers yet.
rhel-ai's pull is slow (``slow-pull``): setup shows it as progress naming each image and
the layers podman copies, within a deadline of its own (beyond the 40 s verify), and sets
the host up. rhtevan-work's registry refuses (``pull-fails``): setup fails there alone,
naming the image, the registry and what the user can do (log in, a mirror); the local site
and rhel-ai are set up."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

import pytest

import product
from skupper_mcp.facts.skupper_version import parse_skupper_version
from skupper_mcp.results import OperationResult
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

SLOW = "rhel-ai"
REFUSED = "rhtevan-work"
#: each image's pull on rhel-ai: two images take more than the 40 s verify together
SECONDS = 30
#: the router release of each Skupper release a world runs (skupper's images.go)
ROUTER = {"2.1.3": "3.4.2", "2.2.1": "3.5.1"}
REASON = "unauthorized: access to the requested resource is not authorized"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    spec = WorldSpec(
        providers=2,
        kubernetes=False,
        host_quirks={SLOW: (f"slow-pull={SECONDS}",), REFUSED: (f"pull-fails={REASON}",)},
    )
    with running_world(tmp_path_factory.mktemp("pulls"), spec) as w:
        yield w


#: setup here can take minutes (a pull, a re-bootstrap) on a loaded machine
cli = functools.partial(product.cli, timeout=900)


def test_a_slow_pull_is_shown_and_a_refused_one_fails_that_host_alone(world: World) -> None:
    said = world.ssh(SLOW, "KUBECONFIG=/dev/null skupper version -p kubernetes")[1]
    release = str(parse_skupper_version(said).cli)
    controller = f"quay.io/skupper/system-controller:{release}"
    router = f"quay.io/skupper/skupper-router:{ROUTER[release]}"
    assert world.ssh(SLOW, f"podman image exists {router}")[0] == 1

    done = cli(world.topology, "setup", "--json")
    result = OperationResult.model_validate(json.loads(done.stdout))
    sites = {s.host: s for s in result.sites}
    progress = done.stderr

    # the slow host: each image named as its pull starts, its layers as podman copies them
    for component, image in (("system-controller", controller), ("router", router)):
        assert f"{SLOW}: pulling the {component} image {image}" in progress, progress
        assert f"{SLOW}: {image}: 1 layers copied; Copying blob sha256:" in progress
        assert f"{SLOW}: {image}: pulled (3 layers copied)" in progress
    assert sites[SLOW].outcome == "up", sites[SLOW].model_dump_json(indent=1)
    pull = next(s for s in sites[SLOW].steps if s.name == "pull images")
    assert pull.ok and pull.seconds >= 2 * SECONDS  # beyond the verify's 40 s, and no timeout
    assert "3 layers" in pull.detail
    assert world.ssh(SLOW, f"podman image exists {router}")[0] == 0

    # the refused host: its failure names the image, the registry and the fixes
    refused = sites[REFUSED]
    assert refused.outcome == "failed"
    reason = refused.reason or ""
    assert f"the system-controller image {controller} from quay.io" in reason
    assert REASON in reason
    assert "podman login quay.io" in reason and "SKUPPER_IMAGE_REGISTRY" in reason
    assert [s.name for s in refused.steps if not s.ok] == ["pull images"]
    assert not any(s.name == "install system controller" for s in refused.steps)

    # the others set up: rhel-ai up; the local site built whole, its one missing link the
    # refused hub's (setup names a consumer failed while a hub it links to is not set up)
    local = sites["local"]
    built = [s for s in local.steps if s.name not in ("links", "verify")]
    assert built and all(s.ok for s in built), local.model_dump_json(indent=1)
    assert local.reason == f"the local site has no link to {REFUSED} (their setup failed)"
    assert not result.ok and done.returncode == 1
