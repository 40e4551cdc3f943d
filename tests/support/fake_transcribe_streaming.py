"""A stand-in for Amazon Transcribe streaming (``StartStreamTranscription``) over TLS and HTTP/2, for tests.

:func:`create_transcribe_app` is an ASGI app for hypercorn (:func:`fake_sagemaker_runtime.serve_tls`). It
decodes the signed event stream the REAL SDK client writes (the same framing and signing as SageMaker's,
:class:`fake_sagemaker_runtime.SignedEventReader`), checks each ``AudioEvent``'s signature, and answers
with ``TranscriptEvent`` messages whose text is derived from the audio received: a partial result
``heard <n> bytes`` after each event, then, when the client ends its audio, two final results
``<n> bytes`` and ``sha256 <first 16 hex digits of the audio>``. It recognizes nothing; the texts prove
that every byte arrived, in order. ``fail_with`` answers the first audio event with that modeled
exception instead (``BadRequestException``, ...); ``refuse`` refuses the request itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from smithy_aws_event_stream.events import EventMessage

from support.fake_sagemaker_runtime import SignedEventReader

__all__ = ["TranscribeStats", "create_transcribe_app", "final_texts", "transcript_event"]

ROUTE = "/stream-transcription"


@dataclass
class TranscribeStats:
    """What went through the fake: the last request's headers, each audio event's size, the signatures."""

    http_version: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    path: str = ""
    chunks: list[int] = field(default_factory=list)
    bad_signatures: int = 0
    input_ended: bool = False
    partials_sent: int = 0
    streams: int = 0
    audio: bytes = b""


def final_texts(audio: bytes) -> tuple[str, str]:
    """The two final results the fake answers ``audio`` with."""
    return f"{len(audio)} bytes", f"sha256 {hashlib.sha256(audio).hexdigest()[:16]}"


def transcript_event(result_id: str, text: str, *, partial: bool) -> bytes:
    """One ``TranscriptEvent`` message, as Transcribe frames it (JSON payload)."""
    result = {
        "ResultId": result_id,
        "StartTime": 0.0,
        "EndTime": 1.0,
        "IsPartial": partial,
        "Alternatives": [{"Transcript": text, "Items": []}],
    }
    headers = {
        ":message-type": "event",
        ":event-type": "TranscriptEvent",
        ":content-type": "application/json",
    }
    payload = json.dumps({"Transcript": {"Results": [result]}}).encode()
    return EventMessage(headers=headers, payload=payload).encode()


def exception_event(kind: str, message: str) -> bytes:
    """A modeled exception message (``BadRequestException``, ``LimitExceededException``, ...)."""
    headers = {":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"}
    return EventMessage(headers=headers, payload=json.dumps({"Message": message}).encode()).encode()


def create_transcribe_app(
    *,
    secret_key: str,
    stats: TranscribeStats,
    fail_with: str | None = None,
    refuse: tuple[int, str] | None = None,
    silent: bool = False,
) -> Any:
    """The ASGI app playing Transcribe for one stream at a time (``stats`` is filled as it goes).

    ``refuse`` = (HTTP status, error type) answers the request itself with that error, as Transcribe
    refuses a stream before it starts (``AccessDeniedException`` 403, ``LimitExceededException`` 429);
    ``silent`` never answers (the client's connect timeout).
    """

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        stats.http_version, stats.path = scope.get("http_version"), scope["path"]
        stats.headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        reader = SignedEventReader(stats.headers["authorization"], secret_key, event_type="AudioEvent")
        if refuse is not None:
            await _refuse(send, *refuse)
            return
        if silent:
            await _drain(receive, until_disconnect=True)
            return
        response_headers = [
            (b"content-type", b"application/vnd.amazon.eventstream"),
            (b"x-amzn-request-id", b"fake-request-1"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": response_headers})
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        await _answer(receive, send, reader, stats, fail_with)

    return app


async def _answer(
    receive: Any, send: Any, reader: SignedEventReader, stats: TranscribeStats, fail_with: str | None
) -> None:
    """Read the audio events and answer each; the final results once the client ends its audio."""
    audio = bytearray()
    stats.audio = b""
    stats.streams += 1
    stats.input_ended = False

    async def out(event: bytes, *, more: bool = True) -> None:
        await send({"type": "http.response.body", "body": event, "more_body": more})

    while not stats.input_ended:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        for part in reader.feed(message.get("body", b"")):
            if part is None:
                stats.input_ended = True
                break
            stats.bad_signatures += 0 if part.signature_ok else 1
            stats.chunks.append(len(part.data))
            audio += part.data
            stats.audio = bytes(audio)
            if fail_with is not None:
                await out(exception_event(fail_with, "The sample rate is not supported."), more=False)
                await _drain(receive)
                return
            await out(transcript_event("seg-1", f"heard {len(audio)} bytes", partial=True))
            stats.partials_sent += 1
        if not message.get("more_body", False):
            stats.input_ended = True
    first, second = final_texts(bytes(audio))
    await out(transcript_event("seg-1", first, partial=False))
    await out(transcript_event("seg-2", second, partial=False), more=False)


async def _refuse(send: Any, status: int, error_type: str) -> None:
    body = json.dumps({"Message": f"refused by the fake: {error_type}"}).encode()
    headers = [(b"content-type", b"application/json"), (b"x-amzn-errortype", error_type.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _drain(receive: Any, *, until_disconnect: bool = False) -> None:
    """Read what the client still sends until it ends (or goes: ``until_disconnect``), bounded."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(5.0):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                if not until_disconnect and not message.get("more_body", False):
                    return
