"""The spoken call's rules (agentcore_app.call_core) sans-I/O: inputs in, actions out, no socket or clock."""

from __future__ import annotations

import json

from agentcore_app.call_core import (
    Answer,
    AnswerEnded,
    AudioFrame,
    CallCore,
    CallLimits,
    Close,
    Feed,
    Interrupt,
    Listen,
    Phase,
    Send,
    Stalled,
    TextFrame,
)
from strands_voice_protocol.call_events import CALL_ERROR_CODES, CallEventBuilder, parse_call_event

from strands_voice.listen._events import RecognitionFailed, SpeechStarted, Transcript, TurnTooLong

START = json.dumps({"type": "start", "voice": "jm_kumo", "format": "pcm16", "sample_rate": 16000})


def fixed() -> CallEventBuilder:
    return CallEventBuilder(clock=lambda: 0.0)


def started(limits: CallLimits | None = None) -> CallCore:
    core = CallCore(limits, fixed())
    actions = core.handle(TextFrame(START))
    assert len(actions) == 1 and isinstance(actions[0], Listen)
    assert actions[0].start.options.voice == "jm_kumo" and actions[0].start.sample_rate == 16000
    return core


def errors(actions: list[object]) -> list[str]:
    return [a.event["code"] for a in actions if isinstance(a, Send) and a.event["type"] == "error"]  # type: ignore[typeddict-item]


def test_frames_before_start_get_one_error_and_the_call_waits_for_start() -> None:
    core = CallCore(builder=fixed())
    assert errors(core.handle(AudioFrame(bytes(640)))) == ["invalid_request"]
    assert core.handle(AudioFrame(bytes(640))) == []  # one error is enough for a microphone's frames
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "hi"}'))) == ["invalid_request"]
    assert core.phase is Phase.AWAITING_START
    assert isinstance(core.handle(TextFrame(START))[0], Listen)
    assert core.phase is Phase.LISTENING


def test_a_start_at_another_rate_or_with_a_bad_field_is_refused_and_a_good_one_still_accepted() -> None:
    core = CallCore(builder=fixed())
    for bad in (
        {"type": "start", "sample_rate": 48000},
        {"type": "start", "sample_rate": True},
        {"type": "start", "speed": 9},
        {"type": "start", "colour": "blue"},
    ):
        actions = core.handle(TextFrame(json.dumps(bad)))
        assert errors(actions) == ["invalid_request"], bad
    assert "16000" in core.handle(TextFrame('{"type": "start", "sample_rate": 8000}'))[0].event["message"]  # type: ignore[union-attr]
    assert isinstance(core.handle(TextFrame('{"type": "start"}'))[0], Listen)
    assert errors(core.handle(TextFrame(START))) == ["invalid_request"]  # started already


def test_bad_text_frames_get_coded_errors_and_the_call_goes_on() -> None:
    core = started(CallLimits(max_text_frame_chars=100))
    assert errors(core.handle(TextFrame("{not json"))) == ["invalid_json"]
    assert errors(core.handle(TextFrame("[1, 2]"))) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "dance"}'))) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "  "}'))) == ["invalid_request"]
    assert errors(core.handle(TextFrame('{"type": "prompt", "prompt": "x", "voice": "a"}'))) == [
        "invalid_request"
    ]
    assert errors(core.handle(TextFrame(json.dumps({"type": "prompt", "prompt": "x" * 200})))) == [
        "invalid_request"
    ]
    assert core.phase is Phase.LISTENING


def test_audio_goes_to_the_listener_in_whole_samples_and_an_oversized_frame_is_dropped() -> None:
    core = started(CallLimits(max_audio_frame_bytes=1000))
    assert core.handle(AudioFrame(b"\x01\x02\x03")) == [Feed(b"\x01\x02")]
    assert core.handle(AudioFrame(b"\x04")) == [Feed(b"\x03\x04")]
    assert core.handle(AudioFrame(b"\x05")) == []
    assert errors(core.handle(AudioFrame(bytes(1002)))) == ["invalid_request"]
    assert core.handle(AudioFrame(b"\x06\x07\x08")) == [Feed(b"\x05\x06\x07\x08")]


def test_a_final_transcript_answers_and_speech_during_the_answer_barges_in() -> None:
    core = started()
    sent = core.handle(SpeechStarted(1.25))
    assert [a.event for a in sent if isinstance(a, Send)] == [
        {"type": "speech_start", "t_ms": 0.0, "at_s": 1.25}
    ]
    assert not any(isinstance(a, Interrupt) for a in sent)  # nothing to interrupt yet
    assert [type(a) for a in core.handle(Transcript("what is", final=False))] == [Send]
    actions = core.handle(Transcript(" What is the plan? ", final=True))
    assert actions[0] == Send(
        {"type": "transcript", "t_ms": 0.0, "role": "user", "text": " What is the plan? ", "final": True}
    )
    assert actions[1] == Answer("What is the plan?", spoken=True)
    assert core.answering
    barge = core.handle(SpeechStarted(5.0))
    assert isinstance(barge[0], Send) and barge[1] == Interrupt()
    # A new turn while the old answer is still ending: interrupt it (again), then answer.
    assert core.handle(Transcript("stop", final=True))[1:] == [Interrupt(), Answer("stop", spoken=True)]
    core.handle(AnswerEnded())
    core.handle(AnswerEnded())
    assert not core.answering
    assert core.handle(Transcript("", final=True))[1:] == []  # a noise with no words: nothing to answer


def test_typed_prompt_and_interrupt() -> None:
    core = started()
    assert core.handle(TextFrame('{"type": "interrupt"}')) == []  # nothing speaking
    assert core.handle(TextFrame('{"type": "prompt", "prompt": " Hello "}')) == [
        Answer("Hello", spoken=False)
    ]
    assert core.handle(TextFrame('{"type": "interrupt"}')) == [Interrupt()]


def test_silence_past_the_idle_timeout_closes_the_call_but_not_while_an_answer_plays() -> None:
    core = started(CallLimits(idle_s=1.0))
    second = bytes(32000)
    assert core.handle(AudioFrame(second)) == [Feed(second)]
    core.handle(TextFrame('{"type": "prompt", "prompt": "hi"}'))
    for _ in range(3):  # the caller listens to the answer: not idle
        assert core.handle(AudioFrame(second)) == [Feed(second)]
    core.handle(AnswerEnded())
    assert core.handle(AudioFrame(second)) == [Feed(second)]
    actions = core.handle(AudioFrame(b"\x00\x00"))
    assert errors(actions) == ["idle_timeout"] and actions[-1] == Close(1000, "idle")
    assert core.phase is Phase.CLOSED
    assert core.handle(AudioFrame(second)) == []


def test_no_frame_at_all_and_a_turn_past_the_longest_are_coded() -> None:
    core = started()
    assert errors(core.handle(TurnTooLong(at_s=30.0))) == ["turn_too_long"]
    assert core.phase is Phase.LISTENING
    actions = core.handle(Stalled())
    assert errors(actions) == ["idle_timeout"] and isinstance(actions[-1], Close)
    assert {"idle_timeout", "turn_too_long", "recognition_failed"} == CALL_ERROR_CODES


def test_a_turn_the_recognizer_failed_on_is_coded_unanswered_and_the_call_goes_on() -> None:
    core = started()
    core.handle(SpeechStarted(at_s=1.0))
    actions = core.handle(RecognitionFailed("connection_failed", "No AWS credentials", retryable=False))
    assert errors(actions) == ["recognition_failed"] and not core.answering
    sent = actions[0]
    assert isinstance(sent, Send) and "connection_failed: No AWS credentials" in sent.event["message"]  # type: ignore[typeddict-item]
    assert core.phase is Phase.LISTENING
    assert core.handle(Transcript("hello", final=True))[-1] == Answer("hello", True)


def test_the_call_events_parse_as_a_client_reads_them() -> None:
    builder = fixed()
    for event in (
        builder.listening(sample_rate=16000, session_id="s" * 40),
        builder.speech_start(at_s=1.23456),
        builder.transcript(text="hi", final=True),
        builder.error(code="idle_timeout", message="bye"),
    ):
        assert parse_call_event(json.loads(json.dumps(event))) == event
    assert builder.speech_start(at_s=1.23456)["at_s"] == 1.235
    assert parse_call_event({"type": "something_newer", "t_ms": 1}) is None
