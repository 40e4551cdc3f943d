"""What the caller heard of a response: the record a barge-in's ``interrupted`` event is made from.

A response's events reach its caller through some delivery path (a queue the caller reads, or the
handler's callbacks). :class:`DeliveryLog` is told about each event as it is DELIVERED, so after a
barge-in it can say which sentences were heard in full (``sentences_done``), which one was cut
(``sentence_cut``), and what was heard (``heard_text``, built by :func:`heard_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import Event
from strands_voice_protocol.frames import WordJson

__all__ = ["DeliveryLog", "heard_text"]


def heard_text(done: Sequence[str], cut_words: Sequence[str] = ()) -> str:
    """The text the caller heard: the fully delivered sentences, then the heard words of the cut one.

    Args:
        done: The texts of the sentences delivered in full, in order.
        cut_words: The words of the cut sentence whose audio was delivered (from word timings, when the
            endpoint sends them; empty otherwise).

    Returns:
        The pieces joined with single spaces.
    """
    return " ".join(piece.strip() for piece in [*done, *cut_words] if piece.strip())


class DeliveryLog:
    """Counts a response's events as they reach the caller.

    Args:
        chunk_pcm: Gives the pcm bytes an ``audio_chunk`` carried, by its ``seq``.
    """

    def __init__(self, chunk_pcm: Callable[[int], int]) -> None:
        self._chunk_pcm = chunk_pcm
        self.sentences_done: list[int] = []
        self._texts: dict[int, str] = {}
        self._last_audio_sentence: int | None = None
        self._sentence_pcm: dict[int, int] = {}  # pcm bytes delivered per sentence
        self._words: dict[int, list[WordJson]] = {}  # word timings delivered per sentence
        self.chunks = 0
        self.pcm_bytes = 0
        self.first_audio_ms: float | None = None
        self.last_audio_ms: float | None = None

    def delivered(self, event: Event) -> None:
        """Note that ``event`` reached the caller."""
        if event["type"] == "audio_chunk":
            self.chunks += 1
            pcm = self._chunk_pcm(event["seq"])
            self.pcm_bytes += pcm
            self._sentence_pcm[event["sentence"]] = self._sentence_pcm.get(event["sentence"], 0) + pcm
            self._last_audio_sentence = event["sentence"]
            if self.first_audio_ms is None:
                self.first_audio_ms = event["t_ms"]
            self.last_audio_ms = event["t_ms"]
        elif event["type"] == "words":
            self._words.setdefault(event["sentence"], []).extend(event["words"])
        elif event["type"] == "sentence_restart":
            self._sentence_pcm.pop(event["sentence"], None)  # heard again from its start
        elif event["type"] == "sentence_complete":
            self.sentences_done.append(event["sentence"])
            self._texts[event["sentence"]] = event["text"]

    @property
    def sentence_cut(self) -> int | None:
        """The sentence whose audio had begun to reach the caller but not ended, if any."""
        last = self._last_audio_sentence
        return None if last is None or last in self.sentences_done else last

    @property
    def duration_s(self) -> float:
        """Seconds of audio delivered."""
        return self.pcm_bytes / BYTES_PER_SECOND

    def heard_words(self, sentence: int) -> list[str]:
        """The words of ``sentence`` whose audio reached the caller in full (needs ``words`` events)."""
        heard_s = self._sentence_pcm.get(sentence, 0) / BYTES_PER_SECOND
        return [str(word["word"]) for word in self._words.get(sentence, []) if word["end_s"] <= heard_s]

    def interrupted_fields(self, cut_words: Sequence[str] | None = None) -> dict[str, Any]:
        """The ``interrupted`` event's fields as things stand.

        Args:
            cut_words: The heard words of the cut sentence (see :func:`heard_text`); None: from the word
                timings delivered for it, if any were asked for.
        """
        if cut_words is None:
            cut = self.sentence_cut
            cut_words = [] if cut is None else self.heard_words(cut)
        return {
            "heard_text": heard_text([self._texts[i] for i in self.sentences_done], cut_words),
            "sentences_done": list(self.sentences_done),
            "sentence_cut": self.sentence_cut,
        }
