"""Time to first heard sound on the real endpoint, and the silence measures it reports."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from strands_voice_tools.bench.heard import heard_gaps_ms, measure_heard

RATE = 24_000


def _pcm(*parts: tuple[float, float]) -> bytes:
    """(seconds, amplitude) parts: amplitude 0 is silence, else a 200 Hz tone."""
    chunks = []
    for seconds, amplitude in parts:
        n = round(seconds * RATE)
        chunks.append(amplitude * np.sin(np.arange(n) * 2 * np.pi * 200 / RATE))
    return (np.concatenate(chunks) * 32767).astype("<i2").tobytes()


def test_gaps_are_the_silences_a_listener_hears() -> None:
    lead, inside, trail = heard_gaps_ms(_pcm((0.33, 0.0), (0.5, 0.2), (0.4, 0.0), (0.5, 0.2), (0.55, 0.0)))
    assert (lead, inside, trail) == (330.0, 400.0, 550.0)
    assert heard_gaps_ms(_pcm((0.5, 0.0))) == (None, None, None)
    assert heard_gaps_ms(b"") == (None, None, None)


def test_measure_heard_on_the_real_endpoint(endpoint_server: Any) -> None:
    """One trial, no warm-up: every figure is there; the audio figures (not timings) meet the policy."""
    figures = asyncio.run(measure_heard(endpoint_server.ws_url, trials=1, warmups=0))
    for key in ("short_ttfb_ms", "short_heard_ms", "long_ttfb_ms", "long_heard_ms", "sentence_gap_ms"):
        assert figures[key]["n"] == 1, key
    assert figures["short_heard_ms"]["median"] >= figures["short_ttfb_ms"]["median"]
    assert figures["lead_silence_ms"]["max"] <= 30.0  # trimmed: no 330 ms lead-in
    assert 250.0 <= figures["sentence_gap_ms"]["median"] <= 500.0  # the policy's pause, not ~900 ms
    assert figures["two_sentences_stall_ms"]["n"] == 1  # played through: its stall is known
    assert figures["short_after_cancel_heard_ms"]["n"] == 1  # the answer after a barge-in
    raw = asyncio.run(measure_heard(endpoint_server.ws_url, trials=1, warmups=0, query="?trim=0"))
    assert raw["lead_silence_ms"]["min"] >= 200.0  # Kokoro's own lead-in, untrimmed
