"""When the emulated system-controller asks its routers: soon after a change, then less
and less often, and rarely when nothing wakes it; which router log lines are a change."""

from pathlib import Path

import pytest

from skupper_sandbox.emulated import controller
from skupper_sandbox.emulated.controller import QueryPacing
from skupper_sandbox.emulated.router_news import RouterLogs


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(controller.time, "monotonic", lambda: now[0])
    return now


def intervals(pacing: QueryPacing, clock: list[float], count: int) -> list[float]:
    found = []
    for _ in range(count):
        clock[0] += pacing.wait()
        pacing.queried(answer_changed=False)
        found.append(pacing.wait())
    return found


def test_unchanged_answers_space_the_queries_out_to_the_idle_backstop(clock: list[float]) -> None:
    pacing = QueryPacing()
    assert pacing.wait() == 0.0  # a controller that starts asks at once
    assert intervals(pacing, clock, 7) == [1.0, 2.0, 4.0, 8.0, 60.0, 60.0, 60.0]


def test_a_change_or_a_new_answer_brings_the_next_query_close(clock: list[float]) -> None:
    pacing = QueryPacing()
    intervals(pacing, clock, 6)
    assert pacing.wait() == controller.IDLE_QUERY_SECONDS
    clock[0] += 10
    pacing.changed()  # a log line, a file, the container: ask within half a second
    assert pacing.wait() == controller.FIRST_QUERY_SECONDS
    clock[0] += pacing.wait()
    pacing.queried(answer_changed=True)
    assert pacing.wait() == controller.FIRST_QUERY_SECONDS
    assert intervals(pacing, clock, 2) == [1.0, 2.0]


FLOW = b"2026-12-01 12:50:13.244136 +0000 FLOW_LOG (info) BIFLOW_TPORT [sxEHj:84] BEGIN END\n"
OPENED = b"2026-12-01 12:38:06.489359 +0000 ROUTER_CORE (info) [C3] Connection Opened: dir=out\n"
PROBED = (
    b"2026-12-01 13:40:02.487026 +0000 SERVER (info) [C9] Accepted connection to"
    b" 127.40.63.2:8000 from 127.0.0.1:55416\n"
    b"2026-12-01 13:40:02.488182 +0000 SERVER (error) [C9] Connection from 127.0.0.1:55416"
    b" (to 127.40.63.2:8000) failed: amqp:connection:framing-error No protocol header found\n"
)
FAILED = (
    b"2026-12-01 12:56:39.380117 +0000 SERVER (error) [C9] Connection to 127.75.223.9:55671"
    b" failed: amqp:connection:framing-error SSL Failure: certificate verify failed\n"
)


def test_router_log_lines_are_news_unless_they_are_flow_records(tmp_path: Path) -> None:
    log = tmp_path / "ctr.log"
    log.write_bytes(OPENED)
    logs = RouterLogs()
    assert not logs.news_in(log)  # the first look only learns where the log ends
    with log.open("ab") as out:
        out.write(FLOW * 3)
    assert not logs.news_in(log)  # a probe through a listener changes nothing reported
    with log.open("ab") as out:
        out.write(PROBED)
    assert not logs.news_in(log)  # nor does a TCP probe of the link port
    with log.open("ab") as out:
        out.write(OPENED[:30])
    assert not logs.news_in(log)  # a line still being written
    with log.open("ab") as out:
        out.write(OPENED[30:])
    assert logs.news_in(log)
    assert not logs.news_in(log)
    with log.open("ab") as out:
        out.write(FAILED)
    assert logs.news_in(log)  # a link that fails to connect
    log.write_bytes(FLOW)  # a new container's log
    assert logs.news_in(log)
    log.unlink()
    assert logs.news_in(log)  # the container is gone
    assert not logs.news_in(log)


def test_a_status_write_never_brings_back_a_directory_removed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload removes runtime/ and renders it again; the controller, woken by that very
    change, may write a status between its look and its write. It must not make the
    directory again: that is the reload's to do, from its own input."""
    resources = tmp_path / "runtime" / "resources"
    resources.mkdir(parents=True)
    site = {"apiVersion": "skupper.io/v2alpha1", "kind": "Site", "metadata": {"name": "s1"}}
    documents = controller.ParsedFiles.documents

    def removed_after_the_look(self: controller.ParsedFiles, path: Path) -> list[dict]:
        found = documents(self, path)
        resources.rmdir()  # the reload's removal, just after the controller looked
        return found

    monkeypatch.setattr(controller.ParsedFiles, "documents", removed_after_the_look)
    assert not controller._write_if_changed(resources, site)
    assert not resources.exists()
