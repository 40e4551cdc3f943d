"""The phone line over a real socket: a fake phone (Twilio's side, tests/support/phone.py) against the app
on 127.0.0.1:0, with the library's Listener on plain engines (a loudness VAD, scripted texts; a tone is the
caller's voice) and the in-memory TTS endpoint.

The same call as ``/ws``: a spoken turn is answered as μ-law media with a mark after each sentence, the
phone's marks come back; ``/ws`` takes the same stream told by its first frame; the TwiML ``session_id``
names the conversation; keys make a typed turn at ``#``; ``stop`` and every bad frame end the call with the
heard part remembered, the bad frames with a close code and reason.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from support.call import silence, tone
from support.conversation_model import HoldingEcho
from support.instant_tts import InstantTTS
from support.openai_model import served_openai_model
from support.phone import FakePhone

pytestmark = pytest.mark.timeout(120)

SESSION = "phone-session-0123456789abcdef0123456789"
#: Six sentences of over 40 characters: six chunks, each 0.5 s of the in-memory endpoint's audio.
SENTENCES = [
    "The premium plan costs twenty five dollars every single month.",
    "You can cancel the plan at any time and pay no fee for it.",
    "It includes unlimited storage for all your photos and videos.",
    "Our support team is there for you by day and also by night.",
    "You can use the app offline on up to five different devices.",
    "Most of our customers upgrade to it within their first week.",
]
ANSWER = " ".join(SENTENCES)


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[str, Any]]]:
    """``serve(model, texts) -> (base ws url, app)``: the app with scripted listening, on a free port."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from kokoro_endpoint.serving.runner import running_server
    from support.call import scripted_listeners

    stack: list[Any] = []
    stack_logs: list[Any] = []

    def start(model: Any, texts: list[str]) -> tuple[str, Any]:
        if isinstance(model, ScriptedModel):  # a real model's client: OpenAIModel against the stand-in
            served = served_openai_model(model)
            stack.append(served)
            model, log = served.__enter__()
            stack_logs.append(log)
        app = create_app(
            tts_url="ws://127.0.0.1:9",
            model=model,
            conversation_store=ConversationStore(kind="none"),
            transport_factory=InstantTTS,
            listener_factory=scripted_listeners(texts),
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        app.state.model_log = stack_logs[-1] if stack_logs else None
        server = running_server(app)
        stack.append(server)
        return str(server.__enter__().base_url).replace("http://", "ws://"), app

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


async def spoken_turn(phone: FakePhone) -> None:
    """Speak (a tone), then keep the line open until the answer has been played and its marks returned."""
    await phone.speak(silence(0.3) + tone(0.6) + silence(0.1))
    for _ in range(400):
        await phone.speak(silence(0.02))
        if phone.of("mark") and len(phone.marks_returned) == len(phone.of("mark")) and not phone.playing():
            return
    raise AssertionError(f"no answer played: {[m['event'] for m in phone.received]}")


@pytest.mark.parametrize("path", ["/twilio", "/ws"])
def test_a_spoken_turn_is_answered_as_mulaw_media_with_a_mark_after_each_sentence(
    serve: Any, path: str
) -> None:
    url, app = serve(HoldingEcho(), ["What does it cost?"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + path, {"session_id": SESSION})
        await spoken_turn(phone)
        await phone.hang_up()
        return phone

    phone = asyncio.run(call())
    media = phone.of("media")
    assert media and all(m["streamSid"] == phone.stream_sid for m in phone.received)
    sizes = [len(base64.b64decode(m["media"]["payload"])) for m in media]
    assert max(sizes) == 160 and sum(sizes) % 4000 == 0  # 20 ms frames; InstantTTS: 0.5 s a request
    marks = [m["mark"]["name"] for m in phone.of("mark")]
    assert len(marks) == 1 and phone.marks_returned == marks  # one sentence ("Heard: ..."), played
    assert not phone.of("clear")
    agent = app.state.conversations._live[SESSION].agent
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert "What does it cost?" in str(agent.messages[0]["content"])


def stand_in() -> ScriptedModel:
    return ScriptedModel(text=ANSWER, first_sentence_s=0.2, total_s=0.6)


async def listen_until(phone: FakePhone, done: Any, within_s: float = 30.0) -> None:
    """Keep the line open (silence at real time) until ``done()``."""
    for _ in range(round(within_s / 0.02)):
        if done():
            return
        await phone.speak(silence(0.02))
    raise AssertionError(f"not done: {[m['event'] for m in phone.received if m['event'] != 'media']}")


def remembered(app: Any, turn: int) -> str:
    """What the agent remembered of its answer, as the model was sent it with question ``turn``."""
    body = app.state.model_log.requests[turn].body
    parts = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
    return " ".join(p if isinstance(p, str) else " ".join(str(x.get("text", "")) for x in p) for p in parts)


def sentences_played(phone: FakePhone, before: float) -> list[int]:
    """The sentences whose marks the phone returned, having played them, before ``before``."""
    played = [m for m in phone.played_marks if m[0] < before]
    return sorted({int(name.split(".")[1]) for _, name in played})


def test_stop_please_over_the_answer_clears_the_phone_and_the_question_is_answered(serve: Any) -> None:
    url, app = serve(stand_in(), ["Tell me about the premium plan.", "Stop please. What does it cost?"])

    async def call() -> tuple[FakePhone, float]:
        phone = await FakePhone.dial(url + "/twilio", {"session_id": SESSION})
        await phone.speak(silence(0.3) + tone(0.6))
        await listen_until(phone, lambda: len(phone.played) >= 60)  # 1.2 s of the answer played
        barge = time.monotonic()
        await phone.speak(tone(1.2))
        await listen_until(phone, lambda: len(app.state.model_log.requests) == 2)
        answers = lambda: {name.split(".")[0] for _, name in phone.played_marks}  # noqa: E731
        await listen_until(phone, lambda: len(answers()) == 2)  # the second answer is being played
        await phone.hang_up()
        return phone, barge

    phone, barge = asyncio.run(call())
    assert len(phone.clears) == 2  # at the pause (the caller's first sound), and at the barge-in
    clear = phone.clears[0]
    assert clear > barge  # cleared once the caller spoke, not before
    assert app.state.model_log.questions == [
        "Tell me about the premium plan.",
        "Stop please. What does it cost?",
    ]
    # What the agent remembers is what the phone confirmed it played (its marks), not what was sent.
    heard = " ".join(SENTENCES[i] for i in sentences_played(phone, clear))
    assert remembered(app, 1) == (heard or "…") and heard != ANSWER
    # The second answer was played after the clear.
    assert any(at > clear for at, _ in phone.played)


def test_a_backchannel_over_the_answer_lets_the_phone_play_all_of_it(serve: Any) -> None:
    url, app = serve(stand_in(), ["Tell me about the premium plan.", "Uh-huh."])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio", {"session_id": SESSION})
        await phone.speak(silence(0.3) + tone(0.6))
        await listen_until(phone, lambda: len(phone.played) >= 40)
        await phone.speak(tone(0.25))  # "uh-huh"
        await listen_until(phone, lambda: sentences_played(phone, time.monotonic()) == list(range(6)))
        await listen_until(phone, lambda: not phone.playing())
        await phone.hang_up()
        return phone

    phone = asyncio.run(call())
    # Every sentence was played to its end (its mark came back played), the answer was not cut: the agent
    # remembers all of it when asked again.
    assert sentences_played(phone, time.monotonic()) == [0, 1, 2, 3, 4, 5]
    assert len(app.state.model_log.requests) == 1
    conversation = app.state.conversations._live[SESSION].agent.messages
    assert [m["role"] for m in conversation] == ["user", "assistant"] and ANSWER in str(conversation[1])
    # Nothing repeated beyond what the phone dropped at the pause: at most the answer and the lead again.
    assert len(phone.played) <= 6 * 25 + 25 + 5


def test_keys_make_a_typed_turn_at_the_hash(serve: Any) -> None:
    url, app = serve(HoldingEcho(), ["unused"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio", {"session_id": SESSION})
        for digit in "9*42#":  # '*' drops what came before it
            dtmf = {
                "event": "dtmf",
                "streamSid": phone.stream_sid,
                "dtmf": {"track": "inbound_track", "digit": digit},
            }
            await phone.send(dtmf)
        await phone.send({"event": "dtmf", "streamSid": phone.stream_sid, "dtmf": {"digit": "#"}})  # nothing
        await listen_until(phone, lambda: bool(phone.played_marks) and not phone.playing())
        await phone.hang_up()
        return phone

    asyncio.run(call())
    messages = app.state.conversations._live[SESSION].agent.messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"][0]["text"] == "keypad: 42"


def test_a_hang_up_mid_answer_keeps_what_the_phone_played(serve: Any) -> None:
    url, app = serve(stand_in(), ["Tell me about the premium plan.", "And then?"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio", {"session_id": SESSION})
        await phone.speak(silence(0.3) + tone(0.6))
        await listen_until(phone, lambda: len(phone.played_marks) == 2)
        await phone.hang_up()  # "stop", then the socket closes
        return phone

    phone = asyncio.run(call())
    heard = " ".join(SENTENCES[i] for i in sentences_played(phone, time.monotonic()))
    messages = app.state.conversations._live[SESSION].agent.messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"][0]["text"] == heard and heard.startswith(SENTENCES[0] + " " + SENTENCES[1])


BAD_BEFORE_START = [
    ("not json", 1003, "JSON"),
    ('{"event": "dance"}', 1008, "unknown event"),
    ('{"event": "media", "media": {"payload": "/w=="}}', 1008, "'media' before 'start'"),
]


@pytest.mark.parametrize(("frame", "code", "reason"), BAD_BEFORE_START)
@pytest.mark.parametrize("path", ["/twilio", "/ws"])
def test_a_bad_first_frame_closes_the_stream_with_a_reason(
    serve: Any, path: str, frame: str, code: int, reason: str
) -> None:
    url, _app = serve(HoldingEcho(), ["unused"])
    if path == "/ws" and frame != BAD_BEFORE_START[2][0]:
        return  # on /ws only a Twilio first frame makes a phone call: the rest are a Leg 3 caller's errors

    async def call() -> FakePhone:
        from websockets.asyncio.client import connect

        phone = FakePhone(await connect(url + path))
        phone._tasks = [asyncio.create_task(phone._read())]
        await phone.socket.send('{"event": "connected", "protocol": "Call", "version": "1.0.0"}')
        await phone.socket.send(frame)
        await phone.finish()
        return phone

    phone = asyncio.run(call())
    assert phone.close_code == code and reason in phone.close_reason


def test_a_start_in_another_encoding_is_refused(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["unused"])

    async def call() -> FakePhone:
        from websockets.asyncio.client import connect

        phone = FakePhone(await connect(url + "/twilio"))
        phone._tasks = [asyncio.create_task(phone._read())]
        await phone.send({**phone.start_message({}, encoding="audio/l16")})
        await phone.finish()
        return phone

    phone = asyncio.run(call())
    assert phone.close_code == 1003 and "audio/x-mulaw" in phone.close_reason


@pytest.mark.parametrize(
    ("parameters", "reason"),
    [({"session_id": "+15551234567"}, "session id"), ({"voice": "no voice!"}, "'voice'")],
)
def test_a_start_whose_parameters_the_call_refuses_closes_with_the_reason(
    serve: Any, parameters: dict[str, str], reason: str
) -> None:
    url, _app = serve(HoldingEcho(), ["unused"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio", parameters)
        await phone.finish()
        return phone

    phone = asyncio.run(call())
    assert phone.close_code == 1008 and reason in phone.close_reason


BAD_MID_ANSWER = [
    ("text", "not json", 1003, "JSON"),
    ("text", '{"event": "dance"}', 1008, "unknown event 'dance'"),
    ("media", bytes(8001), 1008, "one second"),
    ("binary", b"\x00\x01", 1003, "text frames only"),
]


@pytest.mark.parametrize(("kind", "frame", "code", "reason"), BAD_MID_ANSWER)
def test_a_bad_frame_mid_answer_closes_with_a_reason_and_the_agent_keeps_what_was_played(
    serve: Any, kind: str, frame: Any, code: int, reason: str
) -> None:
    url, app = serve(stand_in(), ["Tell me about the premium plan."])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio", {"session_id": SESSION})
        await phone.speak(silence(0.3) + tone(0.6))
        await listen_until(phone, lambda: len(phone.played_marks) == 1)
        if kind == "media":
            await phone.send(phone.media_message(frame))
        else:
            await phone.socket.send(frame)
        await phone.finish()
        return phone

    phone = asyncio.run(call())
    assert phone.close_code == code and reason in phone.close_reason
    heard = " ".join(SENTENCES[i] for i in sentences_played(phone, time.monotonic()))
    messages = app.state.conversations._live[SESSION].agent.messages
    assert messages[1]["content"][0]["text"] == heard and heard.startswith(SENTENCES[0])


def test_ws_takes_a_stream_whose_first_frame_is_start_and_keeps_its_own_session(serve: Any) -> None:
    """Through a relay the connection names a session (AgentCore's header); without a ``session_id``
    parameter the call continues that one."""
    url, app = serve(HoldingEcho(), ["What does it cost?"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(f"{url}/ws?session_id={SESSION}", connected=False)
        await spoken_turn(phone)
        await phone.hang_up()
        return phone

    phone = asyncio.run(call())
    assert phone.played_marks and phone.close_code is not None
    messages = app.state.conversations._live[SESSION].agent.messages
    assert "What does it cost?" in str(messages[0]["content"])
