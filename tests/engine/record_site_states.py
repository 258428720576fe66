"""Record ``site_states/``: the real site-state script's output, read from a sandbox world.

The planning tests (``test_planning.py``) plan against these recordings instead of a world.
Re-record them whenever the site-state script, Skupper's emulation or the product's units
change (a stale recording plans against a host that no longer exists):

    .venv/bin/python tests/engine/record_site_states.py

and then the results the view's, renderers' and CLI's tests read, which are the operations'
answers over these recordings (``tests/record_results.py``):

    .venv/bin/python tests/record_results.py

It starts a world of two providers without Kubernetes, reads every host after each phase
(nothing, ``setup``, ``down rhel-ai``, ``down all``, ``up rhel-ai``), and writes what it read
with the world's directory replaced by ``/world`` and the link Secrets' certificates by the
placeholders the tests' fake certificate reads answer with (the script itself never sends a
private key: it redacts ``tls.key``).
"""

from __future__ import annotations

import asyncio
import base64
import re
import sys
import tempfile
from pathlib import Path

from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.sitemap import model_url
from skupper_mcp.facts.site_state import site_state_script
from skupper_mcp.topology import Topology, load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

HERE = Path(__file__).resolve().parent / "site_states"
HOSTS = ("rhel-ai", "rhtevan-work", "local")
#: Topology keys that name files of the recording machine: never recorded.
MACHINE_KEYS = re.compile(r"^(STATE_DIR|SSH_IDENTITY|SSH_KNOWN_HOSTS|\w+_KUBECONFIG)=.*\n", re.M)
_SECRET_FIELD = re.compile(r"^(\|  (ca\.crt|tls\.crt): ).*$", re.M)


def placeholder(name: str, site: str) -> str:
    """What the tests' fake client-certificate read answers for ``name`` of ``site``."""
    return base64.b64encode(f"recorded {name} of {site}".encode()).decode()


def scrub(text: str, world: World) -> str:
    """The recording without the world's directory or any certificate material."""
    text = text.replace(str(world.dir), "/world")
    parts = re.split(r"(?m)^(?=@@)", text)
    out = []
    for part in parts:
        match = re.match(r"@@file input Secret-link-([a-z0-9-]+)\.yaml\n", part)
        if match:
            site = match.group(1)

            def fake(m: re.Match[str], site: str = site) -> str:
                return m.group(1) + placeholder(m.group(2), site)

            part = _SECRET_FIELD.sub(fake, part)
        out.append(part)
    return "".join(out)


def read_states(world: World, topology: Topology) -> dict[str, str]:
    scripts = {
        p.name: site_state_script(p.namespace, model_url(p.endpoints[0]))
        for p in topology.providers
    }
    scripts["local"] = site_state_script(topology.local.namespace)
    states = {}
    for host in HOSTS:
        code, out, err = world.ssh(host, scripts[host])
        if "@@end" not in out:
            raise SystemExit(f"{host}: the state read did not finish ({code}): {err[-400:]}")
        states[host] = scrub(out, world)
    return states


async def operate(world: World, phase: str) -> None:
    async with Engine(load_topology(world.topology)) as engine:
        if phase == "up":
            result = await engine.setup()
        elif phase == "rhel-ai-down":
            result = await engine.down("rhel-ai")
        elif phase == "down":
            result = await engine.down("all")
        else:
            result = await engine.up("rhel-ai")
    if not result.ok:
        raise SystemExit(f"{phase}: {result.summary}")


def main() -> int:
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_world(Path(tmp), WorldSpec(providers=2, kubernetes=False)) as world,
    ):
        topology = load_topology(world.topology)
        text = world.topology.read_text().replace(str(world.dir), "/world")
        (HERE / "topology.env").write_text(MACHINE_KEYS.sub("", text))
        for phase in ("fresh", "up", "rhel-ai-down", "down", "rhel-ai-up"):
            if phase != "fresh":
                asyncio.run(operate(world, phase))
            (HERE / phase).mkdir(parents=True, exist_ok=True)
            for host, state in read_states(world, topology).items():
                (HERE / phase / f"{host}.txt").write_text(state)
            print(f"recorded {phase}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
