"""Leg 3 events declared once: validation and the builder's rounding come from the ``TypedDict``s."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pytest
from strands_voice_protocol.event_shapes import Decimals, EventShapes
from strands_voice_protocol.events import EVENT_TYPES, EventBuilder, parse_event
from strands_voice_protocol.frames import WordTiming
from strands_voice_protocol.synthesis_events import SynthesisEvent, SynthesisEventBuilder


def _every_event() -> list[dict[str, Any]]:
    clock = iter(float(i) for i in range(100))
    build = EventBuilder(clock=lambda: next(clock))
    return [
        build.agent_start(mode="bidi", request_id=None),
        build.text_delta(seq=0, text="Hi."),
        build.audio_start(format="pcm16", sample_rate=24000),
        build.audio_chunk(seq=0, sentence=0, data=b"\x00\x01"),
        build.sentence_complete(sentence=0, text="Hi.", duration_s=0.123456),
        build.words(sentence=0, words=[WordTiming("Hi", 0.0, 0.2, 0, 2)]),
        build.sentence_restart(sentence=0, dropped_s=0.98765),
        build.interrupted(heard_text="Hi.", sentences_done=[0], sentence_cut=None),
        build.audio_end(chunks=1, duration_s=1.00049),
        build.agent_end(ttfa_ms=1.0, text_ms=None, audio_ms=2.0),
        build.error(code="internal", message="x"),
    ]


def test_the_types_come_from_the_declarations_in_wire_order() -> None:
    assert [event["type"] for event in _every_event()] == list(EVENT_TYPES)


def test_the_builder_keeps_the_wire_shape() -> None:
    events = _every_event()
    assert events[1] == {"type": "text_delta", "t_ms": 2000.0, "seq": 0, "text": "Hi."}
    assert list(events[2]) == ["type", "t_ms", "format", "sample_rate", "channels"]
    assert events[3]["data"] == "AAE="
    # The decimals a field declares (Annotated[float, Decimals(3)]) are applied by the builder.
    assert (events[4]["duration_s"], events[6]["dropped_s"], events[8]["duration_s"]) == (0.123, 0.988, 1.0)
    assert events[5]["words"] == [
        {"word": "Hi", "start_s": 0.0, "end_s": 0.2, "char_start": 0, "char_end": 2}
    ]


@pytest.mark.parametrize("index", range(len(EVENT_TYPES)))
def test_every_declared_field_is_checked(index: int) -> None:
    event = json.loads(json.dumps(_every_event()[index]))
    assert parse_event(event) == event
    for name, value in event.items():
        if name == "type":
            continue
        wrong = {**event, name: {"not": "this"}}
        with pytest.raises(ValueError, match=repr(name)):
            parse_event(wrong)
        missing = {key: v for key, v in event.items() if key != name}
        if value is None or name in {"request_id", "sentence_cut", "ttfa_ms", "text_ms", "audio_ms"}:
            assert parse_event(missing) == missing  # declared "X | None": may be left out
        else:
            with pytest.raises(ValueError, match=repr(name)):
                parse_event(missing)


def test_a_number_is_not_a_bool_and_an_int_field_takes_no_float() -> None:
    chunk = json.loads(json.dumps(_every_event()[3]))
    with pytest.raises(ValueError, match="'seq'"):
        parse_event({**chunk, "seq": True})
    with pytest.raises(ValueError, match="'seq'"):
        parse_event({**chunk, "seq": 1.5})
    assert parse_event({**chunk, "t_ms": 3}) is not None  # a float field takes any JSON number


def test_synthesis_events_carry_the_request() -> None:
    build = SynthesisEventBuilder("r1", clock=lambda: 0.0)
    assert build.error(code="busy", message="m")["request_id"] == "r1"
    assert build.audio_start(format="mp3", sample_rate=24000)["request_id"] == "r1"
    assert build.synthesis_complete(audio_bytes=4, total_duration_s=0.5, elapsed_s=0.1) == {
        "type": "synthesis_complete",
        "t_ms": 0.0,
        "request_id": "r1",
        "audio_bytes": 4,
        "total_duration_s": 0.5,
        "elapsed_s": 0.1,
    }
    assert list(build.word_timestamps([])) == ["type", "t_ms", "request_id", "words"]
    shapes = EventShapes(SynthesisEvent)  # the same declarations validate the SSE transport's events
    assert shapes.types == ("audio_start", "word_timestamps", "audio_chunk", "error", "synthesis_complete")
    built = [
        build.audio_start(format="pcm16", sample_rate=24000),
        build.word_timestamps([WordTiming("Hi", 0.0, 0.2, 0, 2)]),
        build.audio_chunk(seq=0, sentence=0, data=b"\x00\x00"),
        build.error(code="internal", message="m"),
        build.synthesis_complete(audio_bytes=2, total_duration_s=0.1, elapsed_s=0.2),
    ]
    for event in built:
        assert shapes.validate(json.loads(json.dumps(event))) == event
    with pytest.raises(ValueError, match="'audio_bytes'"):
        shapes.validate({**built[-1], "audio_bytes": "2"})


class _PingFields(TypedDict):
    count: int
    flag: bool
    ratio: NotRequired[Annotated[float, Decimals(1)]]
    note: NotRequired[str]


class _PingEvent(_PingFields):
    type: Literal["ping"]


def test_shapes_read_any_declaration() -> None:
    shapes = EventShapes(_PingEvent)
    assert shapes.types == ("ping",)
    ping = {"type": "ping", "count": 1, "flag": False, "ratio": 0.25}
    assert shapes.validate(ping) == ping
    assert shapes.validate({**ping, "note": "n"}) is not None
    with pytest.raises(ValueError, match="'note'"):
        shapes.validate({**ping, "note": None})  # NotRequired, not nullable: absent, never null
    with pytest.raises(ValueError, match="'flag'"):
        shapes.validate({**ping, "flag": 1})
    assert shapes.validate({"type": "pong"}) is None
    assert shapes.rounded(ping)["ratio"] == 0.2
