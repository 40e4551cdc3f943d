"""The turn words of every language Kokoro speaks: how people of each language talk on the phone."""

from __future__ import annotations

import logging

import pytest

from strands_voice.listen import asks, judge_turn, turn_words, unfinished, words_of
from strands_voice.turns import is_backchannel


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        # Japanese: a clause ending in て/けど/ので/が/し, a particle, or the recognizer's 、 keeps the turn.
        ("プレミアムプランについて、", "j", True),
        ("予約を変更したいんですけど", "ja", True),
        ("昨日注文したので", "ja-JP", True),
        ("解約したいんですが", "ja", True),
        ("安いし", "ja", True),
        ("料金は", "ja", True),
        ("プランについて教えて", "ja", False),  # a request in the て form ends the turn
        ("ちょっと待って", "ja", False),
        ("料金はいくらですか？", "ja", False),
        ("わかりました。", "ja", False),
        ("もしもし", "ja", False),
        # Spanish, French, Italian, Portuguese, Hindi, Mandarin.
        ("Quería saber", "e", True),
        ("El precio del plan es", "es", True),
        ("¿Qué es?", "es", False),
        ("Je voudrais savoir", "f", True),
        ("C'est parfait.", "fr", False),
        ("Vorrei sapere se", "i", True),
        # A verb after its pronoun ends a reply; the same verb after a noun leaves it open.
        ("Sí, lo es.", "es", False),
        ("No, no lo está.", "es", False),
        ("Ya lo está", "es", True),  # a progressive may follow ("... revisando")
        ("Sì, lo è.", "it", False),
        ("No, non lo sono.", "it", False),
        ("Il prezzo è", "it", True),
        ("Oui, ils le sont.", "fr", False),
        ("Les frais sont", "fr", True),
        ("O preço é", "p", True),
        ("Entendi.", "pt", False),
        ("मैं जानना चाहता हूँ", "h", True),
        ("मुझे प्रीमियम प्लान के बारे में", "hi", True),
        ("我想问一下关于", "z", True),
        ("这个计划多少钱", "zh", False),
    ],
)
def test_words_that_leave_a_sentence_open(text: str, language: str, expected: bool) -> None:
    assert unfinished(text, language) is expected


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("料金はいくらですか", "ja", True),
        ("それは無料なの", "ja", True),
        ("解約できますよね", "ja", True),
        ("わかりました", "ja", False),
        ("क्या आप मेरी मदद कर सकते हैं", "hi", True),
        ("这个多少钱吗", "zh", True),
        ("¿Cuánto cuesta?", "es", True),
        ("Muy bien.", "es", False),
    ],
)
def test_questions(text: str, language: str, expected: bool) -> None:
    assert asks(text, language) is expected


def test_japanese_words_are_matched_on_characters() -> None:
    assert words_of("はい、料金は", "ja") == ["はい", "料金", "は"]
    assert not is_backchannel("はい、料金はいくらですか", "ja")  # a backchannel opening a question
    assert judge_turn(0.9, "予約を変更したいんですけど、", "ja").complete is False
    assert judge_turn(0.35, "料金はいくらですか", "ja").complete is True  # a question's audio may be low


def test_every_kokoro_language_has_its_lists() -> None:
    for language in "abjzefhip":
        lists = turn_words(language)
        assert lists is not None and lists.backchannels and lists.interruptions and lists.open_endings


def test_a_language_without_lists_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="strands_voice.listen._words"):
        for _ in range(3):
            assert not unfinished("Ich möchte wissen, ob", "sv-SE")
    assert [record.getMessage() for record in caplog.records].count(
        "language=<sv-SE> | no turn words for this language: its turns are judged by the sound alone"
    ) == 1
