"""The chunker's sentence rule for whole texts (``sentence_ends``/``split_at_sentence_ends``): the same ends
the streaming chunker finds, used by batch mode, the TTS endpoint and the scripted stand-in model."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.sentences import sentence_ends, split_at_sentence_ends
from strands_voice_protocol.speech_text import clean_for_speech


def test_split_at_sentence_ends_follows_the_chunker_rule() -> None:
    assert split_at_sentence_ends("Hello there. How are you?  Fine!") == [
        "Hello there.",
        "How are you?",
        "Fine!",
    ]
    assert split_at_sentence_ends('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    # Abbreviations, initials, decimals and a lowercase word after the dot end no sentence.
    assert split_at_sentence_ends("Dr. Lee met J. R. Smith at 3.5 p.m. today. Done.") == [
        "Dr. Lee met J. R. Smith at 3.5 p.m. today.",
        "Done.",
    ]
    assert split_at_sentence_ends("Wait... what? Yes.") == ["Wait... what?", "Yes."]
    assert split_at_sentence_ends("See No. 5 today. The answer is no. Then stop.") == [
        "See No. 5 today.",
        "The answer is no.",
        "Then stop.",
    ]
    # CJK terminators end a sentence with no space after them.
    assert split_at_sentence_ends("你好。再见！") == ["你好。", "再见！"]
    # A run of terminators with no word before it stays with what follows.
    assert split_at_sentence_ends("... Well. Fine.") == ["... Well.", "Fine."]
    assert split_at_sentence_ends("你好。A. ?") == ["你好。", "A. ?"]  # "A." is an initial
    assert split_at_sentence_ends("   ") == []
    assert split_at_sentence_ends("No end mark") == ["No end mark"]


def test_sentence_ends_are_just_past_the_closing_marks() -> None:
    text = 'One. "Two!" Three'
    assert sentence_ends(text) == [4, 11]
    assert sentence_ends("Only one.") == []  # the end of the text is not listed


@given(st.text(alphabet="aAbBzé .!?\"'…。)", max_size=300))
@example("A. B")
@example("a. B. c! D")
@example('x." Y')
@example("A\u3002A. ?")  # the chunker looks for an abbreviation from the sentence start only
def test_whole_text_sentences_are_the_streaming_chunks(text: str) -> None:
    """On plain text (no Markdown, no line breaks, no length cut) both find the same sentences."""
    chunker = IncrementalSentenceChunker(first_chunk_min_chars=None, max_chunk_chars=10_000)
    streamed = chunker.feed(text) + chunker.finish()
    whole = [clean_for_speech(sentence) for sentence in split_at_sentence_ends(text)]
    assert streamed == [sentence for sentence in whole if sentence]


def test_lowercase_may_start_a_sentence_for_text_written_without_capitals() -> None:
    text = "one two. three four? wait... what"
    assert split_at_sentence_ends(text) == [text]  # the chunker's rule: a lowercase word continues
    assert split_at_sentence_ends(text, lowercase_continues=False) == [
        "one two.",
        "three four?",
        "wait...",
        "what",
    ]
    # An abbreviation still ends nothing.
    assert split_at_sentence_ends("see e.g. this. then stop", lowercase_continues=False) == [
        "see e.g. this.",
        "then stop",
    ]


def test_abbreviations_come_from_the_package_data_file() -> None:
    from importlib.resources import files

    from strands_voice_protocol.sentences import ABBREVIATIONS

    text = files("strands_voice_protocol").joinpath("abbreviations.txt").read_text(encoding="utf-8")
    listed = {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
    assert ABBREVIATIONS == listed
    assert {"dr", "e.g", "approx", "ph.d"} <= ABBREVIATIONS
    assert all(word == word.lower() and not word.endswith(".") for word in ABBREVIATIONS)
