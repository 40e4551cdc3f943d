"""``bench --talk --calls``' and ``bench --soak``'s own arithmetic: what the stand-in answers to what it
heard, the calls a machine holds from the table, and what counts as a leak."""

from __future__ import annotations

from typing import Any

from strands_voice_tools.bench.call_script import ACK, LONG_ANSWER, PAUSED_REPLY, REPLY
from strands_voice_tools.bench.soak import Census, compare
from strands_voice_tools.bench.talk_capacity import answer_for, calls_held, format_capacity


def _row(calls: int, p95_ms: float | None) -> dict[str, Any]:
    v2v = None if p95_ms is None else {"median": p95_ms / 2, "p95": p95_ms, "n": 2, "values": []}
    return {"calls": calls, "voice_to_voice_ms": v2v, "end_of_turn_ms": None, "barge_in_ms": None}


def test_the_stand_in_answers_what_it_heard() -> None:
    assert answer_for("What does the premium plan cost?") == LONG_ANSWER
    assert answer_for("Can I cancel my plan at any time?") == LONG_ANSWER
    assert answer_for("Stop please. What does it cost?") == REPLY  # the interruption, not a question
    assert answer_for("My order number is four two seven.") == PAUSED_REPLY
    assert answer_for("Uh-huh.") == ACK


def test_the_calls_held_are_the_largest_count_whose_p95_holds_with_every_smaller_one() -> None:
    assert calls_held([_row(1, 900.0), _row(2, 1400.0), _row(4, 2600.0)]) == 2
    assert calls_held([_row(4, 1000.0), _row(1, 900.0), _row(2, 1600.0)]) == 1  # 4 holds, but 2 did not
    assert calls_held([_row(1, 1600.0)]) == 0
    assert calls_held([_row(1, None)]) == 0  # nothing measured holds nothing
    table = format_capacity(
        {
            "rows": [{**_row(1, 900.0), "load_average": [1.0]}],
            "target_s": 1.5,
            "calls_held": 1,
            "cores": 2,
            "calls_per_core": 0.5,
        }
    )
    assert "calls held (voice-to-voice p95 <= 1.5 s): 1 on 2 core(s) = 0.5 per core" in table


def test_a_leak_is_memory_or_files_past_the_tolerance_or_any_more_threads_sockets_or_temp_files() -> None:
    first = Census(rss_mb=1000.0, open_files=20, sockets=8, threads=16, temp_files=5)
    assert compare(first, Census(1049.0, 21, 8, 16, 5)) == []  # within 5 %
    assert compare(first, Census(900.0, 18, 6, 12, 3)) == []  # fewer is never a leak
    leaks = compare(first, Census(1051.0, 22, 9, 17, 6))
    assert [leak.split(":")[0] for leak in leaks] == [
        "rss_mb",
        "open_files",
        "sockets",
        "threads",
        "temp_files",
    ]


def test_threads_are_held_to_the_halfway_count_the_worker_pools_size_reached() -> None:
    first = Census(rss_mb=1000.0, open_files=20, sockets=8, threads=17, temp_files=5)
    halfway = Census(1000.0, 20, 8, 19, 5)  # the loop's pool grew to its size: not a leak
    assert compare(first, Census(1000.0, 20, 8, 19, 5), threads_from=halfway) == []
    assert compare(first, Census(1000.0, 20, 8, 20, 5), threads_from=halfway) == ["threads: 19 -> 20"]
