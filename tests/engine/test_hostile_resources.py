"""What a host's resource files cannot do to a read: an alias bomb or an oversized file is
that site's typed error (a ``SiteStateError`` naming the file) within moments, and while one
host's files are parsing, another host's read answers in its usual time.

The states are the real output of the site-state script (``site_states/up``), with hostile
files added where the script prints them."""

from __future__ import annotations

import contextlib
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest

from fake_connector import FakeConnector
from polling import eventually
from skupper_mcp.errors import SiteStateError
from skupper_mcp.facts.site_state import parse_site_state
from skupper_mcp.sites.podman import PodmanSite

#: A little under the longest resource file read (``resource_yaml.MAX_RESOURCE_CHARS``); the
#: attacks use plain numbers so that they run, and fail, on a tree without the bounds.
NEAR_CAP = 127 * 1024
UP = Path(__file__).resolve().parent / "site_states" / "up" / "rhel-ai.txt"

#: The reproduced bomb's shape (468 bytes there): nine anchors, each a list of ten aliases of
#: the one before, so the Listener's routing key is 10**9 strings once composed.
BOMB = "\n".join(
    [
        "apiVersion: skupper.io/v2alpha1",
        "kind: Listener",
        "metadata: {name: bomb}",
        "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]",
        *(f"x{i}: &a{i} [{', '.join(f'*a{i - 1}' for _ in range(10))}]" for i in range(1, 9)),
        "spec: {routingKey: *a8, host: 127.0.0.1, port: 9000}",
    ]
)


def with_files(files: dict[str, str], state: Path = UP) -> str:
    """The recorded state with ``files`` (input/resources names) added before its end."""
    text = state.read_text()
    added = "".join(
        f"@@file input {name}\n" + "".join(f"|{line}\n" for line in body.split("\n"))
        for name, body in files.items()
    )
    head, end = text.rsplit("@@end", 1)
    return head + added + "@@end" + end


def site(host: str, output: str) -> PodmanSite:
    fake = FakeConnector(host)
    fake.on("@@section version", output)
    return PodmanSite(fake, "default")


def keys_heavy(chars: int, kind: str = "Listener", name: str = "slow") -> str:
    """A plain resource, no anchor, about ``chars`` long: all short mapping keys, the
    slowest text per character for the YAML constructor."""
    head = f"kind: {kind}\nmetadata: {{name: {name}}}\nspec:\n"
    rows = (chars - len(head)) // len("  key00000000: [1, 2]\n")
    return head + "".join(f"  key{i:08d}: [1, 2]\n" for i in range(rows))


def one_scalar(chars: int, name: str) -> str:
    """A plain resource about ``chars`` long that parses quickly: one long string."""
    head = f"kind: Listener\nmetadata: {{name: {name}}}\nspec: {{host: "
    return head + "x" * (chars - len(head) - 1) + "}"


async def test_an_alias_bomb_is_that_sites_typed_error_at_once_and_holds_no_memory() -> None:
    assert len(BOMB) < 1024
    tracemalloc.start()
    started = time.process_time()  # CPU (this thread's and the parse's): load does not stretch it
    try:
        with pytest.raises(SiteStateError) as refused:
            await site("gpu-1", with_files({"Listener-bomb.yaml": BOMB})).read()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.process_time() - started < 5
    assert peak < 32 * 1024 * 1024
    message = str(refused.value)
    assert "input/resources/Listener-bomb.yaml" in message
    assert "anchors or aliases" in message


async def test_an_oversized_resource_file_is_refused_before_it_is_parsed() -> None:
    big = keys_heavy(200 * 1024)
    with pytest.raises(SiteStateError, match=r"Listener-big\.yaml.*more than the 131072"):
        await site("gpu-1", with_files({"Listener-big.yaml": big})).read()


async def test_a_file_past_the_whole_bound_is_named_and_so_are_the_files_after_it() -> None:
    """The finding's 14 MiB file: counted against the bound of all files, it was refused as
    "resource files holding more than ..." without its name or the bomb's after it, so the
    user could not tell which file to remove (the hostile world, tests/sandbox)."""
    files = {
        "Listener-big.yaml": keys_heavy(14 * 1024 * 1024),
        "Listener-bomb.yaml": BOMB,
        "Listener-plain.yaml": "kind: Listener\nmetadata: {name: plain}\nspec: {port: 9000}\n",
    }
    output = with_files(files)  # 14 MiB stuffed: made once for both reads
    with pytest.raises(SiteStateError) as refused:
        await site("gpu-1", output).read()
    message = str(refused.value)
    assert "Listener-big.yaml that is not read: it holds" in message, message
    assert "Listener-bomb.yaml that is not read: it uses YAML anchors" in message, message
    state = parse_site_state(output)
    assert ("Listener", "plain") in state.input_resources  # the files after it were read


def test_all_of_a_sites_files_together_are_bounded_and_so_is_their_parse_time() -> None:
    from skupper_mcp.facts.resource_yaml import MAX_RESOURCE_CHARS
    from skupper_mcp.facts.site_state import MAX_RESOURCES_CHARS

    many = {
        f"Listener-l{i}.yaml": one_scalar(MAX_RESOURCE_CHARS - 64, name=f"l{i}")
        for i in range(MAX_RESOURCES_CHARS // MAX_RESOURCE_CHARS + 1)
    }
    state = parse_site_state(with_files(many))
    assert any("more than 2097152 characters" in r for r in state.refused)
    slow = {
        f"Listener-s{i}.yaml": keys_heavy(MAX_RESOURCE_CHARS - 64, name=f"s{i}") for i in range(8)
    }
    started = time.thread_time()  # CPU, which load does not stretch: the parse's own
    state = parse_site_state(with_files(slow), budget=0.05)
    assert time.thread_time() - started < 3  # the budget stops the parse, not only the wait
    assert any("took more than 0.05 s to parse" in r for r in state.refused)


def test_anchors_are_refused_but_an_ampersand_or_asterisk_in_a_value_is_text() -> None:
    plain = "kind: Listener\nmetadata: {name: amp}\nspec: {host: 'a&b', routingKey: '*k*'}\n"
    state = parse_site_state(with_files({"Listener-amp.yaml": plain}))
    assert not state.refused
    assert state.input_resources[("Listener", "amp")]["spec"]["routingKey"] == "*k*"
    anchored = "kind: Listener\nmetadata: &m {name: anchored}\nspec: {}\n"
    state = parse_site_state(with_files({"Listener-anchored.yaml": anchored}))
    assert state.refused and ("Listener", "anchored") not in state.input_resources


async def test_a_healthy_sites_read_answers_while_a_hostile_sites_parse_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hostile files within the bounds still take the parser seconds: that work runs in a
    worker thread, so the other host's read (its usual time: milliseconds) does not wait."""
    from skupper_mcp.sites import podman as podman_site

    slow = {f"Listener-s{i}.yaml": keys_heavy(NEAR_CAP, name=f"s{i}") for i in range(8)}
    hostile = site("gpu-bad", with_files(slow))
    healthy = site("gpu-ok", UP.read_text())
    await healthy.read()  # warm, as a second status finds it
    finished: list[str] = []
    parsing = threading.Event()  # the next parse, the hostile one, has begun
    parse = podman_site.parse_site_state

    def noted(*args: Any, **kwargs: Any) -> Any:
        parsing.set()
        return parse(*args, **kwargs)

    monkeypatch.setattr(podman_site, "parse_site_state", noted)

    async def hostile_parse_begun() -> bool:
        return parsing.is_set()

    async def hostile_read() -> None:
        with contextlib.suppress(SiteStateError):
            await hostile.read()
        finished.append("hostile")

    async def healthy_read() -> None:
        # the call is made once the hostile parse is under way: a parse on the event loop
        # would hold back the wake-up itself, and the read after it
        await eventually(hostile_parse_begun, every=0.01, what="the hostile parse to begin")
        state = await healthy.read()
        finished.append("healthy")
        assert state.complete and state.input_resources

    async with anyio.create_task_group() as tg:
        tg.start_soon(healthy_read)
        tg.start_soon(hostile_read)
    # the order, not a time a busy machine stretches: on the event loop the hostile parse
    # (9.6 s on main) came first whatever the load
    assert finished == ["healthy", "hostile"], finished


def test_the_parsed_documents_kept_are_bounded_in_characters_oldest_out_first() -> None:
    """A host that sends new text on every read cannot grow what the parser keeps."""
    from skupper_mcp.facts.resource_yaml import _Kept

    kept = _Kept(1000)
    for i in range(50):
        kept.put(f"text {i:02d} " + "x" * 40, "{}")
        assert kept.chars <= 1000
    assert kept.get("text 49 " + "x" * 40) == "{}"
    assert kept.get("text 00 " + "x" * 40) is None
    kept.put("y" * 2000, "{}")  # larger than the whole bound: never kept
    assert kept.get("y" * 2000) is None
