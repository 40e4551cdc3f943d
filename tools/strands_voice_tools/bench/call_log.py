"""One spoken call as its caller heard it, and its turn-taking figures (times in, figures out; no I/O).

A :class:`CallLog` holds what the caller said (each utterance's first and last sound on the caller's
clock) and what came back (the system's JSON events and the answer's audio chunks, each with its arrival
time on the same clock). :func:`play` is a player that honours the system's events: it plays each chunk
in real time from its arrival (waiting when it runs dry), stops at once on ``speech_paused`` and keeps its
buffer, plays on at ``speech_resumed``, and drops its buffer on ``interrupted``. :func:`turn_figures` then
reads, per utterance:

- ``end_of_turn_s``: the end of its speech to the system's final transcript (the turn's end);
- ``voice_to_voice_s`` (a question): the end of its speech to the first audible sound of the answer (the
  audio that arrives after its turn's end);
- ``cut`` (a paused sentence): taken as a turn before its end, or split into two turns;
- said over an answer (a backchannel, a noise, an interruption): ``reaction_s``, its first sound to the
  moment the player went silent (paused, dropped or starved, within :data:`REACTION_WINDOW_S`), and
  ``stopped``, whether the answer ended (``interrupted``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from strands_voice_protocol.audio.audible import FirstHeard
from strands_voice_protocol.call_events import ends_turn
from strands_voice_protocol.languages import unspaced

from strands_voice_tools.bench.turn_set import Kind

__all__ = [
    "REACTION_WINDOW_S",
    "CallLog",
    "Utterance",
    "UtteranceFigures",
    "answer_playing",
    "first_heard_at",
    "kinds",
    "play",
    "silent_from",
    "timeline",
    "turn_figures",
]

#: How soon after a caller's first sound over an answer the player must go silent to count as a reaction.
REACTION_WINDOW_S: Final = 2.5
#: The answer's audio: 24 kHz mono PCM16.
ANSWER_RATE: Final = 24000
OVER_ANSWER: Final[frozenset[str]] = frozenset({"backchannel", "noise", "interruption"})
#: A stall of the player shorter than this (audio arriving late) does not end the answer's playback.
STALL_S: Final = 0.35
#: The events a call's :func:`timeline` keeps (the rest are the answer's text and words).
TIMELINE_EVENTS: Final = frozenset(
    {"transcript", "interrupted", "speech_paused", "speech_resumed", "speech_start", "agent_start", "error"}
)
#: An answer whose audio stalled less than this long ago is still playing for the caller.
ANSWER_STALL_S: Final = 1.5
#: Without a stopping event, silence this long after the caller spoke counts as the answer stopping.
SILENT_GAP_S: Final = 0.5
#: Words too common to tie a transcript to an utterance.
_COMMON: Final = frozenset({"the", "and", "you", "what", "does", "can", "how", "any", "are", "for", "please"})
_DIGITS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True)
class Utterance:
    """What the caller said, on the caller's clock (seconds).

    Attributes:
        kind: The utterance's kind.
        text: Its words ("" for a noise).
        voice: Its voice.
        start: When its first sound began.
        end: When its last sound ended.
    """

    kind: Kind
    text: str
    voice: str
    start: float
    end: float


@dataclass
class CallLog:
    """A call: what was said, and the events and audio that came back (see the module docstring)."""

    said: list[Utterance] = field(default_factory=list)
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    audio: list[tuple[float, bytes]] = field(default_factory=list)
    ended: float | None = None


@dataclass(frozen=True)
class UtteranceFigures:
    """One utterance's figures (seconds; None where they do not apply or did not happen)."""

    kind: Kind
    text: str
    voice: str
    finals: int = 0
    end_of_turn_s: float | None = None
    end_of_turn_by: str | None = None
    voice_to_voice_s: float | None = None
    cut: bool | None = None
    over_answer: bool | None = None
    reaction_s: float | None = None
    stopped: bool | None = None
    interrupted_s: float | None = None
    paused_s: float | None = None


class _Player:
    """The player of :func:`play`: spans of continuous playback from arrivals and control events."""

    def __init__(self) -> None:
        self.clock = -math.inf
        self.buffered = 0.0
        self.paused = False
        self.since: float | None = None  # start of the current span, None while silent
        self.spans: list[tuple[float, float]] = []

    def advance(self, to: float) -> None:
        if self.since is not None and not self.paused:
            dry_at = self.clock + self.buffered
            if dry_at <= to:
                self.spans.append((self.since, dry_at))
                self.since, self.buffered = None, 0.0
            else:
                self.buffered -= to - self.clock
        self.clock = to

    def silence(self, at: float, *, drop: bool) -> None:
        if self.since is not None and not self.paused:
            self.spans.append((self.since, at))
            self.since = None
        if drop:
            self.buffered, self.paused = 0.0, False

    def start(self, at: float) -> None:
        if self.since is None and self.buffered > 0 and not self.paused:
            self.since = at


def play(log: CallLog, rate: int = ANSWER_RATE, stall_s: float = STALL_S) -> list[tuple[float, float]]:
    """The spans ``(start, end)`` during which the caller's player was playing (see the module docstring),
    joined across stalls shorter than ``stall_s`` (the audio arriving a little late is still the answer
    playing)."""
    items: list[tuple[float, int, Any]] = [(at, 1, len(pcm) / (2 * rate)) for at, pcm in log.audio]
    items += [(at, 0, event.get("type")) for at, event in log.events]
    player = _Player()
    for at, is_audio, what in sorted(items, key=lambda item: (item[0], item[1])):
        player.advance(at)
        if is_audio:
            player.buffered += what
            player.start(at)
        elif what == "speech_paused":
            player.silence(at, drop=False)
            player.paused = True
        elif what == "speech_resumed":
            player.paused = False
            player.start(at)
        elif what == "interrupted":
            player.silence(at, drop=True)
    player.advance(math.inf)
    joined: list[tuple[float, float]] = []
    for start, end in player.spans:
        if joined and start - joined[-1][1] < stall_s:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def _words(text: str) -> set[str]:
    """The telling words of ``text`` (digits read one by one: a recognizer writes "four two seven" 427);
    in Japanese, its pairs of characters that hold a kanji or katakana (no spaces to split words at)."""
    spelled = re.sub(r"\d", lambda digit: f" {_DIGITS[int(digit.group())]} ", text.lower())
    latin = {word for word in re.findall(r"[a-z']+", spelled) if len(word) >= 3} - _COMMON
    chars = [char for char in text if unspaced(char) and char.isalnum()]
    pairs = {"".join(pair) for pair in itertools.pairwise(chars)}
    return latin | {pair for pair in pairs if _TELLING.search(pair)}


#: Kanji or katakana: a pair of characters holding one tells an utterance (hiragana alone is grammar).
_TELLING: Final = re.compile(r"[\u30a0-\u30ff\u4e00-\u9fff]")


def _belongs(event: dict[str, Any], said: Utterance) -> bool:
    """Whether a final transcript can be (part of) ``said``: it shares a telling word with it, or carries
    no text (a system that does not send it); a late transcript of an earlier utterance does not."""
    text = str(event.get("text") or "")
    return not text.strip() or said.kind in ("backchannel", "noise") or bool(_words(text) & _words(said.text))


def _first(log: CallLog, kind: str, start: float, until: float) -> float | None:
    return next((at for at, event in log.events if event.get("type") == kind and start <= at < until), None)


def first_heard_at(log: CallLog, after: float, until: float) -> float | None:
    """When the first audible sound of the audio arriving in ``[after, until)`` plays."""
    heard = FirstHeard(ANSWER_RATE)
    for at, pcm in log.audio:
        if after <= at < until and heard.feed(at, pcm) is not None:
            return heard.heard_at
    return None


def _spoken_turn(log: CallLog, said: Utterance, until: float) -> UtteranceFigures:
    """A question or a paused sentence: its turn's end, its cut, its answer's first sound."""
    finals = [
        (at, event)
        for at, event in log.events
        if ends_turn(event) and said.start <= at < until and _belongs(event, said)
    ]
    last_at, last = finals[-1] if finals else (None, {})
    by = (last.get("end_of_turn") or {}).get("by") if last else None
    figures = UtteranceFigures(said.kind, said.text, said.voice, finals=len(finals), end_of_turn_by=by)
    cut = len(finals) > 1 or (bool(finals) and finals[0][0] < said.end)
    # The answer is the audio after the turn's end (a late answer to an earlier turn comes before it).
    answer_from = said.end if last_at is None else max(said.end, last_at)
    heard = first_heard_at(log, answer_from, until) if said.kind == "question" else None
    return dataclasses.replace(
        figures,
        end_of_turn_s=None if last_at is None or last_at < said.end else last_at - said.end,
        cut=cut if said.kind == "paused" else None,
        voice_to_voice_s=None if heard is None or cut else heard - said.end,
    )


def answer_playing(spans: Sequence[tuple[float, float]], at: float, stall_s: float = ANSWER_STALL_S) -> bool:
    """Whether an answer is playing at ``at``: its audio is, or was less than ``stall_s`` ago (an answer
    whose audio arrives late is still the answer the caller speaks over)."""
    return any(begin <= at < end + stall_s for begin, end in spans)


def silent_from(
    spans: Sequence[tuple[float, float]], start: float, event_at: float | None, gap_s: float = SILENT_GAP_S
) -> float | None:
    """When the player, playing at ``start``, went silent for good within the reaction window.

    With a stopping event (``interrupted``, ``speech_paused``) at ``event_at``: the event, or the end of
    the last playback before it where the player had already run dry after ``start`` (the event itself
    where it was dry at ``start``: the audio had stalled, the system had not stopped it). Without one:
    the end of a playback span followed by at least ``gap_s`` of silence (a system that stops by sending
    no more audio).
    """
    window_end = start + REACTION_WINDOW_S
    if event_at is not None and event_at <= window_end:
        before = [end for begin, end in spans if begin < event_at and end > start]
        return min(event_at, max(before)) if before else event_at  # stalled already: the system's stop
    following = [begin for begin, _ in spans] + [math.inf]
    for (begin, end), after in zip(spans, following[1:], strict=True):
        if end > start and end <= window_end and after - end >= gap_s and begin < window_end:
            return end
    return None


def _over_answer(
    log: CallLog, said: Utterance, until: float, spans: Sequence[tuple[float, float]]
) -> UtteranceFigures:
    """A backchannel, a noise or an interruption: did the answer pause, stop, and how soon."""
    playing = answer_playing(spans, said.start)
    figures = UtteranceFigures(said.kind, said.text, said.voice, over_answer=playing)
    if not playing:
        return figures
    interrupted = _first(log, "interrupted", said.start, until)
    paused = _first(log, "speech_paused", said.start, until)
    stops = [at for at in (interrupted, paused) if at is not None]
    silent = silent_from(spans, said.start, min(stops) if stops else None)
    turn = _spoken_turn(log, said, until)
    return dataclasses.replace(
        figures,
        finals=turn.finals,
        end_of_turn_s=turn.end_of_turn_s,
        end_of_turn_by=turn.end_of_turn_by,
        reaction_s=None if silent is None else silent - said.start,
        stopped=interrupted is not None,
        interrupted_s=None if interrupted is None else interrupted - said.start,
        paused_s=None if paused is None else paused - said.start,
    )


def turn_figures(log: CallLog) -> list[UtteranceFigures]:
    """Each utterance's figures; an utterance's window runs from its first sound to the next one's."""
    spans = play(log)
    starts = [said.start for said in log.said[1:]] + [math.inf]
    out: list[UtteranceFigures] = []
    for said, until in zip(log.said, starts, strict=True):
        if said.kind in OVER_ANSWER:
            out.append(_over_answer(log, said, until, spans))
        else:
            out.append(_spoken_turn(log, said, until))
    return out


def kinds(figures: Iterable[UtteranceFigures], *wanted: str) -> list[UtteranceFigures]:
    """The figures of the utterances of the ``wanted`` kinds."""
    return [figure for figure in figures if figure.kind in wanted]


def timeline(log: CallLog) -> dict[str, Any]:
    """The call in brief, for reading a figure back (milliseconds from the first utterance): what was said,
    the turn events that came back (:data:`TIMELINE_EVENTS`, with a final transcript's words and why its
    turn ended), and the player's playback spans."""
    zero = log.said[0].start if log.said else 0.0

    def ms(at: float) -> int:
        return round(1000 * (at - zero))

    events = []
    for at, event in log.events:
        kind = event.get("type")
        if kind in TIMELINE_EVENTS and (kind != "transcript" or ends_turn(event)):
            detail = {key: event[key] for key in ("text", "end_of_turn", "code") if key in event}
            events.append([ms(at), kind, detail] if detail else [ms(at), kind])
    return {
        "said": [[said.kind, said.text, ms(said.start), ms(said.end)] for said in log.said],
        "events": events,
        "spans": [[ms(start), ms(end)] for start, end in play(log)],
    }
