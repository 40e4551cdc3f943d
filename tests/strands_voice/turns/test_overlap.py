"""The words said over an answer (:mod:`strands_voice.turns._overlap`): a listener's feedback lets the
answer go on, a word that stops a speaker (or a question) stops it, in every language with turn words."""

from __future__ import annotations

import pytest

from strands_voice.turns import TurnSettings, barges_in, interrupts, is_backchannel


@pytest.mark.parametrize(
    ("text", "backchannel"),
    [
        ("Uh-huh.", True),
        ("Mm-hmm.", True),
        ("Right.", True),
        ("Okay. Okay.", True),
        ("I see.", True),
        ("Right hand.", False),
        ("Yeah, but what about the price?", False),
        ("", False),
        ("...", False),
    ],
)
def test_backchannels_are_only_a_listeners_feedback(text: str, backchannel: bool) -> None:
    assert is_backchannel(text) is backchannel


def test_interruptions_and_questions_stop_a_speaker_however_short() -> None:
    assert (
        interrupts("Stop.") and interrupts("Wait, wait.") and interrupts("Hold on.") and interrupts("What?")
    )
    assert not interrupts("Right.") and not interrupts("Mamo.")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("はい。", "ja"),
        ("うん", "ja"),
        ("ええ", "ja"),
        ("うんうん、なるほど。", "ja"),
        ("そうですね", "ja"),
        ("そうなんですか。", "ja"),  # a question in form, an aizuchi in use
        ("はいはい", "ja"),
        ("Sí, claro.", "es"),
        ("Ajá.", "es"),
        ("Oui, d'accord.", "fr"),
        ("Mhm, je vois.", "fr"),
        ("Sì, certo.", "it"),
        ("Ahã, entendi.", "pt"),
        ("हाँ जी।", "hi"),
        ("嗯嗯，好的。", "zh"),
    ],
)
def test_backchannels_never_stop_an_answer(text: str, language: str) -> None:
    assert is_backchannel(text, language)
    assert not barges_in(text, 0.99, TurnSettings(language=language))


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("ちょっと待ってください。", "ja"),
        ("すみません、", "ja"),
        ("え、何ですか？", "ja"),
        ("Perdón, una pregunta.", "es"),
        ("Un momento.", "es"),
        ("Attendez.", "fr"),
        ("Scusi.", "it"),
        ("Desculpa.", "pt"),
        ("रुकिए।", "hi"),
        ("等一下。", "zh"),
    ],
)
def test_words_that_interrupt_stop_an_answer_however_short(text: str, language: str) -> None:
    assert interrupts(text, language) and not is_backchannel(text, language)
    assert barges_in(text, 0.1, TurnSettings(language=language))  # even said unsurely
