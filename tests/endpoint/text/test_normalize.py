"""English normalization for speech: a table of written forms and how they are read, and its char map."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.text.normalize import normalize_for_speech
from kokoro_endpoint.text.normalized_text import identity

CASES: list[tuple[str, str]] = [
    # abbreviations
    ("Use a fruit, e.g. an apple.", "Use a fruit, for example an apple."),
    ("Use a fruit, E.g. an apple.", "Use a fruit, for example an apple."),
    ("Bring snacks, i.e., chips.", "Bring snacks, that is, chips."),
    ("Apples, pears, etc. Then go.", "Apples, pears, et cetera. Then go."),
    ("Apples, pears, etc., and more", "Apples, pears, et cetera, and more"),
    ("Apples and pears etc.", "Apples and pears et cetera."),
    ("Cats vs. dogs", "Cats versus dogs"),
    ("Cats vs dogs", "Cats versus dogs"),
    ("It costs approx. 5 dollars.", "It costs approximately 5 dollars."),
    ("Room No. 5 is free.", "Room number 5 is free."),
    ("No. I said no.", "No. I said no."),
    ("Dr. Smith is here.", "Doctor Smith is here."),
    ("She lives on Mulholland Dr.", "She lives on Mulholland Drive."),
    ("St. Louis is big.", "Saint Louis is big."),
    ("Turn onto Main St. now.", "Turn onto Main Street now."),
    ("Mr. and Mrs. Smith met Ms. Lee.", "Mister and Missus Smith met Miz Lee."),
    ("Prof. Jones and John Jr. came.", "Professor Jones and John Junior came."),
    ("See Acme Inc. for details.", "See Acme Incorporated for details."),
    ("cf. the last chapter", "compare the last chapter"),
    ("Coffee w/ milk, tea w/o sugar", "Coffee with milk, tea without sugar"),
    ("Jan. 5 and Feb. 10", "January 5 and February 10"),
    ("Meet at 9 a.m. tomorrow.", "Meet at 9 AM tomorrow."),
    # units after numbers
    ("It is 5 km away.", "It is 5 kilometers away."),
    ("It is 1 km away.", "It is 1 kilometer away."),
    ("It weighs 3kg.", "It weighs 3 kilograms."),
    ("Add 250 mg daily.", "Add 250 milligrams daily."),
    ("Drive 60 mph.", "Drive 60 miles per hour."),
    ("Wind at 20 km/h.", "Wind at 20 kilometers per hour."),
    ("A 6 ft wall.", "A 6 feet wall."),
    ("It has 16 GB of memory.", "It has 16 gigabytes of memory."),
    ("A 3.5 GHz chip.", "A 3.5 gigahertz chip."),
    ("Latency is 100 ms.", "Latency is 100 milliseconds."),
    ("Wait 5 min please.", "Wait 5 minutes please."),
    ("It is 10m wide.", "It is 10 meters wide."),
    ("A 5h trip.", "A 5 hours trip."),
    ("Put 5 in the box.", "Put 5 in the box."),
    ("It was 25°C today.", "It was 25 degrees Celsius today."),
    ("It was -5 °F outside.", "It was minus 5 degrees Fahrenheit outside."),
    ("Turn it 90° left.", "Turn it 90 degrees left."),
    ("Growth was 50%.", "Growth was 50%."),
    # money
    ("They raised $1.5M.", "They raised 1.5 million dollars."),
    ("The budget is €20k.", "The budget is 20 thousand euros."),
    ("Profit hit £2bn.", "Profit hit 2 billion pounds."),
    ("A $5 million deal.", "A 5 million dollars deal."),
    ("It cost $3B total.", "It cost 3 billion dollars total."),
    ("Lunch was £3.50.", "Lunch was £3.50."),
    ("Tickets are $20.", "Tickets are $20."),
    # times
    ("Meet at 5 p.m. sharp.", "Meet at 5 PM sharp."),
    ("Wake at 10:30am.", "Wake at 10 30 AM."),
    ("At 7:05 PM we eat.", "At 7 oh 5 PM we eat."),
    ("It starts at 9:00.", "It starts at 9 o'clock."),
    ("The train leaves at 14:45.", "The train leaves at 14 45."),
    ("The shop opens at 08:00.", "The shop opens at 08 hundred."),
    # ordinals stay misaki's
    ("He came 1st and she 22nd.", "He came 1st and she 22nd."),
    # ranges and fractions
    ("Open 24/7.", "Open twenty-four seven."),
    ("Wait 3–5 days.", "Wait 3 to 5 days."),
    ("Wait 3-5 days.", "Wait 3 to 5 days."),
    ("From 2023-2024.", "From 2023 to 2024."),
    ("Born 2024-05-01.", "Born 2024-05-01."),
    ("Add 1/2 cup.", "Add 1 half cup."),
    ("Add 3/4 cup.", "Add 3 quarters cup."),
    ("Add ½ cup.", "Add one half cup."),
    ("Add 2½ cups.", "Add 2 and one half cups."),
    ("A 1920x1080 screen.", "A 1920 by 1080 screen."),
    ("It is 10x faster.", "It is 10 times faster."),
    ("It grew 3–4x.", "It grew 3 to 4 times."),
    ("Walk 3-5 km.", "Walk 3 to 5 kilometers."),
    ("Sales rose 20% YoY.", "Sales rose 20% year over year."),
    # symbols
    ("1 + 1 = 2", "1 + 1 equals 2"),
    ("x=5", "x equals 5"),
    ("Pi ≈ 3.14", "Pi approximately 3.14"),
    ("It is 5 ± 1.", "It is 5 plus or minus 1."),
    ("About ~5 people.", "About about 5 people."),
    ("Tom & Jerry", "Tom & Jerry"),
    ("Follow @jack for news.", "Follow at jack for news."),
    ("See ticket #42.", "See ticket number 42."),
    # addresses
    ("Mail jane.doe@example.com today.", "Mail jane dot doe at example dot com today."),
    ("Write to support@my-site.io.", "Write to support at my dash site dot io."),
    ("See https://www.example.com/docs/page.", "See w w w dot example dot com slash docs slash page."),
    ("Visit github.com/strands/voice now.", "Visit github dot com slash strands slash voice now."),
    ("Go to http://example.org", "Go to example dot org"),
    # an address ends before any sentence or clause mark (strands_voice_protocol.punctuation)
    ("It is at example.com/docs.…", "It is at example dot com slash docs.…"),
    ("Open example.com/docs.— then b.", "Open example dot com slash docs.— then b."),
    # phone numbers
    ("Call 555-123-4567.", "Call five five five, one two three, four five six seven."),
    ("Call +1 (206) 555-0100.", "Call plus one, two zero six, five five five, zero one zero zero."),
    ("Call +44 20 7946 0958.", "Call plus four four, two zero, seven nine four six, zero nine five eight."),
    # nothing to do
    ("Hello there, how are you?", "Hello there, how are you?"),
    ("The U.S. team won in 2024.", "The U.S. team won in 2024."),
    ("The 1990s were fun.", "The 1990s were fun."),
    ("I canvas the area.", "I canvas the area."),
]


def test_the_table_has_at_least_sixty_cases() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(("written", "spoken"), CASES, ids=[c[0] for c in CASES])
def test_written_english_is_read_as_people_say_it(written: str, spoken: str) -> None:
    assert normalize_for_speech(written).text == spoken


def _check_map(original: str) -> None:
    result = normalize_for_speech(original)
    assert result.original == original
    assert len(result.starts) == len(result.ends) == len(result.text)
    for start, end in zip(result.starts, result.ends, strict=True):
        assert 0 <= start < end <= len(original)
    assert list(result.starts) == sorted(result.starts)


@given(st.text())
@example("$1.5M e.g. 10:30am 555-123-4567 x@y.com")
@example("5.")
@example("@")
def test_normalization_never_raises_and_its_map_stays_inside_the_original(text: str) -> None:
    _check_map(text)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=9)
_SEPARATOR = st.sampled_from([" ", ", ", ". ", "! ", "? ", "; ", "\n", " - ", " ("])


@given(st.lists(st.tuples(_WORD, _SEPARATOR), min_size=1, max_size=20))
@example([("vs", " "), ("canvas", " ")])
@example([("QoQ", " "), ("Dr", ". ")])
def test_words_without_a_rule_are_all_still_there_in_order(parts: list[tuple[str, str]]) -> None:
    text = "".join(word + separator for word, separator in parts)
    # A word with a rule reads differently alone or with its punctuation ("vs", "YoY", "Dr.").
    kept = [
        word
        for word, separator in parts
        if normalize_for_speech(word).text == word
        and normalize_for_speech(word + separator.strip()).text == word + separator.strip()
    ]
    spoken = normalize_for_speech(text)
    # Each such word is still there, in order, and maps back onto itself.
    cursor = 0
    for word in kept:
        at = spoken.text.find(word, cursor)
        assert at >= 0, (word, spoken.text)
        start, end = spoken.source_span(at, at + len(word))
        assert text[start:end] == word
        cursor = at + len(word)


def test_a_spoken_span_maps_back_to_the_original_characters() -> None:
    original = "They raised $1.5M, e.g. from Dr. Lee."
    result = normalize_for_speech(original)
    start = result.text.index("million")
    assert original[slice(*result.source_span(start, start + len("million")))] == "$1.5M"
    start = result.text.index("example")
    assert original[slice(*result.source_span(start, start + len("example")))] == "e.g."
    start = result.text.index("Lee")
    assert original[slice(*result.source_span(start, start + 3))] == "Lee"


def test_identity_reads_the_text_as_written() -> None:
    result = identity("e.g. $1.5M")
    assert result.text == "e.g. $1.5M"
    assert result.source_span(0, 4) == (0, 4)
