"""A caller who says a script: each stretch of tone is the next sentence of it.

:class:`SaidRecognizer` recognizes a turn as the sentences of the tone stretches heard in it so far (the
words at a pause are those said up to it; a turn that goes on after a pause has more words), so a test
can say "Please tell me the long version." [pause] "What does the Premium plan include?" in one breath
with a tone, and the library's listener (with :class:`~support.listen.LoudnessVad`) hears it as a person
saying it. :func:`said_listeners` is the app's ``listener_factory`` for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strands_voice.listen import Listener, ListenSettings, Recognized
from support.listen import LoudnessVad

_FRAME = 512
_LOUD_RMS = 10 ** (-30 / 20)


class SaidRecognizer:
    """Each tone stretch of the call is the next sentence of ``sentences`` (then the last one again)."""

    def __init__(self, sentences: list[str]) -> None:
        self.sentences = list(sentences)
        self.said = 0

    def next_sentence(self) -> str:
        sentence = self.sentences[min(self.said, len(self.sentences) - 1)]
        self.said += 1
        return sentence

    async def open(self, prompt: str | None = None) -> _SaidStream:
        return _SaidStream(self)

    async def warm_up(self) -> None:
        return None


class _SaidStream:
    def __init__(self, recognizer: SaidRecognizer) -> None:
        self._recognizer = recognizer
        self._sentences: list[str] = []
        self._loud = False

    async def feed(self, pcm16: bytes) -> list[str]:
        samples = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
        for start in range(0, len(samples), _FRAME):
            frame = samples[start : start + _FRAME]
            loud = bool(frame.size) and float(np.sqrt(np.mean(frame**2))) > _LOUD_RMS
            if loud and not self._loud:
                self._sentences.append(self._recognizer.next_sentence())
            self._loud = loud
        return []

    async def pause(self) -> None:
        return None

    async def resume(self) -> None:
        return None

    async def words_so_far(self) -> Recognized | None:
        return Recognized(" ".join(self._sentences)) if self._sentences else None

    async def finish(self) -> Recognized:
        return Recognized(" ".join(self._sentences))

    async def aclose(self) -> None:
        return None


def said_listeners(sentences: list[str], **settings: Any) -> Any:
    """A ``listener_factory`` hearing ``sentences`` (one per tone stretch); turns end by the silence timer."""
    recognizer = SaidRecognizer(sentences)

    async def open_listener(_start: Any) -> Any:
        listen = ListenSettings(**{"end_of_turn": "silence", **settings})
        return Listener(listen, vad=LoudnessVad(), recognizer=recognizer, turn_model=None)

    return open_listener
