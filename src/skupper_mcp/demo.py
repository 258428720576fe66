"""``make demo`` until the sandbox takes over: the precheck and resolve on the example.

The example's hosts are moved onto unused loopback addresses first, so nothing leaves the
machine: every provider is then unreachable, which is what the demo shows the precheck
reporting (concurrently, each within the connect timeout).
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path

from skupper_mcp.engine import Engine
from skupper_mcp.render import check_text, resolve_text
from skupper_mcp.topology import load_topology

EXAMPLE = Path(__file__).resolve().parents[2] / "topology.env.example"
LOOPBACK = {
    "rhel-ai.example.com": "127.207.0.12",
    "203.0.113.10": "127.207.0.12",
    "rhtevan-work.example.com": "127.207.0.13",
    "198.51.100.20": "127.207.0.13",
    "host.crc.testing": "127.207.0.11",
    "192.168.127.254": "127.207.0.11",
}


def offline_copy(source: Path, directory: Path) -> Path:
    """The example with its hosts replaced by loopback addresses where nothing listens."""
    text = source.read_text()
    for name, address in LOOPBACK.items():
        text = text.replace(name, address)
    text = re.sub(r"(?m)^SSH_CONNECT_TIMEOUT=.*$", "SSH_CONNECT_TIMEOUT=2", text)
    path = directory / "topology.env"
    path.write_text(text)
    return path


def say(text: str = "") -> None:
    print(text, flush=True)


async def demo(path: Path) -> None:
    topology = load_topology(path)
    async with Engine(topology) as engine:
        say("== skupper-mcp setup --check (precheck of every site, concurrently) ==")
        start = time.monotonic()
        result = await engine.check()
        say(check_text(result))
        say(f"(took {time.monotonic() - start:.1f}s for {len(topology.host_names())} sites)")
        for name in ("g3b-16k", "rhel-ai", "crc"):
            say()
            say(f"== skupper-mcp resolve {name} ==")
            say(resolve_text(await engine.resolve(name)))
    say()
    say("What this showed: the topology.env.example diagram with its real values; the")
    say("precheck failing SSH for both providers (their addresses were moved to loopback")
    say("addresses where nothing listens, so nothing left this machine) and reporting the")
    say("local site's tools and ports; resolve turning a profile into its host, a host into")
    say("its default profile (the active one cannot be read from an unreachable host), and")
    say("the Kubernetes site into a consumer with no model. Against the sandbox (skupper-mcp")
    say("sandbox up) the same commands find every host reachable.")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="skupper-mcp-demo-") as directory:
        asyncio.run(demo(offline_copy(EXAMPLE, Path(directory))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
