"""When the emulated system-controller asks its routers: soon after a change, then less
and less often, and rarely when nothing wakes it."""

import pytest

from skupper_sandbox.emulated import controller
from skupper_sandbox.emulated.controller import QueryPacing


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
