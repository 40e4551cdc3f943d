"""Pausing an answer (the caller may be barging in) and resuming it: against the real endpoint, whose int8
graph gives the same samples for the same text, so the answer's PCM is compared with an undisturbed one."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from agentcore_app.scripted import ScriptedModel
from strands import Agent

from strands_voice import VoiceCallbackHandler, VoiceOptions

ANSWER = "The premium plan costs twenty five dollars a month. You can cancel it at any time without a fee."
OPTIONS = VoiceOptions(voice="jm_kumo")


async def spoken(url: str, script: Any = None) -> tuple[bytes, list[dict[str, Any]], VoiceCallbackHandler]:
    """The answer's audio and events; ``script(voice, chunks)`` acts after each audio chunk."""
    voice = VoiceCallbackHandler(url)
    agent = Agent(model=ScriptedModel(text=ANSWER, first_sentence_s=0.2, total_s=0.6), callback_handler=None)
    audio, events = bytearray(), []
    async for event in voice.stream(agent, "How much is it?", options=OPTIONS):
        events.append(event)
        if event["type"] == "audio_chunk":
            audio += base64.b64decode(event["data"])
            if script is not None:
                await script(voice, len([e for e in events if e["type"] == "audio_chunk"]))
    voice.close()
    return bytes(audio), events, voice


def test_a_paused_and_resumed_answer_loses_no_sample_and_repeats_none(endpoint_server: Any) -> None:
    undisturbed, _, _ = asyncio.run(spoken(endpoint_server.ws_url))

    async def hold_twice(voice: VoiceCallbackHandler, chunks: int) -> None:
        if chunks in (1, 3):
            assert voice.pause()
            heard = voice.heard_ms
            await asyncio.sleep(0.6)
            assert voice.heard_ms == heard  # the paused time is not heard
            assert voice.resume()

    disturbed, events, _ = asyncio.run(spoken(endpoint_server.ws_url, hold_twice))
    assert len(undisturbed) > 48_000 and disturbed == undisturbed
    assert events[-1]["type"] == "agent_end" and not any(e["type"] == "interrupted" for e in events)


def test_a_barge_in_during_a_pause_keeps_what_was_heard_before_it(
    endpoint_server: Any,
) -> None:
    async def hold_then_stop(voice: VoiceCallbackHandler, chunks: int) -> None:
        if chunks == 1:
            await asyncio.sleep(1.2)  # the caller hears a second and more of the answer
            voice.pause()
            await asyncio.sleep(1.5)  # not counted
            voice.interrupt()

    async def run() -> list[dict[str, Any]]:
        _, events, _ = await asyncio.wait_for(spoken(endpoint_server.ws_url, hold_then_stop), 60)
        return events

    events = asyncio.run(run())
    (interrupted,) = [e for e in events if e["type"] == "interrupted"]
    assert events[-1]["type"] == "agent_end"
    assert interrupted["sentence_cut"] == 0 and interrupted["sentences_done"] == []  # 1.2 s of the first


def test_an_answer_that_ends_while_paused_is_still_cut_by_a_barge_in() -> None:
    """Paused, its last audio arrives (the endpoint finished), then the caller barges in: the held audio
    and its end are dropped, ``interrupted`` says what was heard before the pause, and the stream ends."""
    import threading

    from support.instant_tts import InstantTTS

    release = threading.Event()

    async def run() -> list[str]:
        voice = VoiceCallbackHandler(transport_factory=lambda: InstantTTS(answer_first=1, release=release))
        agent = Agent(
            model=ScriptedModel(text=ANSWER, first_sentence_s=0.1, total_s=0.2), callback_handler=None
        )
        kinds: list[str] = []
        async for event in voice.stream(agent, "How much is it?", options=OPTIONS):
            kinds.append(event["type"])
            if event["type"] == "audio_chunk" and kinds.count("audio_chunk") == 1:
                voice.pause()
                release.set()  # the rest of the answer arrives while paused
                await asyncio.sleep(0.5)
                voice.interrupt()
        voice.close()
        return kinds

    kinds = asyncio.run(asyncio.wait_for(run(), 30))
    assert kinds.count("interrupted") == 1 and kinds.count("audio_end") == 1
    assert kinds.index("interrupted") < kinds.index("audio_end") < kinds.index("agent_end")
    assert kinds.count("audio_chunk") == 1  # the held audio was never delivered


def test_an_answer_already_made_in_full_is_still_held_by_a_pause() -> None:
    """The endpoint made the whole answer (its end is queued) before the caller heard much of it: a pause
    still holds what is queued, and the resume delivers the rest."""
    import threading

    from support.instant_tts import InstantTTS

    release = threading.Event()

    async def run() -> tuple[list[str], list[bool]]:
        voice = VoiceCallbackHandler(transport_factory=lambda: InstantTTS(answer_first=1, release=release))
        agent = Agent(
            model=ScriptedModel(text=ANSWER, first_sentence_s=0.1, total_s=0.2), callback_handler=None
        )
        kinds: list[str] = []
        resumed = threading.Event()
        after_pause: list[bool] = []  # for each event after the pause: was the answer resumed by then
        paused = False
        async for event in voice.stream(agent, "How much is it?", options=OPTIONS):
            kinds.append(event["type"])
            if paused:
                after_pause.append(resumed.is_set())
            if event["type"] == "audio_chunk" and not paused:
                release.set()
                while not all(r.ended for r in voice._responses.active()):  # noqa: ASYNC110 (no event says it)
                    await asyncio.sleep(0.01)  # the whole answer made, its end queued
                assert voice.pause()
                paused = True
                asyncio.get_running_loop().call_later(0.3, lambda: (resumed.set(), voice.resume()))
        voice.close()
        return kinds, after_pause

    kinds, after_pause = asyncio.run(asyncio.wait_for(run(), 30))
    assert after_pause and all(after_pause)  # nothing came while the answer was held
    assert kinds.count("audio_chunk") > 1 and kinds.count("audio_end") == 1 and "interrupted" not in kinds
