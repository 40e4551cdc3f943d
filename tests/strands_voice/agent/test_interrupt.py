"""Barge-in: ``VoiceCallbackHandler.interrupt()`` from another thread, mid-answer, on the REAL endpoint."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
from collections.abc import AsyncIterable
from typing import Any

import pytest
from agentcore_app.scripted import split_tokens
from strands import Agent
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.events import EVENT_TYPES, EventBuilder
from support.stand_in_model import StandInModel

from strands_voice.agent._answer_memory import remembered_text
from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech._heard import DeliveryLog, heard_text
from strands_voice.speech._options import VoiceOptions
from strands_voice.transports._base import Frame
from strands_voice.transports._websocket import WebSocketTransport

pytestmark = pytest.mark.timeout(240)

#: Long sentences (several endpoint phrases each): far more audio than the endpoint can have made by the
#: time the first audio is heard, so requests are still running or queued when the cancel arrives.
SENTENCE = (
    "This is a long sentence about the weather in the mountains that goes on and on without a pause "
    "so that the endpoint needs several phrases to say it all and the listener has time to interrupt. "
)
SPOKEN_PART = "".join(SENTENCE.replace("This is", f"Part {n} is") for n in range(1, 4))
LATER_PART = "And after the barge-in the agent keeps writing. It says more. And more still."
ANSWER = SPOKEN_PART + LATER_PART


class GatedModel(StandInModel):
    """A stand-in LLM: streams ``SPOKEN_PART``, waits until ``gate`` is set, then streams ``LATER_PART``."""

    def __init__(self) -> None:
        super().__init__("gated")
        self.gate = threading.Event()
        self.at_gate = threading.Event()
        self.gate_opened: bool | None = None

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for token in split_tokens(SPOKEN_PART):
            await asyncio.sleep(0.005)
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        self.at_gate.set()
        self.gate_opened = await asyncio.to_thread(self.gate.wait, SILENCE_S)
        for token in split_tokens(LATER_PART):
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


#: The shared CPU can synthesize several times slower than real time while other suites run.
SILENCE_S = 120.0

PROBE_ID = "probe-after-cancel"


class ProbingTransport:
    """The real WebSocket transport, recording what was sent and received.

    Before the client's ``close`` it sends one synthesize of its own (``PROBE_ID``) on the same session
    and waits for its answer, to show the endpoint still serves the session after the cancel. A reader
    task records every frame; it hands the client at most ``_HELD`` frames ahead (so a client that stops
    reading still holds the endpoint back), and keeps the probe's frames to itself.
    """

    _HELD = 8

    def __init__(self, url: str) -> None:
        self.inner = WebSocketTransport(url)
        self.sent: list[dict[str, Any]] = []
        self.received: list[Frame] = []
        self.closed = False
        self._frames: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._room = asyncio.Event()
        self._probing = False
        self._probe_done = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        await self.inner.connect()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                frame = await self.inner.receive()
                self.received.append(frame)
                if isinstance(frame, str) and PROBE_ID in frame:
                    if json.loads(frame)["type"] != "synthesis_start":
                        self._probe_done.set()  # the probe's answer ended
                    continue
                # Held back while the client is _HELD frames behind, except once it is closing.
                while self._frames.qsize() >= self._HELD and not self._probing:
                    self._room.clear()
                    await self._room.wait()
                self._frames.put_nowait(frame)
        except EOFError:
            pass
        finally:
            self._frames.put_nowait(None)

    async def send(self, message: str) -> None:
        decoded = json.loads(message)
        self.sent.append(decoded)
        if decoded.get("type") == "close":
            self._probing = True
            self._room.set()
            probe = {"type": "synthesize", "text": "Still here.", "request_id": PROBE_ID}
            await self.inner.send(json.dumps(probe))
            await asyncio.wait_for(self._probe_done.wait(), SILENCE_S)
        await self.inner.send(message)

    async def receive(self) -> Frame:
        frame = await self._frames.get()
        self._room.set()
        if frame is None:
            raise EOFError
        return frame

    async def close(self) -> None:
        self.closed = True
        if self._reader is not None:
            await cancel_and_wait([self._reader], 5.0)
        await self.inner.close()

    @property
    def synthesized(self) -> list[str]:
        return [m["text"] for m in self.sent if m.get("type") == "synthesize"]

    def controls(self) -> list[tuple[int, dict[str, Any]]]:
        return [(i, json.loads(f)) for i, f in enumerate(self.received) if isinstance(f, str)]


@pytest.mark.parametrize("timestamps", [False, True], ids=["no-timestamps", "word-timestamps"])
def test_interrupt_from_another_thread_mid_answer(endpoint_server: Any, timestamps: bool) -> None:
    made: list[ProbingTransport] = []

    def factory() -> ProbingTransport:
        made.append(ProbingTransport(endpoint_server.ws_url))
        return made[-1]

    # A small queue: while this consumer stalls, the handler stops reading the session (backpressure), so
    # the endpoint cannot finish the answer before the cancel arrives.
    voice = VoiceCallbackHandler(
        transport_factory=factory,
        silence_timeout=SILENCE_S,
        max_queued_events=4,
        chunker_factory=lambda: IncrementalSentenceChunker(first_chunk_min_chars=None),
    )
    # The agent would go on writing only after the barge-in: the barge-in stops it.
    model = GatedModel()
    agent = Agent(model=model, callback_handler=voice)
    calls: list[bool] = []

    async def main() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        options = VoiceOptions(timestamps=timestamps)
        async with contextlib.aclosing(voice.stream(agent, "Weather?", options=options)) as stream:
            async for event in stream:
                events.append(event)
                # The barge-in comes once the model has written SPOKEN_PART (on a slow machine the first
                # audio can come sooner): then what it wrote after the barge-in is known exactly.
                if event["type"] == "audio_chunk" and not calls and model.at_gate.is_set():
                    # Barge in from another thread, twice (idempotent), while this reader stalls.
                    def barge_in() -> None:
                        calls.append(voice.interrupt())
                        calls.append(voice.interrupt())
                        model.gate.set()

                    thread = threading.Thread(target=barge_in)
                    thread.start()
                    await asyncio.to_thread(thread.join)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return events

    events = asyncio.run(asyncio.wait_for(main(), 200))
    voice.close()
    # The model never waited out its gate: it either went on after the barge-in opened it (True) or the
    # barge-in's agent cancel closed its stream while it waited there (None); False would be the timeout.
    assert calls == [True, True] and model.gate_opened is not False
    kinds = [e["type"] for e in events]
    assert all(kind in EVENT_TYPES for kind in kinds)
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end" and "error" not in kinds
    (cut_at,) = [i for i, kind in enumerate(kinds) if kind == "interrupted"]  # ONE event for two calls
    after = kinds[cut_at + 1 :]
    assert "audio_chunk" not in after and "sentence_complete" not in after, after
    assert after[-2:] == ["audio_end", "agent_end"]
    # The barge-in stopped the agent too: of the text written after it, at most the token Strands had
    # already asked for; the agent remembers what was heard, not what was written.
    written = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert written.startswith(SPOKEN_PART) and len(split_tokens(written[len(SPOKEN_PART) :])) <= 1
    assert agent.messages[-1]["content"] == [{"text": remembered_text(events[cut_at]["heard_text"])}]
    # What the caller heard: the sentences delivered in full, and the one cut.
    before = events[:cut_at]
    done = [e for e in before if e["type"] == "sentence_complete"]
    audio = [e for e in before if e["type"] == "audio_chunk"]
    interrupted = events[cut_at]
    assert interrupted["sentences_done"] == [e["sentence"] for e in done]
    cut = audio[-1]["sentence"]
    assert interrupted["sentence_cut"] == (None if cut in interrupted["sentences_done"] else cut)
    # heard_text: the sentences heard in full, then (with word timings) the words of the cut sentence
    # whose audio had been PLAYED (real time since the first chunk): at most those delivered in full.
    cut_words: list[str] = []
    words = [e for e in before if e["type"] == "words"]
    if timestamps:
        assert words and all(e["sentence"] == audio[0]["sentence"] for e in words[:1])
        if interrupted["sentence_cut"] is not None:
            pcm = sum(len(base64.b64decode(e["data"])) for e in audio if e["sentence"] == cut)
            cut_words = [
                w["word"]
                for e in words
                if e["sentence"] == cut
                for w in e["words"]
                if w["end_s"] <= pcm / BYTES_PER_SECOND
            ]
            done_words = len(heard_text([e["text"] for e in done]).split())
            cut_words = cut_words[: len(interrupted["heard_text"].split()) - done_words]
    else:
        assert not words
    assert interrupted["heard_text"] == heard_text([e["text"] for e in done], cut_words)
    end = events[kinds.index("audio_end")]
    assert end["chunks"] == len(audio) == [e["seq"] for e in audio][-1] + 1
    assert events[-1]["ttfa_ms"] == audio[0]["t_ms"] and events[-1]["audio_ms"] == audio[-1]["t_ms"]

    # On the wire: the client sent cancel after its synthesizes, nothing more to speak, then close.
    (transport,) = made
    sent = [m["type"] for m in transport.sent]
    assert sent[-2:] == ["cancel", "close"] and set(sent[:-2]) == {"synthesize"}
    # Only the chunks released before the barge-in were sent (the third sentence is released only by the
    # text that follows it, which comes after the barge-in): nothing of the rest.
    assert transport.synthesized == [SENTENCE.replace("This is", f"Part {n} is").strip() for n in (1, 2)]
    controls = transport.controls()
    cancelled = [(i, m["request_id"]) for i, m in controls if m["type"] == "synthesis_cancelled"]
    assert cancelled, "the endpoint must end the cancelled request with synthesis_cancelled"
    first_cancel = cancelled[0][0]
    # Nothing more of a cancelled request arrives: no frame names it again, no audio until the probe.
    for index, rid in cancelled:
        assert not [m for i, m in controls if i > index and m.get("request_id") == rid]
    probe_start = next(i for i, m in controls if m.get("request_id") == PROBE_ID)
    assert not [f for f in transport.received[first_cancel:probe_start] if isinstance(f, bytes)]
    # The session stays usable: the endpoint serves the next request on it, then closes normally.
    probe = [m for _, m in controls if m.get("request_id") == PROBE_ID]
    assert [m["type"] for m in probe] == ["synthesis_start", "synthesis_complete"]
    assert probe[-1]["audio_bytes"] > 0
    assert transport.closed
    assert not [m for _, m in controls if m["type"] == "error"]


def test_interrupt_with_nothing_in_progress_does_nothing() -> None:
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/x")
    assert voice.interrupt() is False
    voice.close()


def test_heard_text_joins_done_sentences_then_heard_words_of_the_cut_one() -> None:
    assert heard_text([]) == ""
    assert heard_text(["Hi there!", " The plan costs $5. "]) == "Hi there! The plan costs $5."
    assert heard_text(["Hi there!"], ["You", "can"]) == "Hi there! You can"


def test_delivery_log_counts_only_what_was_delivered() -> None:
    builder = EventBuilder()
    now = [0.0]
    log = DeliveryLog(lambda seq: 100 * (seq + 1), clock=lambda: now[0])
    assert log.interrupted_fields() == {"heard_text": "", "sentences_done": [], "sentence_cut": None}
    log.delivered(builder.audio_chunk(seq=0, sentence=0, data=b"a"))
    assert log.interrupted_fields()["sentence_cut"] == 0
    log.delivered(builder.sentence_complete(sentence=0, text="One.", duration_s=0.1))
    now[0] = 60.0
    assert log.interrupted_fields()["sentence_cut"] is None
    log.delivered(builder.audio_chunk(seq=1, sentence=1, data=b"b"))
    log.delivered(builder.text_delta(seq=0, text="ignored"))
    now[0] = 120.0  # long since played: what was delivered is what was heard
    assert log.interrupted_fields() == {"heard_text": "One.", "sentences_done": [0], "sentence_cut": 1}
    assert log.chunks == 2 and log.pcm_bytes == 300
