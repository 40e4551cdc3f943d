"""The spoken call's frame rules (agentcore_app.call._frames) sans-I/O: inputs in, actions out, no socket;
the time is passed in. Who speaks when is the library's turn-taking core (tests/strands_voice/turns/)."""

from __future__ import annotations

import json

from agentcore_app.call._frames import (
    AudioFrame,
    CallFrames,
    CallLimits,
    CallPhase,
    CloseCall,
    Feed,
    Listen,
    SendEvent,
    Stalled,
    TextFrame,
    ToTurns,
    Wait,
)
from strands_voice_protocol.call_events import CALL_ERROR_CODES, CallEventBuilder, ends_turn, parse_call_event

from strands_voice.turns import StopPressed, Typed

START = json.dumps({"type": "start", "voice": "jm_kumo", "format": "pcm16", "sample_rate": 16000})


def fixed() -> CallEventBuilder:
    return CallEventBuilder(clock=lambda: 0.0)


def started(limits: CallLimits | None = None) -> CallFrames:
    core = CallFrames(limits, fixed())
    actions = core.handle(TextFrame(START), 0.0)
    assert len(actions) == 1 and isinstance(actions[0], Listen)
    assert actions[0].start.options.voice == "jm_kumo" and actions[0].start.sample_rate == 16000
    return core


def errors(actions: list[object]) -> list[str]:
    return [a.event["code"] for a in actions if isinstance(a, SendEvent) and a.event["type"] == "error"]  # type: ignore[typeddict-item]


def test_frames_before_start_get_one_error_and_the_call_waits_for_start() -> None:
    core = CallFrames(builder=fixed())
    assert errors(core.handle(AudioFrame(bytes(640)), 0.0)) == ["invalid_request"]
    assert core.handle(AudioFrame(bytes(640)), 0.0) == []  # one error is enough for a microphone's frames
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "hi"}'), 0.0)) == ["invalid_request"]
    assert core.phase is CallPhase.AWAITING_START
    assert isinstance(core.handle(TextFrame(START), 0.0)[0], Listen)
    assert core.phase is CallPhase.LISTENING


def test_a_start_at_another_rate_or_with_a_bad_field_is_refused_and_a_good_one_still_accepted() -> None:
    core = CallFrames(builder=fixed())
    for bad in (
        {"type": "start", "sample_rate": 48000},
        {"type": "start", "sample_rate": True},
        {"type": "start", "speed": 9},
        {"type": "start", "colour": "blue"},
    ):
        actions = core.handle(TextFrame(json.dumps(bad)), 0.0)
        assert errors(actions) == ["invalid_request"], bad
    assert (
        "16000" in core.handle(TextFrame('{"type": "start", "sample_rate": 8000}'), 0.0)[0].event["message"]
    )  # type: ignore[union-attr]
    assert isinstance(core.handle(TextFrame('{"type": "start"}'), 0.0)[0], Listen)
    assert errors(core.handle(TextFrame(START), 0.0)) == ["invalid_request"]  # started already


def test_bad_text_frames_get_coded_errors_and_the_call_goes_on() -> None:
    core = started(CallLimits(max_text_frame_chars=100))
    assert errors(core.handle(TextFrame("{not json"), 0.0)) == ["invalid_json"]
    assert errors(core.handle(TextFrame("[1, 2]"), 0.0)) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "dance"}'), 0.0)) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "  "}'), 0.0)) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "x", "voice": "a"}'), 0.0)) == [
        "invalid_request"
    ]
    assert errors(core.handle(TextFrame(json.dumps({"type": "prompt", "prompt": "x" * 200})), 0.0)) == [
        "invalid_request"
    ]
    assert core.phase is CallPhase.LISTENING


def test_audio_goes_to_the_listener_in_whole_samples_and_an_oversized_frame_is_dropped() -> None:
    core = started(CallLimits(max_audio_frame_bytes=1000))
    assert core.handle(AudioFrame(b"\x01\x02\x03"), 0.0) == [Feed(b"\x01\x02")]
    assert core.handle(AudioFrame(b"\x04"), 0.0) == [Feed(b"\x03\x04")]
    assert core.handle(AudioFrame(b"\x05"), 0.0) == []
    assert errors(core.handle(AudioFrame(bytes(1002)), 0.0)) == ["invalid_request"]
    assert core.handle(AudioFrame(b"\x06\x07\x08"), 0.0) == [Feed(b"\x05\x06\x07\x08")]


def test_the_call_events_parse_as_a_client_reads_them() -> None:
    builder = fixed()
    for event in (
        builder.listening(sample_rate=16000, session_id="s" * 40),
        builder.speech_start(at_s=1.23456),
        builder.transcript(text="hi", final=True),
        builder.transcript(text="hi", final=True, end_of_turn={"by": "model", "p": 0.93}),
        builder.transcript(text="uh-huh", final=True, end_of_turn={"by": "model", "p": 0.9}, counts=False),
        builder.speech_paused(request_id="r1", heard_ms=1234.5),
        builder.speech_resumed(request_id="r1", heard_ms=1234.5),
        builder.error(code="idle_timeout", message="bye"),
    ):
        assert parse_call_event(json.loads(json.dumps(event))) == event
    assert builder.speech_start(at_s=1.23456)["at_s"] == 1.235
    assert "counts" not in builder.transcript(text="hi", final=True)  # a turn carries no counts
    assert ends_turn(builder.transcript(text="hi", final=True))
    assert not ends_turn(builder.transcript(text="uh-huh", final=True, counts=False))
    assert not ends_turn(builder.transcript(text="hi", final=False))
    assert parse_call_event({"type": "something_newer", "t_ms": 1}) is None


def test_typed_prompts_and_the_stop_button_go_to_the_turn_taking_core() -> None:
    core = started()
    assert core.handle(TextFrame('{"type": "interrupt"}'), 0.0) == [ToTurns(StopPressed())]
    assert core.handle(TextFrame('{"type": "prompt", "prompt": " Hello "}'), 0.0) == [ToTurns(Typed("Hello"))]


def test_silence_past_the_idle_timeout_closes_the_call_but_not_while_an_answer_plays() -> None:
    core = started(CallLimits(idle_s=1.0, max_audio_ahead_s=100.0))
    second = bytes(32000)
    assert core.handle(AudioFrame(second), 0.0) == [Feed(second)]
    core.active(answering=True)
    for _ in range(3):  # the caller listens to the answer: not idle
        assert core.handle(AudioFrame(second), 0.0) == [Feed(second)]
    core.active(answering=False)
    assert core.handle(AudioFrame(second), 0.0) == [Feed(second)]
    actions = core.handle(AudioFrame(b"\x00\x00"), 0.0)
    assert errors(actions) == ["idle_timeout"] and actions[-1] == CloseCall(1000, "idle")
    assert core.phase is CallPhase.CLOSED
    assert core.handle(AudioFrame(second), 0.0) == []


def test_no_frame_at_all_closes_the_call_with_a_code_but_not_while_an_answer_is_out() -> None:
    core = started()
    core.active(answering=True)
    assert core.handle(Stalled(), 0.0) == [] and core.phase is not CallPhase.CLOSED
    core.active(answering=False)
    actions = core.handle(Stalled(), 0.0)
    assert errors(actions) == ["idle_timeout"] and isinstance(actions[-1], CloseCall)
    assert {"idle_timeout", "turn_too_long", "recognition_failed"} == CALL_ERROR_CODES


def test_audio_faster_than_real_time_makes_the_call_wait() -> None:
    core = CallFrames(CallLimits(max_audio_ahead_s=2.0), fixed())
    core.handle(TextFrame(START), 10.0)  # the call's audio starts at 10 s on the clock
    second = bytes(32000)
    assert core.handle(AudioFrame(second), 10.0) == [Feed(second)]  # 1 s ahead: within the allowance
    assert core.handle(AudioFrame(second), 10.1) == [Feed(second)]  # 2 s of audio at 10.1 s: 1.9 s ahead
    assert core.handle(AudioFrame(second), 10.2) == [Feed(second), Wait(11.0)]  # 3 s ahead: wait to 2 s
    assert core.handle(AudioFrame(second), 20.0) == [Feed(second)]  # a real-time caller never waits


def _started_with(fields: dict[str, object]) -> list[object]:
    return CallFrames(builder=fixed()).handle(TextFrame(json.dumps({"type": "start", **fields})), 0.0)


def test_the_caller_is_heard_in_listen_lang_else_in_the_answers_language() -> None:
    cases = [
        ({"voice": "jf_alpha", "lang": "j"}, "j"),
        ({"voice": "ef_dora"}, "e"),
        ({"voice": "jm_kumo"}, "a"),  # a Japanese voice without lang reads English (as the endpoint does)
        ({"voice": "jf_alpha", "lang": "j", "listen_lang": "es-US"}, "es-US"),
        ({"listen_lang": "h"}, "h"),
        ({}, "a"),
    ]
    for fields, heard in cases:
        actions = _started_with(fields)
        assert len(actions) == 1 and isinstance(actions[0], Listen) and actions[0].hears, fields
        assert actions[0].start.listen_lang == heard, fields


def test_a_language_the_server_cannot_hear_leaves_typed_turns_only() -> None:
    actions = _started_with({"voice": "jf_alpha", "listen_lang": "de-DE"})
    assert errors(actions) == ["unsupported_language"] and "j (Japanese)" in actions[0].event["message"]  # type: ignore[attr-defined]
    assert isinstance(actions[1], Listen) and not actions[1].hears
    for bad in (5, "", "japanese!", "x-"):
        assert errors(_started_with({"listen_lang": bad})) == ["invalid_request"], bad
