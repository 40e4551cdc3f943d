"""The endpoint's answers read into session events: one frame in, the events it makes out (sans-I/O).

Answers come strictly in the order requests were sent. Audio of a request resumed with ``skip_samples``
goes through its :class:`~strands_voice.session._seam.Seam`; an endpoint that does not echo ``skip_samples``
answered from sample 0, so the request is replayed whole after a ``RequestRestarted``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import (
    ErrorFrame,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    WordTimestamps,
    decode_server_frame,
)

from strands_voice.session import _events as session_events
from strands_voice.session._requests import OwedRequest, RequestBook
from strands_voice.session._seam import keep_tail

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class FrameOutcome:
    """What one frame did: the events to give, whether a request finished, a request answered ``busy``."""

    events: list[session_events.SessionEvent] = field(default_factory=list)
    finished: bool = False
    busy: OwedRequest | None = None


def read_frame(book: RequestBook, frame: str | bytes, *, retry_busy: bool) -> FrameOutcome:
    """Apply one frame from the endpoint to ``book``.

    Args:
        book: The owed requests.
        frame: A control frame (``str``) or audio (``bytes``).
        retry_busy: True when a ``busy`` answer is retried (the retry policy is on).
    """
    try:
        message = decode_server_frame(frame)
    except FrameDecodeError:
        logger.warning("unreadable control frame from the endpoint; ignored")
        return FrameOutcome()
    if isinstance(message, bytes):
        return FrameOutcome(_audio(book, message))
    if isinstance(message, SynthesisStart):
        return FrameOutcome(_started(book, message))
    if isinstance(message, SynthesisComplete):
        return _completed(book, message)
    if isinstance(message, SynthesisCancelled):
        request = book.end(message.request_id)
        return FrameOutcome([] if request is None else [session_events.RequestCancelled(request.request_id)])
    if isinstance(message, WordTimestamps):
        return FrameOutcome(_words(book, message))
    assert isinstance(message, ErrorFrame)
    if message.request_id is None:
        return FrameOutcome(_error_without_id(book, message))
    request = book.by_wire.get(message.request_id)
    if request is None:
        return FrameOutcome()
    request.answered = True
    if message.code == "busy" and not request.cancelled and retry_busy:
        return FrameOutcome(busy=request)
    book.end(message.request_id)
    logger.debug("request_id=<%s>, code=<%s> | request failed", request.request_id, message.code)
    return FrameOutcome([session_events.RequestFailed(request.request_id, message.code, message.message)])


def _completed(book: RequestBook, message: SynthesisComplete) -> FrameOutcome:
    request = book.end(message.request_id)
    if request is None:
        return FrameOutcome()
    if request.cancelled:
        return FrameOutcome([session_events.RequestCancelled(request.request_id)], finished=True)
    logger.debug("request_id=<%s> | audio complete", request.request_id)
    if request.resumed:  # the endpoint counted what it sent on the last connection only
        duration = request.delivered / (2 * request.sample_rate)
        completed = session_events.RequestCompleted(
            request.request_id, request.delivered, duration, message.elapsed_s
        )
    else:
        completed = session_events.RequestCompleted(
            request.request_id, message.audio_bytes, message.total_duration_s, message.elapsed_s
        )
    return FrameOutcome([completed], finished=True)


def _audio(book: RequestBook, data: bytes) -> list[session_events.SessionEvent]:
    request = book.current
    if request is None or request.cancelled or not data:
        return []  # outside a request, or a cancelled (or replaced) one: dropped
    if request.seam is not None:
        data = request.seam.feed(data)
        if request.seam.joined:
            request.seam = None
        if not data:
            return []
    request.delivered += len(data)
    request.tail = keep_tail(request.tail, data)
    return [session_events.AudioChunk(request.request_id, data)]


def _started(book: RequestBook, message: SynthesisStart) -> list[session_events.SessionEvent]:
    request = book.by_wire.get(message.request_id)
    book.current = request
    if request is None:
        logger.debug("request_id=<%s> | start of an unknown request; ignored", message.request_id)
        return []
    request.answered = True
    if request.cancelled:
        return []
    events: list[session_events.SessionEvent] = []
    if request.seam is not None:
        if message.skip_samples == request.seam.skip_samples:
            request.resumed = True
            logger.debug("request_id=<%s> | resumed at a sample", request.request_id)
            return []  # the listener already has this request's start; its audio continues
        # An endpoint that does not know skip_samples answers from sample 0: replay it whole.
        events.append(session_events.RequestRestarted(request.request_id, request.delivered))
        logger.debug(
            "request_id=<%s>, dropped_bytes=<%d> | no skip_samples echo; replaying whole",
            request.request_id,
            request.delivered,
        )
        request.seam = None
        request.resumed = False
        request.delivered = 0
        request.tail = b""
        request.words_until = 0
    request.started = True
    request.sample_rate = message.sample_rate
    events.append(
        session_events.RequestStarted(
            request.request_id, message.format, message.sample_rate, message.channels
        )
    )
    return events


def _words(book: RequestBook, message: WordTimestamps) -> list[session_events.SessionEvent]:
    request = book.by_wire.get(message.request_id)
    if request is None or request.cancelled:
        return []  # cancelled (or unknown) request
    words = message.words
    if request.resumed:
        # A resumed answer repeats the words of the segment it was cut in: they were given already.
        words = tuple(word for word in words if word.char_start >= request.words_until)
    if not words:
        return []
    request.words_until = max(request.words_until, *(word.char_end for word in words))
    return [session_events.WordsReceived(request.request_id, words)]


def _error_without_id(book: RequestBook, message: ErrorFrame) -> list[session_events.SessionEvent]:
    """An ``error`` naming no request: the answer to a frame the endpoint could not read.

    Answers come strictly in order, and the session sends only well-formed control frames, so the
    unreadable frame was the earliest request on this connection whose answer has not begun.
    """
    if message.code == "busy":
        # The session itself was refused (a 1013 close follows): resumed like a drop.
        logger.debug("endpoint busy; the close that follows is retried")
        return []
    request = book.first_unanswered()
    if request is None:
        logger.debug("code=<%s> | endpoint error without a request", message.code)
        return [session_events.RequestFailed(None, message.code, message.message)]
    book.forget(request)
    logger.debug("request_id=<%s>, code=<%s> | unreadable request failed", request.request_id, message.code)
    if request.cancelled:
        return [session_events.RequestCancelled(request.request_id)]
    return [session_events.RequestFailed(request.request_id, message.code, message.message)]
