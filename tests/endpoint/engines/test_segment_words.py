"""``synthesize_segments`` with silence trimming and word timestamps together (pure, a fake timed engine).

The words of a segment ride on the output that carries its first sound, timed from that output's first
sample: the leading silence the trimming dropped is taken off, a pause put before it in the same output
is added, and the pause after a segment lasts at least until its last word's end.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
from kokoro_endpoint.engines.interface import SegmentTimingEngine, speech_pieces
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.pipeline import synthesize_segments
from kokoro_endpoint.engines.silence import SilencePolicy
from kokoro_endpoint.engines.speech import G2PToken, SegmentTiming, SpeechSegment

RATE = 24_000
FRAME = 600
LEAD_FRAMES = 12  # 300 ms of leading silence in every segment
WORD_FRAMES = 8  # 200 ms per phoneme char


class FakeTimedEngine:
    """A non-streaming engine (like torch) whose segments are silence, one tone per word, silence."""

    name = "fake"
    sample_rate = RATE
    default_voice = "v"
    voices = frozenset({"v"})

    def __init__(self, trail_frames: int = 12) -> None:
        self.trail_frames = trail_frames

    def warm_up(self) -> None:
        pass

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        return (segment.audio for segment in self.synthesize_timed(text, voice, speed))

    def synthesize_timed(self, text: str, voice: str, speed: float) -> Iterator[SpeechSegment]:
        words = text.rstrip(".,").split()
        tokens = tuple(G2PToken(word, "a", " ") for word in words)
        phonemes = " ".join("a" for _ in words)
        frames = tuple(WORD_FRAMES if char == "a" else 0 for char in phonemes)
        tone = (0.3 * np.sin(np.arange(WORD_FRAMES * FRAME) * 2 * np.pi * 220 / RATE)).astype(np.float32)
        audio = np.concatenate(
            [
                np.zeros(LEAD_FRAMES * FRAME, np.float32),
                *([tone] * len(words)),
                np.zeros(self.trail_frames * FRAME, np.float32),
            ]
        )
        yield SpeechSegment(audio, SegmentTiming(text, 0, tokens, phonemes, frames, LEAD_FRAMES, FRAME))


def test_a_timed_engine_that_cannot_stream_gives_one_piece_per_segment_with_its_timing() -> None:
    engine = FakeTimedEngine()
    assert isinstance(engine, SegmentTimingEngine)
    (piece,) = list(speech_pieces(engine, "one two.", "v", 1.0))
    assert isinstance(piece, SpeechPiece) and piece.segment_end
    assert piece.timing is not None and [t.text for t in piece.timing.tokens] == ["one", "two"]


def test_words_are_timed_from_the_trimmed_output_that_carries_them() -> None:
    engine = FakeTimedEngine()
    policy = SilencePolicy()
    text = "one two. three four."
    outputs = list(
        synthesize_segments(engine, text, "v", 1.0, None, policy, normalize=False, timestamps=True)
    )
    lead = round(RATE * policy.lead_ms / 1000)
    audio = np.concatenate([output.audio for output in outputs])
    sent = 0
    for output in outputs:
        if output.words:
            # The segment's first tone starts exactly at its first word's start_s, after lead_ms of quiet;
            # each later word starts one tone later.
            first = sent + round(output.words[0].start_s * RATE)
            assert not audio[first - lead : first].any() and np.abs(audio[first : first + 240]).max() > 0.1
            for index, word in enumerate(output.words):
                assert text[word.char_start : word.char_end] == word.word
                assert round(word.start_s * RATE) == round(output.words[0].start_s * RATE) + index * 4_800
        sent += output.audio.size
    assert [w.word for o in outputs for w in o.words] == ["one", "two", "three", "four"]
    assert outputs[0].words[0].start_s == lead / RATE  # 300 ms of leading silence cut to lead_ms


def test_the_pause_after_a_segment_lasts_until_its_last_words_end() -> None:
    """The model's durations end the last word after the sound the trimming kept: the pause covers it."""
    policy = SilencePolicy(sentence_pause_ms=0.0)
    text = "one two. three four."

    class LongLastWord(FakeTimedEngine):
        def synthesize_timed(self, text: str, voice: str, speed: float) -> Iterator[SpeechSegment]:
            for segment in super().synthesize_timed(text, voice, speed):
                assert segment.timing is not None
                timing = segment.timing
                frames = (*timing.frames[:-1], timing.frames[-1] + 20)  # 500 ms past the kept sound
                yield SpeechSegment(segment.audio, SegmentTiming(*_fields(timing, frames)))

    engine = LongLastWord(trail_frames=0)
    outputs = list(
        synthesize_segments(engine, text, "v", 1.0, None, policy, normalize=False, timestamps=True)
    )
    sent, words = 0, []
    for output in outputs:
        words += [(sent / RATE + w.start_s, sent / RATE + w.end_s) for w in output.words]
        sent += output.audio.size
    assert all(later[0] >= earlier[1] - 1e-3 for earlier, later in itertools.pairwise(words))
    assert words[-1][1] <= sent / RATE + 1e-3


def _fields(timing: SegmentTiming, frames: tuple[int, ...]) -> tuple[object, ...]:
    return (timing.text, timing.text_start, timing.tokens, timing.phonemes, frames, timing.lead_frames, FRAME)
