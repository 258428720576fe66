"""T9b, T10a-T10c: the Kubernetes consumer site (CRC) through the Kubernetes API."""

from __future__ import annotations

import httpx
import pytest

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_sandbox.testing import World

from .conftest import bound
from .helpers import faulted, only_up, outcomes

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CRC_LISTENERS = {"rhel-ai": 8000, "rhtevan-work": 8001}


async def crc_links(engine: Engine) -> dict[str, str]:
    status = await engine.status()
    return {link.to_site: link.status for link in status.links if link.from_site == "crc-sandbox"}


async def test_t9b_up_skips_an_unauthenticated_cluster(built: World, engine: Engine) -> None:
    await only_up(engine, ())
    async with faulted(built, "crc", "unauthenticated") as fresh:
        result = await fresh.up()
    by_host = {s.host: s for s in result.sites}
    assert by_host["crc"].outcome == "skipped"
    assert "401" in (by_host["crc"].reason or "") or "authenticated" in (
        by_host["crc"].reason or ""
    )
    assert {h: by_host[h].outcome for h in ("rhel-ai", "rhtevan-work", "local")} == dict.fromkeys(
        ("rhel-ai", "rhtevan-work", "local"), "up"
    )
    assert sorted(a.host for a in result.model_actions) == ["rhel-ai", "rhtevan-work"]


async def test_t10a_up_crc_recreates_its_links_and_starts_local(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ("rhel-ai", "rhtevan-work"))
    await engine.down("crc")
    result = await engine.up("crc")
    assert result.ok, result.summary
    assert outcomes(result) == {"crc": "up", "local": "up"}
    assert result.model_actions == []
    links = await crc_links(engine)
    assert links == {"hub-rhel-ai": "Ready", "local-sandbox": "Ready"}, links
    # the cluster's certificates are read through the API (its link Secrets' tls.crt and
    # ca.crt): the first to end is shown, years ahead, as the sites issued them
    crc_row = next(s for s in (await engine.status()).sites if s.host == "crc")
    assert crc_row.certificate is not None and crc_row.certificate.kind == "link", crc_row
    assert crc_row.certificate.days_left > 365, crc_row.certificate

    async def both_bound() -> bool:
        return all([await bound(built, "crc", port) for port in CRC_LISTENERS.values()])

    await eventually(both_bound, timeout=20, every=0.3, what="both listeners to bind")
    # rhtevan-work is reached through the local site: two hops, real TCP, real HTTP
    url = f"http://{built.addresses['crc']}:{CRC_LISTENERS['rhtevan-work']}/v1/models"
    async with httpx.AsyncClient(timeout=10) as http:
        models = (await http.get(url)).json()
    assert [m["id"] for m in models["data"]] == ["granite-3.3-2b-instruct"]


async def test_t10b_down_crc_deletes_its_links_and_keeps_local(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ("rhel-ai", "rhtevan-work"))
    await engine.up("crc")
    result = await engine.down("crc")
    assert result.ok, result.summary
    assert outcomes(result) == {"crc": "down", "local": "up"}
    assert result.model_actions == []
    assert set((await crc_links(engine)).values()) == {"absent"}


async def test_t10c_down_crc_with_no_provider_active_stops_local(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ())
    await engine.up("crc")
    await engine.down("rhel-ai")
    await engine.down("rhtevan-work")
    result = await engine.down("crc")
    assert result.ok, result.summary
    assert outcomes(result) == {"crc": "down", "local": "down"}
