"""Speculative answers on ``/ws`` with a real model's client: the app's own ``OpenAIModel`` (its client kept
open between requests) against the local OpenAI-compatible stand-in server (which logs the history it is
sent), the real TTS endpoint, and a caller who says a script (a tone per sentence, :mod:`support.said`) in
one breath, with pauses.

The held-out call: "Please tell me the long version." [pause] "What does the Premium plan include?" in
one breath, the long answer heard for a while, then "Stop, please." [pause] "What does it cost?". The
answer at each pause is asked for early and held; the caller going on drops it in silence (no event on the
wire, no trace in the agent's history); the turn's end releases the one that matches.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from support.call import Caller, silence, tone
from support.openai_model import served_openai_spec
from support.said import said_listeners

pytestmark = pytest.mark.timeout(240)

ONE = "Please tell me the long version."
TWO = "What does the Premium plan include?"
STOP = "Stop, please."
COST = "What does it cost?"
PCM_BYTES_PER_S = 48000  # the answer's pcm16 at 24 kHz
ANSWER = (
    "The premium plan includes unlimited storage for your photos and videos, support day and night, "
    "and offline use on up to five devices. It costs twenty five dollars a month."
)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


@pytest.fixture
def speculating_app(endpoint_server: Any) -> Iterator[tuple[str, Any]]:
    """``(ws_url, stand-in log)``: the app on ``OpenAIModel`` (0.5 s to its first sentence)."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    model = ScriptedModel(text=ANSWER, first_sentence_s=0.5, total_s=1.5)
    with served_openai_spec(model) as (spec, log):
        app = create_app(
            tts_url=endpoint_server.ws_url,
            model=spec,
            conversation_store=ConversationStore(kind="none"),
            silence_timeout=120.0,
            listener_factory=said_listeners([ONE, TWO, STOP, COST]),
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        with running_server(app) as server:
            yield server.base_url.replace("http://", "ws://") + "/ws", log


async def asked(log: Any, count: int, within_s: float = 60.0) -> None:
    """Wait (sending nothing: the caller's pause does not grow) until the model was asked ``count`` times."""
    deadline = time.monotonic() + within_s
    while len(log.requests) < count:
        assert time.monotonic() < deadline, f"the model was asked {len(log.requests)} times"
        await asyncio.sleep(0.02)


def test_the_held_out_call_answers_once_per_question_and_remembers_what_was_heard(
    speculating_app: Any,
) -> None:
    url, log = speculating_app

    async def call() -> Caller:
        caller = await Caller.open(f"{url}?session_id=speculating-call-0123456789abcdef")
        await caller.send({"type": "start", "voice": "jm_kumo", "format": "pcm16"})
        await caller.wait_for("listening", within_s=30)
        await caller.speak(tone(1.0) + silence(0.2))  # ONE, and a pause: its answer is asked for, held
        await asked(log, 1)
        await caller.speak(tone(1.2) + silence(0.8))  # TWO in the same breath: the turn ends
        await caller.wait_for("agent_start", within_s=60)
        while sum(len(pcm) for _, pcm in caller.audio) < 3.0 * PCM_BYTES_PER_S:
            await caller.speak(silence(0.1))  # 3 s of the long answer sent: 2.5 s of it heard at least
        await caller.speak(tone(0.8) + silence(0.2))  # STOP over it, and a pause
        await asked(log, 3)
        await caller.speak(tone(1.0) + silence(0.8))  # COST: the turn ends
        await caller.wait_for("agent_end", count=2, within_s=90)
        await caller.close()
        return caller

    caller = asyncio.run(asyncio.wait_for(call(), 200))
    # Four model calls: two speculations dropped when the caller went on, two released.
    assert [words(q) for q in log.questions] == [
        words(ONE),
        words(f"{ONE} {TWO}"),
        words(STOP),
        words(f"{STOP} {COST}"),
    ]
    from strands_voice_tools.openai_stand_in import strands_messages

    history = strands_messages(log.requests[-1].body["messages"])
    texts = [(m["role"], str(m["content"][0]["text"])) for m in history]
    assert [role for role, _ in texts] == ["user", "assistant", "user"]
    assert words(texts[0][1]) == words(f"{ONE} {TWO}")  # each thing said once, no "…" turn
    heard = words(texts[1][1])
    assert 4 <= len(heard) < len(words(ANSWER)) and heard == words(ANSWER)[: len(heard)]
    assert words(texts[2][1]) == words(f"{STOP} {COST}")
    # On the wire: one answer per question, each after its turn's final transcript; nothing of a dropped one.
    assert len(caller.of("agent_start")) == 2 and len(caller.of("interrupted")) == 1
    order = [kind for kind in caller.order if kind in ("agent_start", "audio") or kind == "transcript"]
    finals = [i for i, e in enumerate(caller.events) if e["type"] == "transcript" and e["final"]]
    starts = [i for i, e in enumerate(caller.events) if e["type"] == "agent_start"]
    assert len(finals) == 2 and finals[0] < starts[0] < finals[1] < starts[1]
    assert order.index("audio") > order.index("agent_start")  # no agent audio before the caller's end
    assert "words" not in caller.order  # word timings were asked for the memory, not sent unasked


async def two_parts_then_thanks(url: str, log: Any, *, pause_s: float, wait: bool, answers: int) -> Caller:
    """ONE [pause] TWO, answered; then "Thanks." (its request shows the history); ``answers`` in all.
    ``wait``: the caller goes on only once the model was asked about ONE."""
    caller = await Caller.listening(url)
    await caller.speak(tone(1.0) + silence(pause_s))
    if wait:
        await asked(log, 1)  # an answer to ONE alone is being written when the caller goes on
    await caller.speak(tone(1.0) + silence(0.8))
    await caller.wait_for("agent_end", count=answers - 1, within_s=90)
    await caller.speak(tone(0.6) + silence(0.8))
    await caller.wait_for("agent_end", count=answers, within_s=90)
    await caller.close()
    return caller


@pytest.mark.parametrize(
    ("speculate", "pause_s", "requests", "starts"),
    [
        (True, 0.2, 3, 2),  # the pause's held answer dropped in silence: one more model call, no event
        (False, 0.2, 2, 2),  # off: one call per question
        (False, 0.6, 3, 3),  # off, the turn ended at the pause: its answer, not yet heard, is dropped
    ],
)
def test_a_dropped_answer_leaves_no_trace_in_the_history(
    endpoint_server: Any, speculate: bool, pause_s: float, requests: int, starts: int
) -> None:
    """Whether dropped held (speculation on) or dropped pending (the turn had ended), the answer to the
    first part leaves nothing in the agent's history: the question once, no "…" turn."""
    from agentcore_app.app import create_app
    from agentcore_app.call import CallLimits
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server
    from strands_voice_tools.openai_stand_in import strands_messages

    # Slow to its first sentence: an answer asked for at the pause is not heard before the caller goes on.
    model = ScriptedModel(text="Okay.", first_sentence_s=2.0, total_s=2.1)
    with served_openai_spec(model) as (spec, log):
        app = create_app(
            tts_url=endpoint_server.ws_url,
            model=spec,
            conversation_store=ConversationStore(kind="none"),
            listener_factory=said_listeners([ONE, TWO, "Thanks."]),
            call_limits=CallLimits(speculate=speculate),
        )
        with running_server(app) as server:
            url = server.base_url.replace("http://", "ws://") + "/ws"
            call = two_parts_then_thanks(url, log, pause_s=pause_s, wait=requests == 3, answers=starts)
            caller = asyncio.run(asyncio.wait_for(call, 150))
    last = strands_messages(log.requests[-1].body["messages"])
    history = [(m["role"], words(str(m["content"][0]["text"]))) for m in last]
    assert history == [("user", words(f"{ONE} {TWO}")), ("assistant", ["okay"]), ("user", ["thanks"])]
    assert len(log.requests) == requests and len(caller.of("agent_start")) == starts
