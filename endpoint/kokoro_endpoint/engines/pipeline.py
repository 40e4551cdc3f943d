"""A request's text to its audio: the endpoint's text-to-audio pipeline over any engine.

:func:`synthesize_segments` normalizes the text, cuts it into sentences and phrases, asks the engine for
each one's audio (streamed in pieces where the engine can), shapes the silence between them
(:mod:`kokoro_endpoint.silence`) and places each segment's words (timestamps); every route speaks through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.frames import WordTiming

from kokoro_endpoint.engines.interface import Engine, speech_pieces
from kokoro_endpoint.interrupt import Interrupt, close_iterator
from kokoro_endpoint.languages import Reading, normalized
from kokoro_endpoint.silence import SegmentShaper, SilencePolicy, pause_after
from kokoro_endpoint.text import locate, split_segments
from kokoro_endpoint.timestamps import segment_words, shift_words, token_spans

__all__ = ["RequestAudio", "audio_seconds", "synthesize_segments"]


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
    pause); see :mod:`kokoro_endpoint.silence`. With timestamps, each segment's words ride on the output
    that carries its first sound, timed from that output's first sample (what the trimming dropped and any
    pause put before it accounted for).

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
    rate = engine.sample_rate
    policy = silence if silence is not None and silence.trim else None
    shaper = SegmentShaper(policy, rate) if policy is not None else None
    reading = reading or Reading()
    spoken = normalized(text, reading.lang, normalize)
    empty = np.zeros(0, dtype=np.float32)
    emitted = 0  # samples yielded so far
    words_end = 0  # where (in samples yielded) the last word placed ends
    cursor = 0
    for phrase in split_segments(spoken.text, clause_chars):
        offset = max(cursor, locate(spoken.text, phrase, cursor))
        cursor = offset + 1
        if interrupt is not None:
            interrupt.check()
        pieces = speech_pieces(engine, phrase, voice, speed, reading, interrupt)
        try:
            owed = False  # the segment before (in this phrase) owes a clause pause
            words: list[WordTiming] = []  # the current segment's words, until its first sound is out
            for piece in pieces:
                if timestamps and piece.timing is not None:
                    words = segment_words(token_spans(piece.timing, rate), offset, spoken)
                if shaper is None or policy is None:
                    audio, first_sound, shift = piece.audio, piece.audio.size > 0, 0.0
                else:
                    # One output per engine step: a pause owed by the segment before, this piece's sound,
                    # and, when the piece ends its segment, the kept tail.
                    head = _pause(policy.clause_pause_ms, rate, words_end - emitted) if owed else empty
                    was_sounding = shaper.sounding
                    sound = shaper.feed(piece.audio)
                    first_sound = shaper.sounding and not was_sounding
                    shift = (len(head) - shaper.lead_dropped) / rate
                    owed = piece.segment_end
                    tail = shaper.end_segment(0.0) if owed else empty
                    audio = np.concatenate([head, sound, tail])
                placed: tuple[WordTiming, ...] = ()
                if words and first_sound:
                    placed, words = shift_words(words, shift), []
                    words_end = emitted + round(max(word.end_s for word in placed) * rate)
                if piece.segment_end:
                    words = []  # a segment without sound has no words to show
                if audio.size:
                    emitted += audio.size
                    yield RequestAudio(audio, placed)
            if policy is not None and owed:
                pause = _pause(pause_after(phrase, policy), rate, words_end - emitted)
                if pause.size:
                    emitted += pause.size
                    yield RequestAudio(pause)
        finally:
            close_iterator(pieces)


def _pause(ms: float, rate: int, at_least: int) -> npt.NDArray[np.float32]:
    """A pause of ``ms``, or of ``at_least`` samples when longer.

    The model's durations may give a segment's last word a longer end than the sound the trimming kept;
    the pause after it then lasts until that end, so the next segment's words never start before it.
    """
    return np.zeros(max(round(rate * ms / 1000), at_least), dtype=np.float32)
