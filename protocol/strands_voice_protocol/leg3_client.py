"""The one Leg 3 client: records an agent's SSE answer as it arrives (sans-I/O), timed at the client.

:class:`Leg3Recorder` takes the response body's bytes as the transport delivers them, with their arrival
time, and decodes them with :class:`~strands_voice_protocol.sse.SSEDecoder` (so events come out whole however
the bytes were split). It keeps every event, the text and the audio in arrival order, and what the
client could not read (an event that is not a Leg 3 object, audio that is not base64) without stopping:
a measuring client reports a broken answer, it does not crash on it. The result is a :class:`ModeResult`.

The I/O stays with the caller (``strands-voice demo`` and ``bench`` over httpx, ``agent-infra demo``
over urllib or ``InvokeAgentRuntime``): :func:`record_stream` drives a recorder from any iterable of
byte chunks.

Every client time is in seconds from sending the request (``*_s``); the server's own times keep their
wire unit, milliseconds (``t_ms``, ``server_*_ms``).
"""

from __future__ import annotations

import base64
import binascii
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from strands_voice_protocol.events import AgentEndEvent, AudioEndEvent, ErrorEvent, Event, parse_event
from strands_voice_protocol.sse import DEFAULT_MAX_EVENT_BYTES, SSEDecoder, SSEEvent

__all__ = [
    "AudioArrival",
    "Leg3Recorder",
    "ModeResult",
    "TextArrival",
    "record_stream",
]

logger = logging.getLogger(__name__)

_FRAMING_BYTES = len(b"data: \n\n")


@dataclass(frozen=True, slots=True)
class TextArrival:
    """A ``text_delta`` as it arrived: client seconds since the request, the server's ``t_ms``, the text."""

    arrival_s: float
    t_ms: float
    text: str


@dataclass(frozen=True, slots=True)
class AudioArrival:
    """An ``audio_chunk`` as it arrived.

    Attributes:
        arrival_s: Client seconds since the request was sent.
        t_ms: The server's ``t_ms``.
        sentence: The text chunk it speaks.
        data: The encoded audio (base64-decoded).
        wire_bytes: Bytes of the whole SSE event on Leg 3 (``data: {json}\\n\\n``).
    """

    arrival_s: float
    t_ms: float
    sentence: int
    data: bytes = field(repr=False)
    wire_bytes: int

    @property
    def audio_bytes(self) -> int:
        """Encoded audio bytes."""
        return len(self.data)


@dataclass
class ModeResult:
    """One answer in one mode, as the client received it.

    Attributes:
        mode: ``bidi`` or ``batch``.
        format: The audio format asked for.
        events: Every Leg 3 event, in arrival order.
        texts: The ``text_delta`` events, in arrival order.
        audio: The ``audio_chunk`` events, in arrival order.
        sentences: ``sentence_complete`` by sentence index: (text, duration_s).
        agent_end: The ``agent_end`` event (the server's own times), when it came.
        audio_end: The ``audio_end`` event, when it came.
        errors: The ``error`` events the server sent.
        problems: What the client could not read (the event was skipped), one line each.
        response_bytes: Every byte of the response body.
        total_s: Client seconds from sending the request to the end of the stream.
        first_heard_s: Client seconds to the first audible sound, for a consumer that analyses the audio
            (``strands_voice_tools.audio_analysis``); None otherwise.
        started_at: The client's clock when the request was sent (the origin of every ``*_s``), when
            the caller gave it (:func:`record_stream` does).
        restarted_bytes: Encoded audio bytes dropped on ``sentence_restart`` (void partials; they are
            not in :attr:`audio`).
    """

    mode: str
    format: str = "pcm16"
    events: list[Event] = field(default_factory=list, repr=False)
    texts: list[TextArrival] = field(default_factory=list, repr=False)
    audio: list[AudioArrival] = field(default_factory=list, repr=False)
    sentences: dict[int, tuple[str, float]] = field(default_factory=dict)
    agent_end: AgentEndEvent | None = None
    audio_end: AudioEndEvent | None = None
    errors: list[ErrorEvent] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    response_bytes: int = 0
    total_s: float = 0.0
    first_heard_s: float | None = None
    started_at: float = 0.0
    restarted_bytes: int = 0

    @property
    def text(self) -> str:
        """The agent's text."""
        return "".join(delta.text for delta in self.texts)

    @property
    def first_text_s(self) -> float | None:
        """Seconds to the first ``text_delta``."""
        return self.texts[0].arrival_s if self.texts else None

    @property
    def first_audio_s(self) -> float | None:
        """Seconds to the first ``audio_chunk``: the time to first audio, at the client."""
        return self.audio[0].arrival_s if self.audio else None

    @property
    def last_audio_s(self) -> float | None:
        """Seconds to the last ``audio_chunk``."""
        return self.audio[-1].arrival_s if self.audio else None

    @property
    def encoded_audio(self) -> bytes:
        """All audio, in arrival order, still encoded in :attr:`format`."""
        return b"".join(chunk.data for chunk in self.audio)

    @property
    def audio_bytes(self) -> int:
        """Encoded audio bytes received."""
        return sum(chunk.audio_bytes for chunk in self.audio)

    @property
    def audio_wire_bytes(self) -> int:
        """Bytes of all ``audio_chunk`` events on Leg 3."""
        return sum(chunk.wire_bytes for chunk in self.audio)

    @property
    def server_ttfa_ms(self) -> float | None:
        """``agent_end.ttfa_ms``, the server's own time to first audio."""
        return self.agent_end["ttfa_ms"] if self.agent_end is not None else None

    @property
    def error_lines(self) -> list[str]:
        """Server ``error`` events as ``code: message``, then the client's problems (``client: ...``)."""
        return [f"{e['code']}: {e['message']}" for e in self.errors] + [f"client: {p}" for p in self.problems]

    def figures(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict (client times in seconds, server times in milliseconds)."""

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        end = self.agent_end
        return {
            "mode": self.mode,
            "format": self.format,
            "first_text_s": rounded(self.first_text_s),
            "first_audio_s": rounded(self.first_audio_s),
            "first_heard_s": rounded(self.first_heard_s),
            "last_audio_s": rounded(self.last_audio_s),
            "total_s": rounded(self.total_s),
            "audio_chunks": len(self.audio),
            "audio_bytes": self.audio_bytes,
            "events": len(self.events),
            "text_chars": len(self.text),
            "server_ttfa_ms": None if end is None else end["ttfa_ms"],
            "server_text_ms": None if end is None else end["text_ms"],
            "server_audio_ms": None if end is None else end["audio_ms"],
            "errors": self.error_lines,
            "server_agent_end": end,
        }


class Leg3Recorder:
    """Records one Leg 3 answer from its body's bytes (sans-I/O).

    Args:
        mode: The mode asked for (``bidi`` or ``batch``), recorded in the result.
        format: The audio format asked for.
        max_event_bytes: The decoder's limit on one event (see :class:`SSEDecoder`).

    Attributes:
        result: What has been recorded so far (complete after :meth:`close`).
    """

    def __init__(
        self, mode: str, format: str = "pcm16", *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    ) -> None:
        self.result = ModeResult(mode=mode, format=format)
        self._decoder = SSEDecoder(max_event_bytes=max_event_bytes)

    def feed(self, data: bytes, arrival_s: float) -> list[Event]:
        """Take bytes of the body as they arrived; return the Leg 3 events they completed.

        Args:
            data: The bytes, split anywhere.
            arrival_s: When they arrived, in client seconds since the request was sent.

        Raises:
            SSEDecodeError: One event is larger than ``max_event_bytes``.
        """
        self.result.response_bytes += len(data)
        return self._record(self._decoder.feed(data), arrival_s)

    def close(self, end_s: float) -> ModeResult:
        """The body ended at ``end_s`` (client seconds); returns the result.

        An event left unterminated at the end is dropped, as the SSE rules say.
        """
        self._record(self._decoder.flush(), end_s)
        self.result.total_s = end_s
        return self.result

    def _record(self, decoded: list[SSEEvent], arrival_s: float) -> list[Event]:
        events: list[Event] = []
        for sse in decoded:
            event = self._parse(sse)
            if event is not None and self._take(event, sse, arrival_s):
                events.append(event)
        return events

    def _parse(self, sse: SSEEvent) -> Event | None:
        # A broken event is reported and skipped; the rest of the answer may still be good.
        try:
            value = sse.json()
        except ValueError:
            self.result.problems.append("an event that is not JSON")
            return None
        try:
            event = parse_event(value)
        except ValueError as error:
            self.result.problems.append(str(error))
            return None
        if event is None:
            logger.debug("data=<%s> | skipped an event type this client does not know", sse.data[:80])
        return event

    def _take(self, event: Event, sse: SSEEvent, arrival_s: float) -> bool:
        result = self.result
        if event["type"] == "audio_chunk":
            try:
                data = base64.b64decode(event["data"], validate=True)
            except (binascii.Error, ValueError):
                result.problems.append("undecodable audio chunk")
                return False
            wire = _FRAMING_BYTES + len(sse.data.encode("utf-8"))
            result.audio.append(AudioArrival(arrival_s, event["t_ms"], event["sentence"], data, wire))
        elif event["type"] == "text_delta":
            result.texts.append(TextArrival(arrival_s, event["t_ms"], event["text"]))
        elif event["type"] == "sentence_complete":
            result.sentences[event["sentence"]] = (event["text"], event["duration_s"])
        elif event["type"] == "sentence_restart":
            # The sentence's audio so far is void (the endpoint could not resume at a sample): a
            # player drops it, and so does the recording, so the WAV and timelines hold what is heard.
            kept = [chunk for chunk in result.audio if chunk.sentence != event["sentence"]]
            result.restarted_bytes += sum(chunk.audio_bytes for chunk in result.audio) - sum(
                chunk.audio_bytes for chunk in kept
            )
            result.audio = kept
        elif event["type"] == "audio_end":
            result.audio_end = event
        elif event["type"] == "agent_end":
            result.agent_end = event
        elif event["type"] == "error":
            result.errors.append(event)
        result.events.append(event)
        return True


def record_stream(
    chunks: Iterable[bytes],
    recorder: Leg3Recorder,
    *,
    started: float,
    clock: Callable[[], float] = time.perf_counter,
    on_update: Callable[[ModeResult], None] | None = None,
) -> ModeResult:
    """Feed a body's chunks to ``recorder`` as they arrive, timing each on ``clock``; return the result.

    Args:
        chunks: The response body as the transport delivers it (iterating may send the request).
        recorder: The recorder.
        started: ``clock()`` when the request was sent: the origin of every client time.
        clock: Monotonic seconds.
        on_update: Called with the partial result after each chunk (progress).
    """
    recorder.result.started_at = started
    for chunk in chunks:
        recorder.feed(chunk, clock() - started)
        if on_update is not None:
            on_update(recorder.result)
    return recorder.close(clock() - started)
