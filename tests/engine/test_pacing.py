"""The pauses between the reads of a site that an operation waits for."""

from skupper_mcp.engine.verify import POLL, Pacing


def test_pauses_start_short_and_grow_to_a_ceiling() -> None:
    pacing = Pacing()
    pauses = [pacing.take(60.0) for _ in range(10)]
    assert pauses[0] == POLL
    assert pauses == sorted(pauses)
    assert pauses[-1] == 2.0
    # 33 sites read for 25 s: about 15 reads each, not the 80 a fixed 0.3 s pause makes
    pacing, spent, reads = Pacing(), 0.0, 1
    while spent < 25.0:
        spent += pacing.take(25.0 - spent)
        reads += 1
    assert reads < 20


def test_no_pause_goes_past_the_deadline() -> None:
    pacing = Pacing()
    for _ in range(6):
        pacing.take(60.0)
    assert pacing.take(0.4) == 0.4
    assert pacing.take(-1.0) == 0.0
