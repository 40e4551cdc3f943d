"""A request's text to its audio: the endpoint's text-to-audio pipeline over any engine.

:func:`synthesize_segments` normalizes the text, cuts it into sentences and phrases, asks the engine for
each one's audio (streamed in pieces where the engine can), shapes the silence between them
(:mod:`kokoro_endpoint.engines.silence`) and places each segment's words (timestamps); every route speaks
through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.frames import WordTiming

from kokoro_endpoint.engines.interface import Engine, speech_pieces
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.silence import SegmentShaper, SilencePolicy, pause_after
from kokoro_endpoint.reading.languages import Reading, normalized
from kokoro_endpoint.scheduling.interrupt import Interrupt, close_iterator
from kokoro_endpoint.text.normalized_text import NormalizedText
from kokoro_endpoint.text.segmentation import locate, split_segments
from kokoro_endpoint.text.timestamps import segment_words, shift_words, token_spans

__all__ = ["RequestAudio", "audio_seconds", "synthesize_segments"]

#: No audio (what a piece adds when it owes no pause or keeps no tail).
_EMPTY: Final = np.zeros(0, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class RequestAudio:
    """One output of a request: its audio and, when asked, the words whose first sound it carries.

    Attributes:
        audio: Mono float32 audio.
        words: The words, ``char_*`` indexing the request's original text, times from this output's first
            sample (the sender adds the audio already sent); empty when timestamps were not asked for.
    """

    audio: npt.NDArray[np.float32]
    words: tuple[WordTiming, ...] = ()


def audio_seconds(sample_rate: int) -> Callable[[RequestAudio], float]:
    """How many seconds of audio an output holds, at ``sample_rate`` (the scheduler's playback clock)."""
    return lambda output: output.audio.size / sample_rate


def synthesize_segments(
    engine: Engine,
    text: str,
    voice: str,
    speed: float,
    clause_chars: int | None,
    silence: SilencePolicy | None = None,
    *,
    normalize: bool = True,
    timestamps: bool = False,
    reading: Reading | None = None,
    interrupt: Interrupt | None = None,
) -> Iterator[RequestAudio]:
    """A request's audio: one engine call per sentence or phrase (``text.split_segments``), streamed.

    The text is normalized first (``languages.normalized``: English text by ``normalize_for_speech``).
    With a silence policy that trims, each segment's own leading and trailing silence is cut and the
    policy's pause follows it (by how its text ends; inside a phrase the engine had to split, a clause
    pause); see :mod:`kokoro_endpoint.engines.silence`. With timestamps, each segment's words ride on the
    output that carries its first sound, timed from that output's first sample (what the trimming dropped and
    any pause put before it accounted for).

    Args:
        engine: The loaded engine.
        text: The request's text, as the client sent it.
        voice: One of the engine's voices, or a blend of them.
        speed: Speaking rate.
        clause_chars: Sentences longer than this are split at clause punctuation; None keeps them whole.
        silence: How to shape silence; None (or ``trim=False``) sends the engine's audio as it is.
        normalize: Read written forms the way people say them (``normalize.normalize_for_speech``).
        timestamps: Work out each segment's words (needs an engine that reports timing; others give none).
        reading: The language and lexicon (None: American English, no lexicon).
        interrupt: Set when the request is cancelled: an engine that can stops its model call at once
            (``interface.InterruptibleEngine``), and the generator raises ``SynthesisInterrupted``.

    Yields:
        Outputs as they are ready (never empty audio), one per engine step (plus each phrase's pause).
        Closing this generator closes the engine's current call.
    """
    reading = reading or Reading()
    spoken = normalized(text, reading.lang, normalize)
    policy = silence if silence is not None and silence.trim else None
    output = _Output(policy, engine.sample_rate, timestamps)
    cursor = 0
    for phrase in split_segments(spoken.text, clause_chars):
        offset = max(cursor, locate(spoken.text, phrase, cursor))
        cursor = offset + 1
        if interrupt is not None:
            interrupt.check()
        # The audio already produced plays while this phrase's first window is decoded. Counted before the
        # silence policy shapes it, so the phrase's samples do not depend on the policy.
        produced_s = output.spoken / engine.sample_rate
        pieces = speech_pieces(
            engine, phrase, voice, speed, reading=reading, interrupt=interrupt, produced_s=produced_s
        )
        try:
            yield from output.phrase(pieces, phrase, offset, spoken)
        finally:
            close_iterator(pieces)


class _Output:
    """A request's outputs so far: the samples yielded, where the last placed word ends, the shaping.

    Args:
        policy: The silence policy that trims; None sends the engine's audio as it is.
        rate: The engine's sample rate.
        timestamps: Place each segment's words.
    """

    def __init__(self, policy: SilencePolicy | None, rate: int, timestamps: bool) -> None:
        self.policy = policy
        self.rate = rate
        self.timestamps = timestamps
        self.shaper = SegmentShaper(policy, rate) if policy is not None else None
        self.emitted = 0  # samples yielded so far
        self.spoken = 0  # samples the engine produced so far, before any shaping
        self.words_end = 0  # where (in samples yielded) the last word placed ends

    def phrase(
        self, pieces: Iterator[SpeechPiece], phrase: str, offset: int, spoken: NormalizedText
    ) -> Iterator[RequestAudio]:
        """One phrase's outputs (at ``offset`` in the spoken text), then the pause its end asks for."""
        owed = False  # the segment before (in this phrase) owes a clause pause
        words: list[WordTiming] = []  # the current segment's words, until its first sound is out
        for piece in pieces:
            self.spoken += piece.audio.size
            if self.timestamps and piece.timing is not None:
                words = segment_words(token_spans(piece.timing, self.rate), offset, spoken)
            audio, first_sound, shift = self._shape(piece, owed)
            owed = piece.segment_end
            placed: tuple[WordTiming, ...] = ()
            if words and first_sound:
                placed, words = shift_words(words, shift), []
                self.words_end = self.emitted + round(max(word.end_s for word in placed) * self.rate)
            if piece.segment_end:
                words = []  # a segment without sound has no words to show
            if audio.size:
                self.emitted += audio.size
                yield RequestAudio(audio, placed)
        if self.policy is not None and owed:
            pause = _pause(pause_after(phrase, self.policy), self.rate, self.words_end - self.emitted)
            if pause.size:
                self.emitted += pause.size
                yield RequestAudio(pause)

    def _shape(self, piece: SpeechPiece, owed: bool) -> tuple[npt.NDArray[np.float32], bool, float]:
        """One output per engine step: a pause owed by the segment before, this piece's sound, and, when
        the piece ends its segment, the kept tail.

        Returns:
            The audio, whether it holds the segment's first sound, and how far its words move (seconds).
        """
        if self.shaper is None or self.policy is None:
            return piece.audio, piece.audio.size > 0, 0.0
        head = _EMPTY
        if owed:
            head = _pause(self.policy.clause_pause_ms, self.rate, self.words_end - self.emitted)
        was_sounding = self.shaper.sounding
        sound = self.shaper.feed(piece.audio)
        first_sound = self.shaper.sounding and not was_sounding
        shift = (len(head) - self.shaper.lead_dropped) / self.rate
        tail = self.shaper.end_segment(0.0) if piece.segment_end else _EMPTY
        return np.concatenate([head, sound, tail]), first_sound, shift


def _pause(ms: float, rate: int, at_least: int) -> npt.NDArray[np.float32]:
    """A pause of ``ms``, or of ``at_least`` samples when longer.

    The model's durations may give a segment's last word a longer end than the sound the trimming kept;
    the pause after it then lasts until that end, so the next segment's words never start before it.
    """
    return np.zeros(max(round(rate * ms / 1000), at_least), dtype=np.float32)
