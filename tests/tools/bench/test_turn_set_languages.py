"""``bench --talk --lang j``'s Japanese callers: the same kinds of utterance as the English set, answered
in Japanese, their paused sentences paused where Japanese leaves a sentence open."""

from __future__ import annotations

import re

from strands_voice_tools.bench.call_script import ANSWERS
from strands_voice_tools.bench.turn_set import TURN_TEXTS, _joined

from strands_voice.listen import asks, unfinished
from strands_voice.turns import is_backchannel

_KANA = re.compile(r"[\u3040-\u30ff]")


def test_every_language_of_the_set_has_its_answers_and_its_voices() -> None:
    assert set(TURN_TEXTS) == set(ANSWERS) == {"a", "j"}
    japanese = TURN_TEXTS["j"]
    assert all(voice.startswith("j") for voice in japanese.voices)
    texts = [*japanese.questions, *japanese.paused, *japanese.backchannels, *japanese.interruptions]
    assert all(_KANA.search(text) for text in [*texts, *vars(ANSWERS["j"]).values()])


def test_japanese_utterances_are_what_their_kind_says() -> None:
    japanese = TURN_TEXTS["j"]
    assert all(asks(question, "j") for question in japanese.questions)
    assert all(is_backchannel(aizuchi, "j") for aizuchi in japanese.backchannels)
    for sentence in japanese.paused:
        first, second = sentence.split("|")
        assert unfinished(first.strip().rstrip("、"), "j") and not unfinished(second, "j"), sentence
        assert " " not in _joined(sentence)
    assert _joined("I would like to know, | what it costs.") == "I would like to know, what it costs."


def test_a_japanese_transcript_is_matched_to_what_was_said_by_its_characters() -> None:
    from strands_voice_tools.bench.call_log import Utterance, _belongs

    said = Utterance("question", "いつでも解約できますか？", "jf_alpha", 0.0, 1.0)
    assert _belongs({"type": "transcript", "final": True, "text": "いつでも解約できますか"}, said)
    assert not _belongs({"type": "transcript", "final": True, "text": "オフラインで使えますか"}, said)
