"""What the caller heard of a response: the record a barge-in's ``interrupted`` event is made from.

A response's events reach its caller through some delivery path (a queue the caller reads, or the
handler's callbacks). :class:`DeliveryLog` is told about each event as it is DELIVERED and keeps a model
of the caller's playback: "heard" means PLAYED, not sent. Playback starts when the first audio chunk is
delivered and runs at real-time speed (24,000 samples a second) while delivered audio is buffered; when
delivery falls behind, playback waits for it (an underrun) and resumes when the next chunk arrives. So a
caller who got ten seconds of audio in one burst and barged in two seconds later heard two seconds. While
the response is paused (:meth:`DeliveryLog.pause`: the caller may be barging in, and a player that knows
the pause stops with it) playback stands still: the paused time is not heard. A player that reports what
it played (a phone line's marks: :meth:`DeliveryLog.confirm`) sets the playback to the end of each sentence
it confirms, and from then on playback runs at real time no further than the end of the first sentence it
has not confirmed (for :data:`CONFIRM_GRACE_S` at most: then the clock alone counts again).

After a barge-in the log says which sentences were played in full (``sentences_done``), which one was
cut (``sentence_cut``) and what was heard (``heard_text``, built by :func:`heard_text`: the sentences
played in full, then, with word timings, the words of the cut sentence whose end was played).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import Event
from strands_voice_protocol.frames import WordJson
from strands_voice_protocol.languages import unspaced


def heard_text(done: Sequence[str], cut_words: Sequence[str] = ()) -> str:
    """The text the caller heard: the fully played sentences, then the heard words of the cut one.

    Args:
        done: The texts of the sentences played in full, in order.
        cut_words: The words of the cut sentence whose audio was played (from word timings, when the
            endpoint sends them; empty otherwise).

    Returns:
        The pieces joined with single spaces, or with none between two of a script written without
        spaces (Japanese, Chinese: 「概要を」 then 「簡単に」 is 「概要を簡単に」).
    """
    text = ""
    for piece in (piece.strip() for piece in [*done, *cut_words]):
        if piece:
            text += piece if not text or (unspaced(text[-1]) and unspaced(piece[0])) else f" {piece}"
    return text


#: Seconds playback waits at the end of a sentence for the player's confirmation before the clock counts
#: on alone (a phone's mark comes back within a network round trip).
CONFIRM_GRACE_S: Final = 2.0


class DeliveryLog:
    """Counts a response's events as they reach the caller, and what of them has been played.

    Args:
        chunk_pcm: Gives the pcm bytes an ``audio_chunk`` carried, by its ``seq``.
        clock: Seconds, monotonic (tests pass a fake one).
    """

    def __init__(self, chunk_pcm: Callable[[int], int], clock: Callable[[], float] = time.monotonic) -> None:
        self._chunk_pcm = chunk_pcm
        self._clock = clock
        self.sentences_delivered: list[int] = []  # sentence_complete delivered, in order
        self._texts: dict[int, str] = {}
        self._order: list[int] = []  # sentences in the order their audio began
        self._start: dict[int, int] = {}  # stream offset (pcm bytes) where a sentence's audio begins
        self._sentence_pcm: dict[int, int] = {}  # pcm bytes delivered per sentence
        self._words: dict[int, list[WordJson]] = {}  # word timings delivered per sentence
        self._offset = 0  # pcm bytes delivered, void audio included: the stream positions below
        self._played = 0.0  # stream position played as of _played_at
        self._played_at: float | None = None  # None: nothing delivered yet, playback not started
        self._paused = False
        self._confirmed: set[int] | None = None  # sentences the player confirmed (None: it reports none)
        self._held_since: float | None = None  # when playback reached an unconfirmed sentence's end
        self.chunks = 0
        #: pcm bytes delivered that the caller keeps (a restarted sentence's void audio is not counted).
        self.pcm_bytes = 0
        self.first_audio_ms: float | None = None
        self.last_audio_ms: float | None = None

    def _advance(self) -> float:
        """Move the playback position to now; returns it (pcm bytes)."""
        if self._played_at is None:
            return 0.0
        now = self._clock()
        if not self._paused:
            limit = float(self._offset if self._confirmed is None else self._unconfirmed_end())
            self._played = min(limit, self._played + (now - self._played_at) * BYTES_PER_SECOND)
            self._waited_for_player(now, limit)
        self._played_at = now
        return self._played

    def _waited_for_player(self, now: float, limit: float) -> None:
        """A player whose confirmation is :data:`CONFIRM_GRACE_S` late is believed no longer (the clock
        counts again): a lost mark must not hold the answer's pacing for ever."""
        if self._confirmed is None or self._played < limit or not self._owed_mark():
            self._held_since = None
        elif self._held_since is None:
            self._held_since = now
        elif now - self._held_since > CONFIRM_GRACE_S:
            self._confirmed, self._held_since = None, None

    def _unconfirmed_end(self) -> int:
        """Where the first sentence the player has not confirmed ends (what was delivered of it)."""
        confirmed = self._confirmed or set()
        for sentence in self._order:
            if sentence not in confirmed:
                return self._start[sentence] + self._sentence_pcm[sentence]
        return self._offset

    def _owed_mark(self) -> bool:
        """Whether the first sentence not confirmed is complete (its confirmation is owed, not its audio)."""
        confirmed = self._confirmed or set()
        first = next((sentence for sentence in self._order if sentence not in confirmed), None)
        return first is not None and first in self._texts

    def confirm(self, sentence: int) -> None:
        """The player says it has played ``sentence`` to its end (a phone line's mark came back): playback
        is there now, and goes no further than the first sentence it has not confirmed."""
        if sentence not in self._start:
            return
        self._advance()
        self._confirmed = (self._confirmed or set()) | {sentence}
        self._played = float(self._start[sentence] + self._sentence_pcm[sentence])

    def pause(self) -> None:
        """Playback stops where it is now (until :meth:`resume`)."""
        self._advance()
        self._paused = True

    def resume(self) -> None:
        """Playback goes on from where it stopped."""
        self._advance()
        self._paused = False

    def delivered(self, event: Event) -> None:
        """Note that ``event`` reached the caller."""
        if event["type"] == "audio_chunk":
            self._advance()
            if self._played_at is None:
                self._played_at = self._clock()  # playback starts with the first chunk
            sentence = event["sentence"]
            pcm = self._chunk_pcm(event["seq"])
            if sentence not in self._start:
                self._start[sentence] = self._offset
                self._order.append(sentence)
            self.chunks += 1
            self._offset += pcm
            self.pcm_bytes += pcm
            self._sentence_pcm[sentence] = self._sentence_pcm.get(sentence, 0) + pcm
            if self.first_audio_ms is None:
                self.first_audio_ms = event["t_ms"]
            self.last_audio_ms = event["t_ms"]
        elif event["type"] == "words":
            self._words.setdefault(event["sentence"], []).extend(event["words"])
        elif event["type"] == "sentence_restart":
            # The player drops the void audio: playback skips to the end of what was delivered, the
            # sentence is heard again from its start, and its void audio is no longer the caller's.
            self._advance()
            self._played = float(self._offset)
            sentence = event["sentence"]
            if sentence in self._start:
                self.pcm_bytes -= self._sentence_pcm[sentence]
                self._start[sentence] = self._offset
                self._sentence_pcm[sentence] = 0
        elif event["type"] == "sentence_complete":
            self.sentences_delivered.append(event["sentence"])
            self._texts[event["sentence"]] = event["text"]

    @property
    def played_s(self) -> float:
        """Where the caller's playback is now, in seconds of the delivered stream (a restarted sentence's
        void audio included: the player skipped it)."""
        return self._advance() / BYTES_PER_SECOND

    @property
    def unplayed_s(self) -> float:
        """Seconds of delivered audio the caller has not played yet (held while paused)."""
        return (self._offset - self._advance()) / BYTES_PER_SECOND

    @property
    def duration_s(self) -> float:
        """Seconds of audio delivered."""
        return self.pcm_bytes / BYTES_PER_SECOND

    def _split(self, played: float) -> tuple[list[int], int | None]:
        """The sentences played in full, and the one playing (cut), at playback position ``played``."""
        done: list[int] = []
        for sentence in self._order:
            end = self._start[sentence] + self._sentence_pcm[sentence]
            confirmed = (
                self._confirmed is None or sentence in self._confirmed
            )  # a player's word, if it gives it
            if sentence in self._texts and end <= played and confirmed:
                done.append(sentence)
            elif self._start[sentence] <= played:
                return done, sentence
            else:
                break
        return done, None

    def heard_words(self, sentence: int, played: float | None = None) -> list[str]:
        """The words of ``sentence`` whose audio was played to their end (needs ``words`` events)."""
        position = self._advance() if played is None else played
        heard_s = (position - self._start.get(sentence, 0)) / BYTES_PER_SECOND
        return [str(word["word"]) for word in self._words.get(sentence, []) if word["end_s"] <= heard_s]

    def interrupted_fields(self, cut_words: Sequence[str] | None = None) -> dict[str, Any]:
        """The ``interrupted`` event's fields as things stand NOW (what has been played so far).

        Args:
            cut_words: The heard words of the cut sentence (see :func:`heard_text`); None: from the word
                timings delivered for it, if any were asked for.
        """
        played = self._advance()
        done, cut = self._split(played)
        if cut_words is None:
            cut_words = [] if cut is None else self.heard_words(cut, played)
        return {
            "heard_text": heard_text([self._texts[i] for i in done], cut_words),
            "sentences_done": done,
            "sentence_cut": cut,
        }
