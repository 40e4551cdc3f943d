"""Leg 3 event builders: the JSON objects the agent runtime streams to its caller (see PROTOCOL.md).

Every event is a plain ``dict`` with ``"type"`` and ``"t_ms"`` (milliseconds since ``agent_start``).
:class:`EventBuilder` holds the clock, so the code that produces events never computes times itself.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from strands_voice_protocol.frames import WordTiming, words_json

__all__ = ["EVENT_TYPES", "Event", "EventBuilder"]

#: One Leg 3 event.
Event = dict[str, Any]

#: Every Leg 3 event type, in the order they first appear in a response.
EVENT_TYPES: Final = (
    "agent_start",
    "text_delta",
    "audio_start",
    "audio_chunk",
    "sentence_complete",
    "words",
    "sentence_restart",
    "interrupted",
    "audio_end",
    "agent_end",
    "error",
)


class EventBuilder:
    """Builds Leg 3 events stamped with ``t_ms`` since the builder was created (``agent_start``'s time 0).

    Args:
        clock: A monotonic clock in seconds; ``time.monotonic`` unless a test wants its own.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()

    def t_ms(self) -> float:
        """Milliseconds since the start, rounded to 0.1 ms."""
        return round((self._clock() - self._start) * 1000.0, 1)

    def _event(self, kind: str, **fields: Any) -> Event:
        return {"type": kind, "t_ms": self.t_ms(), **fields}

    def agent_start(self, *, mode: str, request_id: str) -> Event:
        """``agent_start``: the response begins."""
        return self._event("agent_start", mode=mode, request_id=request_id)

    def text_delta(self, *, seq: int, text: str) -> Event:
        """``text_delta``: one piece of the agent's text, as the model streamed it."""
        return self._event("text_delta", seq=seq, text=text)

    def audio_start(self, *, format: str, sample_rate: int, channels: int = 1) -> Event:
        """``audio_start``: sent once, before the first ``audio_chunk``."""
        return self._event("audio_start", format=format, sample_rate=sample_rate, channels=channels)

    def audio_chunk(self, *, seq: int, sentence: int, data: bytes) -> Event:
        """``audio_chunk``: encoded audio (base64 in ``data``) speaking text chunk ``sentence``."""
        return self._event(
            "audio_chunk", seq=seq, sentence=sentence, data=base64.b64encode(data).decode("ascii")
        )

    def sentence_complete(self, *, sentence: int, text: str, duration_s: float) -> Event:
        """``sentence_complete``: all audio of text chunk ``sentence`` has been sent."""
        return self._event("sentence_complete", sentence=sentence, text=text, duration_s=round(duration_s, 3))

    def sentence_restart(self, *, sentence: int, dropped_s: float) -> Event:
        """``sentence_restart``: the TTS connection dropped mid-sentence; its audio starts over.

        The ``dropped_s`` seconds of that sentence's audio already sent are void: a player drops what it
        still holds of them. The sentence's ``audio_chunk`` events follow again from its start.
        """
        return self._event("sentence_restart", sentence=sentence, dropped_s=round(dropped_s, 3))

    def words(self, *, sentence: int, words: Sequence[WordTiming]) -> Event:
        """Sentence ``sentence``'s words, times from its first audio (as Leg 1 ``word_timestamps``).

        Args:
            sentence: The index of the text chunk the words belong to (as in ``audio_chunk``).
            words: The words; ``char_*`` index that sentence's text as it was sent for synthesis.
        """
        return self._event("words", sentence=sentence, words=words_json(list(words)))

    def audio_end(self, *, chunks: int, duration_s: float) -> Event:
        """``audio_end``: no more audio for this response."""
        return self._event("audio_end", chunks=chunks, duration_s=round(duration_s, 3))

    def interrupted(self, *, heard_text: str, sentences_done: list[int], sentence_cut: int | None) -> Event:
        """``interrupted``: barge-in; what the caller heard, the sentences heard in full, the one cut."""
        return self._event(
            "interrupted", heard_text=heard_text, sentences_done=sentences_done, sentence_cut=sentence_cut
        )

    def agent_end(self, *, ttfa_ms: float | None, text_ms: float | None, audio_ms: float | None) -> Event:
        """``agent_end``: the last event; times are ``t_ms`` values (None when there was no such event)."""
        return self._event("agent_end", ttfa_ms=ttfa_ms, text_ms=text_ms, audio_ms=audio_ms)

    def error(self, *, code: str, message: str) -> Event:
        """``error``: something failed (text keeps flowing when only speech fails)."""
        return self._event("error", code=code, message=message)
