"""The one Leg 3 client (``Leg3Recorder``): whole events however bytes split; errors kept; bad input noted."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strands_voice_protocol.events import EVENT_TYPES, EventBuilder, parse_event
from strands_voice_protocol.leg3_client import Leg3Recorder, ModeResult, record_stream
from strands_voice_protocol.sse import encode_sse

PCM = bytes(range(256)) * 4


def _answer() -> list[dict[str, Any]]:
    """A small answer built as the server builds it: text, two audio chunks, a server error, the end."""
    ticks = iter(float(i) / 1000 for i in range(100))
    build = EventBuilder(clock=lambda: next(ticks))
    return [
        dict(build.agent_start(mode="bidi", request_id="r1")),
        dict(build.text_delta(seq=0, text="Héllo there. ")),
        dict(build.audio_start(format="pcm16", sample_rate=24_000)),
        dict(build.audio_chunk(seq=0, sentence=0, data=PCM[:600])),
        dict(build.audio_chunk(seq=1, sentence=0, data=PCM[600:])),
        dict(build.sentence_complete(sentence=0, text="Héllo there.", duration_s=0.0213)),
        dict(build.error(code="connection_lost", message="Speech failed: the endpoint went away.")),
        dict(build.audio_end(chunks=2, duration_s=0.0213)),
        dict(build.agent_end(ttfa_ms=3.0, text_ms=1.0, audio_ms=4.0)),
    ]


BODY = b": keep-alive\r\n\r\n" + b"".join(encode_sse(event) for event in _answer())


def _record(pieces: list[bytes]) -> ModeResult:
    recorder = Leg3Recorder("bidi")
    for at, piece in enumerate(pieces):
        recorder.feed(piece, float(at))
    return recorder.close(float(len(pieces)))


def _split(body: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def _summary(result: ModeResult) -> tuple[Any, ...]:
    # Everything but the arrival times (which depend on how the bytes were split).
    return (
        result.events,
        result.text,
        result.encoded_audio,
        [(a.t_ms, a.sentence, a.wire_bytes) for a in result.audio],
        result.sentences,
        result.errors,
        result.problems,
        result.agent_end,
        result.audio_end,
        result.response_bytes,
    )


WHOLE = _record([BODY])


def test_whole_body_is_recorded() -> None:
    assert [event["type"] for event in WHOLE.events] == [event["type"] for event in _answer()]
    assert WHOLE.events == _answer()
    assert WHOLE.text == "Héllo there. "
    assert WHOLE.encoded_audio == PCM and WHOLE.audio_bytes == len(PCM)
    assert [chunk.sentence for chunk in WHOLE.audio] == [0, 0]
    assert WHOLE.sentences == {0: ("Héllo there.", 0.021)}
    assert WHOLE.response_bytes == len(BODY)
    assert WHOLE.server_ttfa_ms == 3.0 and WHOLE.agent_end is not None
    assert WHOLE.audio_end is not None and WHOLE.audio_end["chunks"] == 2
    # The server's error is kept, the answer goes on after it.
    assert WHOLE.errors == [_answer()[6]]
    assert WHOLE.error_lines == ["connection_lost: Speech failed: the endpoint went away."]
    assert WHOLE.problems == []
    assert WHOLE.audio_wire_bytes == sum(len(encode_sse(e)) for e in _answer() if e["type"] == "audio_chunk")


@given(st.lists(st.integers(min_value=1, max_value=len(BODY) - 1), max_size=40))
@example([])
@example(list(range(1, len(BODY))))  # one byte at a time (splits the CRLF and the multi-byte é)
def test_any_split_gives_the_same_result(cuts: list[int]) -> None:
    assert _summary(_record(_split(BODY, cuts))) == _summary(WHOLE)


def test_arrival_times_are_the_chunk_that_completed_the_event() -> None:
    audio = BODY.index(b'"audio_chunk"')
    result = _record([BODY[:audio], BODY[audio:]])
    assert result.first_text_s == 0.0
    assert result.first_audio_s == 1.0 and result.last_audio_s == 1.0
    assert result.total_s == 2.0
    figures = result.figures()
    assert (figures["first_text_s"], figures["first_audio_s"], figures["total_s"]) == (0.0, 1.0, 2.0)
    assert (figures["audio_chunks"], figures["events"], figures["server_ttfa_ms"]) == (2, 9, 3.0)
    json.dumps(figures)  # JSON-ready


def test_bad_base64_and_broken_events_are_reported_and_skipped() -> None:
    body = (
        b'data: {"type": "audio_chunk", "t_ms": 1, "seq": 0, "sentence": 0, "data": "***"}\n\n'
        b"data: not json\n\n"
        b"data: [1, 2]\n\n"
        b'data: {"type": "text_delta", "t_ms": 2, "seq": 0}\n\n'
        b'data: {"type": "text_delta", "seq": 0, "text": "x"}\n\n'
        b'data: {"type": "speech_rate", "t_ms": 3}\n\n'  # a type from a newer server: skipped quietly
        b'data: {"type": "text_delta", "t_ms": 4, "seq": 1, "text": "ok"}\n\n'
    )
    result = _record([body])
    assert result.problems == [
        "undecodable audio chunk",
        "an event that is not JSON",
        "a Leg 3 event must be a JSON object",
        "a text_delta event needs str 'text'",
        "a text_delta event needs a number 't_ms'",
    ]
    assert result.error_lines[0] == "client: undecodable audio chunk"
    assert result.audio == [] and result.text == "ok" and len(result.events) == 1


def test_an_unterminated_last_event_is_dropped() -> None:
    result = _record([b'data: {"type": "text_delta", "t_ms": 1, "seq": 0, "text": "x"}\n'])
    assert result.events == [] and result.problems == []


def test_record_stream_times_each_chunk_from_the_request() -> None:
    ticks = iter([10.0, 10.5, 11.0, 12.0])
    seen: list[int] = []
    pieces = [BODY[:40], BODY[40:]]
    result = record_stream(
        pieces,
        Leg3Recorder("batch", "mp3"),
        started=9.5,
        clock=lambda: next(ticks),
        on_update=lambda partial: seen.append(len(partial.events)),
    )
    assert (result.mode, result.format) == ("batch", "mp3")
    assert result.first_text_s == 1.0 and result.total_s == 1.5
    assert seen[-1] == 9


@pytest.mark.parametrize(
    "value",
    [
        {"type": "agent_end", "t_ms": 1, "ttfa_ms": "soon", "text_ms": None, "audio_ms": None},
        {"type": "audio_chunk", "t_ms": 1, "seq": True, "sentence": 0, "data": ""},
        {"t_ms": 1},
    ],
)
def test_parse_event_refuses_wrong_types(value: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        parse_event(value)


def test_parse_event_keeps_what_the_builder_makes() -> None:
    build = EventBuilder()
    for event in _answer():
        assert parse_event(json.loads(json.dumps(event))) == event
    more = [
        build.words(sentence=0, words=[]),
        build.sentence_restart(sentence=0, dropped_s=0.5),
        build.interrupted(heard_text="Hi.", sentences_done=[0], sentence_cut=None),
    ]
    for event in more:
        assert parse_event(json.loads(json.dumps(event))) == event
    kinds = {event["type"] for event in [*_answer(), *more]}
    assert kinds == set(EVENT_TYPES)  # every Leg 3 type is both built and checked
    assert base64.b64decode(_answer()[3]["data"]) == PCM[:600]
