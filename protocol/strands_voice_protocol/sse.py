"""Server-Sent Events codec (sans-I/O): ``data: {json}\\n\\n`` out, an incremental spec-following decoder in.

The decoder follows the WHATWG "event stream" parsing rules: lines end with ``\\r\\n``, ``\\n`` or ``\\r``;
a blank line dispatches the event; ``data:`` lines join with ``\\n``; lines starting with ``:`` are
comments; ``event:``, ``id:`` and ``retry:`` set their fields; one leading space after the colon is
dropped; a UTF-8 BOM at the very start of the stream is skipped; text is decoded as UTF-8 with
replacement. It buffers bytes, so events come out whole however the transport chunked them (a CRLF or a
multi-byte character split across chunks included). A stream that ends in the middle of an event does
not dispatch it (as the spec says) unless ``dispatch_incomplete=True``.

Memory is bounded: a line or an event larger than ``max_event_bytes`` raises :class:`SSEDecodeError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from strands_voice_protocol._utf8 import json_utf8, utf8
from strands_voice_protocol.errors import ConfigurationError, SSEDecodeError

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "SSEDecoder",
    "SSEEvent",
    "encode_sse",
    "encode_sse_event",
]

#: Large enough for a base64 audio chunk of a long sentence (~30 s of pcm16 is 1.9 MiB of base64).
DEFAULT_MAX_EVENT_BYTES: Final = 8 * 1024 * 1024

_BOM: Final = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    Attributes:
        data: The event's data (its ``data:`` lines joined with ``\\n``).
        event: The event type (``message`` unless an ``event:`` field said otherwise).
        id: The last event id seen in the stream at dispatch time, None if there was none.
    """

    data: str
    event: str = "message"
    id: str | None = None

    def json(self) -> Any:
        """Parse ``data`` as JSON.

        Raises:
            ValueError: ``data`` is not valid JSON.
        """
        return json.loads(self.data)


def encode_sse(event: Mapping[str, Any]) -> bytes:
    """Frame one JSON object as ``data: {json}\\n\\n`` (compact JSON, UTF-8, no raw newlines).

    Raises:
        TextEncodingError: a string in ``event`` holds a lone surrogate (the message names where).
        ValueError: ``event`` holds NaN or infinity, which JSON cannot carry.
    """
    return b"data: " + json_utf8(event, "event") + b"\n\n"


def encode_sse_event(data: str, *, event: str | None = None, id: str | None = None) -> bytes:
    """Frame arbitrary text as one event; each line of ``data`` becomes its own ``data:`` line.

    Raises:
        TextEncodingError: ``data``, ``event`` or ``id`` holds a lone surrogate, which UTF-8 cannot carry
            (a ``ValueError``; the message names the field).
        ValueError: ``event`` or ``id`` contains a line break (or ``id`` a NUL), which SSE cannot carry.
    """
    for field, value in (("data", data), ("event", event), ("id", id)):
        if value is not None:
            utf8(value, field)
    out: list[str] = []
    if event is not None:
        if any(c in event for c in "\r\n"):
            raise ValueError("an SSE event type cannot contain a line break")
        out.append(f"event: {event}\n")
    if id is not None:
        if any(c in id for c in "\r\n\0"):
            raise ValueError("an SSE id cannot contain a line break or NUL")
        out.append(f"id: {id}\n")
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out.extend(f"data: {line}\n" for line in lines)
    out.append("\n")
    return "".join(out).encode("utf-8")


class SSEDecoder:
    """Incremental SSE parser: feed bytes as they arrive, get whole events back.

    Args:
        max_event_bytes: The most bytes one line, or one event's data, may take before the stream is
            refused with :class:`SSEDecodeError` (so a hostile stream cannot grow memory without limit).
        dispatch_incomplete: Dispatch an event still open at :meth:`flush` (the spec discards it).

    Attributes:
        retry: The last valid ``retry:`` value in milliseconds, None if none came.
        last_event_id: The last event id set by an ``id:`` field (persists across events).
    """

    def __init__(
        self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES, dispatch_incomplete: bool = False
    ) -> None:
        if max_event_bytes < 1:
            raise ConfigurationError("max_event_bytes must be positive")
        self.max_event_bytes = max_event_bytes
        self.dispatch_incomplete = dispatch_incomplete
        self.retry: int | None = None
        self.last_event_id: str | None = None
        self._buf = bytearray()
        self._scan_from = 0  # bytes of _buf already known to hold no line break
        self._at_start = True  # the BOM check is still pending
        self._skip_lf = False  # the last line ended with "\r": a "\n" right after it belongs to it
        self._data: list[str] = []
        self._data_bytes = 0
        self._event_type = ""

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Add bytes from the transport; return the events they completed, in order.

        Raises:
            SSEDecodeError: a line or an event is larger than ``max_event_bytes``.
        """
        if not data:
            return []
        self._buf += data
        if self._at_start:
            if len(self._buf) < len(_BOM) and _BOM.startswith(self._buf):
                return []  # could still be a BOM
            if self._buf.startswith(_BOM):
                del self._buf[: len(_BOM)]
            self._at_start = False
        events: list[SSEEvent] = []
        start = 0
        buf = self._buf
        while True:
            if self._skip_lf and start < len(buf):
                if buf[start] == 0x0A:
                    start += 1
                self._skip_lf = False
            cr = buf.find(b"\r", max(start, self._scan_from))
            lf = buf.find(b"\n", max(start, self._scan_from))
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                end, next_start = lf, lf + 1
            else:
                end, next_start = cr, cr + 1
                self._skip_lf = True
            self._scan_from = 0
            self._line(bytes(buf[start:end]), events)
            start = next_start
        del buf[:start]
        self._scan_from = len(buf)
        if len(buf) > self.max_event_bytes:
            self._fail()
        return events

    def flush(self) -> list[SSEEvent]:
        """End of stream: handle a last unterminated line, then reset the decoder for a new stream.

        Returns:
            The event still open at the end, if ``dispatch_incomplete`` is set; otherwise nothing.
        """
        events: list[SSEEvent] = []
        if self.dispatch_incomplete:
            if self._buf and not (self._at_start and _BOM.startswith(self._buf)):
                self._line(bytes(self._buf), events)
            self._line(b"", events)
        self._buf.clear()
        self._scan_from = 0
        self._at_start = True
        self._skip_lf = False
        self._data = []
        self._data_bytes = 0
        self._event_type = ""
        return events

    def _fail(self) -> None:
        size = self.max_event_bytes
        self._buf.clear()
        self._data = []
        self._data_bytes = 0
        raise SSEDecodeError(f"An SSE event is larger than the limit of {size} bytes.")

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if len(raw) > self.max_event_bytes:
            self._fail()
        if not raw:
            self._dispatch(events)
            return
        if raw[:1] == b":":
            return  # comment
        line = raw.decode("utf-8", errors="replace")
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._data_bytes += len(raw)
            if self._data_bytes > self.max_event_bytes:
                self._fail()
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif field == "retry":
            if value.isascii() and value.isdigit():
                self.retry = int(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event_type or "message", self.last_event_id))
        self._data = []
        self._data_bytes = 0
        self._event_type = ""
