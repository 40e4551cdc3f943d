"""One turn of a spoken call answered: the answer's events out on the call, its span and its figures.

The answer comes from :class:`~agentcore_app.answering.Answering` (the same path as ``POST /invocations``).
Its ``audio_chunk`` events go out as binary frames holding their raw bytes (no base64 on this route),
every other event as a JSON text frame, in order; the audio no further ahead of the caller's playback than
:data:`AUDIO_LEAD_S`, so that the caller's voice finds the answer still speaking (to pause it, or barge in)
for as long as the caller hears it. The turn is traced as an ``agentcore_app.turn`` span
around the answer (the agent's spans, and the library's ``strands_voice.answer`` span under them, are its
children) with the recognition time and the voice-to-voice time; the app's metrics get one line per
turn (``Turns``, ``VoiceToVoice``, ``RecognitionTime``, ``BargeIns``).

A speculative answer (:class:`HeldAnswer`: asked for before the caller's turn is over) runs the same way,
but what it makes is kept back, its playback count stopped, until it is released: nothing of it reaches
the caller before the turn's final transcript, and dropped first it sends nothing at all. Every answer
asks the endpoint for word timings (sent on only where the caller asked for them): an answer cut by a
barge-in is remembered as the words the caller heard, not only its whole sentences.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Final, Protocol

from opentelemetry import trace
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.events import Event

from strands_voice.agent import VoiceCallbackHandler
from strands_voice.speech import VoiceOptions, within_lead

from ..answering import Answering
from ..payload import VoiceRequest
from ._listening import TurnClock, TurnTiming
from ._outbox import Outbox

__all__ = ["TURN_SPAN", "CallSide", "HeldAnswer", "SpokenTurn", "answer_turn"]

logger = logging.getLogger(__name__)

#: How far the answer's audio may run ahead of the caller's playback: enough for a network's jitter.
AUDIO_LEAD_S: Final = 0.5
#: The longest wait before the playback count is looked at again: whole chunks (often hundreds of ms) go
#: out at once, so a coarser poll than the cascade's 40 ms slices need keeps the lead as well.
_PACE_POLL_S: Final = 0.05

#: The span of one turn of a call (its answer's spans are children).
TURN_SPAN: Final = "agentcore_app.turn"
_tracer = trace.get_tracer("agentcore_app")


class CallSide(Protocol):
    """What answering a turn needs of its call (the call itself, without importing it)."""

    @property
    def answering(self) -> Answering: ...

    @property
    def session_id(self) -> str: ...

    @property
    def clock(self) -> TurnClock: ...

    @property
    def outbox(self) -> Outbox: ...


@dataclass(frozen=True)
class SpokenTurn:
    """A turn to answer.

    Attributes:
        prompt: The caller's words (recognized, or typed).
        spoken: Whether the caller said it (else typed it).
        request_id: The answer's id (``agent_start.request_id``, ``speech_paused.request_id``).
        timing: A spoken turn's times (None for a typed one).
    """

    prompt: str
    spoken: bool
    request_id: str
    timing: TurnTiming | None = None


class HeldAnswer:
    """A speculative answer's events, kept back until :meth:`release` (see the module docstring)."""

    def __init__(self) -> None:
        self.released = asyncio.Event()
        self.timing: TurnTiming | None = None

    def release(self, timing: TurnTiming) -> None:
        """The turn ended with the answer's words (``timing``: that turn's times): it goes out."""
        self.timing = timing
        self.released.set()

    async def events(
        self, events: AsyncGenerator[Event, None], voice: VoiceCallbackHandler
    ) -> AsyncGenerator[Event, None]:
        """``events`` once released. Until then the answer is made but held: its speech is paused from
        its first event (``agent_start``), so what it makes waits in its queue, undelivered, and its heard
        count starts when the caller hears it."""
        first = await anext(events, None)
        if first is None:
            return
        if first["type"] == "agent_start" and not self.released.is_set():
            voice.pause()
        making = asyncio.ensure_future(anext(events, None))  # the agent starts: its events wait held
        try:
            await self.released.wait()
            voice.resume()
            yield first
            event = await making
            while event is not None:
                yield event
                event = await anext(events, None)
        finally:
            await cancel_and_wait([making], 5.0)
            await events.aclose()


async def answer_turn(
    call: CallSide,
    turn: SpokenTurn,
    voice: VoiceCallbackHandler,
    options: VoiceOptions,
    heard: Callable[[], None],
    held: HeldAnswer | None = None,
) -> None:
    """Answer ``turn`` on ``call`` with ``voice``: events out, the turn's span and its metrics line;
    ``heard`` is called when its first audio goes out; ``held``: a speculation, kept back until released."""
    request_id = turn.request_id
    attributes: dict[str, str | float | bool] = {
        "agentcore_app.spoken": turn.spoken,
        "agentcore_app.request_id": request_id,
        "agentcore_app.speculative": held is not None,
    }
    # Word timings always (the heard words are remembered); the caller gets them if asked for.
    timed = dataclasses.replace(options, timestamps=True)
    with _tracer.start_as_current_span(TURN_SPAN, attributes=attributes) as span:
        events = call.answering.answer(VoiceRequest(turn.prompt, timed), request_id, call.session_id, voice)
        if held is not None:
            events = held.events(events, voice)
        first_audio, interrupted = await _send(call, events, voice, heard, words=options.timestamps)
        timing = held.timing if held is not None else turn.timing
        recognition_s = _timed(span, timing)
        voice_to_voice = _voice_to_voice(timing, first_audio)
        if voice_to_voice is not None:
            span.set_attribute("agentcore_app.voice_to_voice_ms", round(voice_to_voice * 1000.0, 1))
    metrics = call.answering.metrics
    if metrics is not None:
        try:
            metrics.call_turn(
                spoken=turn.spoken,
                voice_to_voice_s=voice_to_voice,
                recognition_s=recognition_s,
                barged_in=interrupted,
            )
        except Exception:
            logger.exception("call metrics failed")  # figures must never break a call


def _timed(span: trace.Span, timing: TurnTiming | None) -> float | None:
    """The turn's recognition time and why it ended, on its span; returns the recognition time."""
    recognition_s = timing.recognition_s if timing is not None else None
    if recognition_s is not None:
        span.set_attribute("agentcore_app.recognition_ms", round(recognition_s * 1000.0, 1))
    end_of_turn = timing.end_of_turn if timing is not None else None
    if end_of_turn is not None:  # why the turn ended: the turn-end model's verdict, or a timer
        span.set_attribute("agentcore_app.end_of_turn", end_of_turn.by)
        if end_of_turn.p is not None:
            span.set_attribute("agentcore_app.end_of_turn_p", round(end_of_turn.p, 3))
    return recognition_s


async def _send(
    call: CallSide,
    events: AsyncGenerator[Event, None],
    voice: VoiceCallbackHandler,
    heard: Callable[[], None],
    *,
    words: bool = True,
) -> tuple[float | None, bool]:
    """The answer's events out (``words`` events only if the caller asked for them), its audio paced to
    the caller's playback; returns when its first audio went out, and whether it was interrupted."""
    first_audio: float | None = None
    interrupted = False
    async with contextlib.aclosing(events):
        async for event in events:
            if event["type"] == "audio_chunk":
                if first_audio is None:
                    first_audio = call.clock.now()
                    heard()
                await call.outbox.put(base64.b64decode(event["data"]))
                await _within_lead(voice)  # before the next chunk is taken (and counted as playing)
                continue
            interrupted = interrupted or event["type"] == "interrupted"
            if words or event["type"] != "words":
                await call.outbox.put(json.dumps(event))
    return first_audio, interrupted


async def _within_lead(voice: VoiceCallbackHandler) -> None:
    """Wait until the caller's playback (as the answer counts it: from its first audio, paused time not
    counted) is within :data:`AUDIO_LEAD_S` of the audio sent. Audio sent far ahead would still play after
    a pause or a barge-in reached the server, and the answer would end for the server (no longer paused
    by the caller's voice) seconds before the caller stopped hearing it. The lead is longer than the
    cascade's: whole chunks go over a network to the caller's player, so it covers a network's jitter."""

    def unplayed_s() -> float | None:
        unplayed_ms = voice.unplayed_ms()
        return None if unplayed_ms is None else unplayed_ms / 1000.0

    await within_lead(unplayed_s, lead_s=AUDIO_LEAD_S, poll_s=_PACE_POLL_S)


def _voice_to_voice(timing: TurnTiming | None, first_audio: float | None) -> float | None:
    if timing is None or timing.speech_end is None or first_audio is None:
        return None
    return first_audio - timing.speech_end
