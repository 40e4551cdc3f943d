"""Unit tests of the benchmark's pure helpers: texts, percentiles, playback stall, text/chunk alignment."""

from __future__ import annotations

import math

import pytest
from strands_voice_tools.bench.stats import percentile, simulate_playback, summarize, text_complete_index
from strands_voice_tools.bench.texts import BENCH_TEXT, CONCURRENCY_TEXT, FIRST_SENTENCE


def test_bench_text_is_the_experiments_267_characters_in_four_sentences() -> None:
    assert len(BENCH_TEXT) == 267
    sentences = [part for part in BENCH_TEXT.replace(". ", ".\n").splitlines() if part]
    assert len(sentences) == 4
    assert all(sentence.endswith(".") for sentence in sentences)
    assert sentences[0] == FIRST_SENTENCE
    assert BENCH_TEXT.startswith(FIRST_SENTENCE + " ")
    assert len(CONCURRENCY_TEXT) < 60


def test_percentile_interpolates_between_ranks() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 40.0
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_summarize_reports_median_and_keeps_trials() -> None:
    summary = summarize([3.0, 1.0, 2.0, 10.0, 4.0])
    assert summary["median"] == 3.0
    assert summary["min"] == 1.0
    assert summary["max"] == 10.0
    assert summary["n"] == 5
    assert summary["trials"] == [3.0, 1.0, 2.0, 10.0, 4.0]
    with pytest.raises(ValueError):
        summarize([])


def test_playback_without_gaps_never_stalls() -> None:
    # Each 1 s chunk arrives well before the previous one finishes playing.
    result = simulate_playback([(0.5, 1.0), (0.6, 1.0), (1.2, 1.0)])
    assert result.stall_s == 0.0
    assert result.stalls == 0
    assert result.end_s == pytest.approx(3.5)
    assert result.segments == ((0.5, 3.5),)


def test_playback_counts_each_starved_gap() -> None:
    # Chunk 2 arrives 0.5 s after chunk 1 ran out; chunk 3 arrives 0.25 s after chunk 2 ran out.
    result = simulate_playback([(1.0, 1.0), (2.5, 0.5), (3.25, 1.0)])
    assert result.stall_s == pytest.approx(0.75)
    assert result.stalls == 2
    assert result.end_s == pytest.approx(4.25)
    assert result.segments == ((1.0, 2.0), (2.5, 3.0), (3.25, 4.25))


def test_the_stall_is_the_start_delay_a_player_needs_to_never_wait() -> None:
    # Same arrivals as above: started 0.75 s after the first byte (a 0.75 s silence first), no stall.
    chunks = [(1.0, 1.0), (2.5, 0.5), (3.25, 1.0)]
    assert simulate_playback([(1.0, 0.75), *chunks]).stall_s == 0.0
    assert simulate_playback([(1.0, 0.74), *chunks]).stall_s == pytest.approx(0.01)


def test_playback_of_nothing_is_empty() -> None:
    assert simulate_playback([]).stall_s == 0.0


def test_playback_tolerance_ignores_timer_noise_gaps() -> None:
    result = simulate_playback([(0.0, 1.0), (1.0005, 1.0)], tolerance_s=0.001)
    assert result.stall_s == 0.0
    assert result.stalls == 0
    assert math.isclose(result.end_s, 2.0005)


def test_text_complete_index_finds_the_delta_that_finishes_the_chunk() -> None:
    deltas = ["Here's ", "a ", "**quick** ", "overview. ", "It ", "costs."]
    # The chunk was cleaned for speech: Markdown stars gone, apostrophe kept.
    assert text_complete_index(deltas, "Here's a quick overview.") == 3
    assert text_complete_index(deltas, "Here's a quick overview. It costs.") == 5
    assert text_complete_index(deltas, "Something else entirely.") is None
    assert text_complete_index(deltas, "...") is None


def test_text_complete_index_skips_symbols_the_cleaner_dropped() -> None:
    deltas = ["See [the docs](https://x.io) ", "now. ", "Then go."]
    assert text_complete_index(deltas, "See the docs now.") == 1
