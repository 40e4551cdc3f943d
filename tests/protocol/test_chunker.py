"""IncrementalSentenceChunker and clean_for_speech: exact chunks on real-looking LLM output, edge cases,
and property tests (nothing lost or duplicated; output independent of how the text was fragmented)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.speech_text import clean_for_speech
from support.timing import best_time


def chunk_all(fragments: list[str], **kwargs: int | None) -> list[str]:
    chunker = IncrementalSentenceChunker(**kwargs)  # type: ignore[arg-type]
    out: list[str] = []
    for fragment in fragments:
        out += chunker.feed(fragment)
    out += chunker.finish()
    return out


def chunk_flush(fragments: list[str], **kwargs: int | None) -> list[str]:
    chunker = IncrementalSentenceChunker(**kwargs)  # type: ignore[arg-type]
    out: list[str] = []
    for fragment in fragments:
        out += chunker.feed(fragment)
    last = chunker.flush()
    return [*out, last] if last is not None else out


def tokenize_like_llm(text: str, seed: int = 7) -> list[str]:
    """Split text into 1-6 character pieces, roughly how an LLM streams tokens."""
    rng = random.Random(seed)
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 6)
        pieces.append(text[i : i + step])
        i += step
    return pieces


LLM_ANSWER = """Sure! Here's a quick overview of **Kokoro**, the open-weight TTS model, and how to run it.

## What it costs
- An `ml.g5.xlarge` instance costs about $1.41 per hour in us-east-1, i.e. roughly $1,000 a month.
- Mr. Smith from the U.S. team measured 3.5x real-time on version 1.0.2 at 10:30 a.m. yesterday.

### Steps
1. Read [the SageMaker guide](https://docs.aws.amazon.com/sagemaker/latest/dg/realtime.html) first.
2. Then e-mail ops@example.com with your `config.yaml` file 🚀.

Kokoro also speaks Chinese. 你好！这是一个测试。It works... mostly. "Really?" she asked. \
See https://github.com/hexgrad/kokoro for more."""

LLM_CHUNKS = [
    "Sure!",
    "Here's a quick overview of Kokoro, the open-weight TTS model, and how to run it.",
    "What it costs",
    "An ml.g5.xlarge instance costs about $1.41 per hour in us-east-1, i.e. roughly $1,000 a month.",
    "Mr. Smith from the U.S. team measured 3.5x real-time on version 1.0.2 at 10:30 a.m. yesterday.",
    "Steps",
    "Read the SageMaker guide first.",
    "Then e-mail ops@example.com with your config.yaml file.",
    "Kokoro also speaks Chinese.",
    "你好！",
    "这是一个测试。",
    "It works... mostly.",
    '"Really?" she asked.',
    "See github.com for more.",
]


@pytest.mark.parametrize("split", ["whole", "chars", "tokens"])
def test_core_chunker_real_llm_answer_exact_chunks(split: str) -> None:
    fragments = {"whole": [LLM_ANSWER], "chars": list(LLM_ANSWER), "tokens": tokenize_like_llm(LLM_ANSWER)}
    assert chunk_all(fragments[split]) == LLM_CHUNKS
    assert chunk_flush(fragments[split]) == LLM_CHUNKS


def test_core_chunker_emits_sentences_while_streaming() -> None:
    chunker = IncrementalSentenceChunker()
    assert chunker.feed("Hello there.") == []  # could still be "Hello there.com" or an abbreviation
    assert chunker.feed(" How") == ["Hello there."]
    assert chunker.feed(" are you?") == []
    assert chunker.flush() == "How are you?"
    assert chunker.flush() is None  # reset after flush, and reusable
    assert chunker.feed("Again. And") == ["Again."]


def test_core_chunker_first_chunk_split_at_clause() -> None:
    text = "Kokoro is a small open text to speech model, and it runs fast on a CPU, which keeps costs low. "
    text += "So, a."
    assert chunk_all([text]) == [
        "Kokoro is a small open text to speech model,",
        "and it runs fast on a CPU, which keeps costs low.",
        "So, a.",
    ]
    # The clause split happens as soon as the space after the comma arrives.
    chunker = IncrementalSentenceChunker()
    assert chunker.feed("Kokoro is a small open text to speech model,") == []
    assert chunker.feed(" and") == ["Kokoro is a small open text to speech model,"]
    # A short clause (under the minimum) does not split; None turns the feature off.
    assert chunk_all(["Yes, it does run on a CPU, and quite fast too, for a model this good."]) == [
        "Yes, it does run on a CPU, and quite fast too,",
        "for a model this good.",
    ]
    assert chunk_all([text], first_chunk_min_chars=None)[0] == (
        "Kokoro is a small open text to speech model, and it runs fast on a CPU, which keeps costs low."
    )


def test_core_chunker_max_chunk_length() -> None:
    clause = "this clause keeps going without a full stop, "
    text = "Intro. " + clause * 20 + "end."
    chunks = chunk_all([text], max_chunk_chars=120)
    assert all(len(c) <= 120 for c in chunks)
    assert all(c.endswith(",") for c in chunks[1:-1])  # split at clause boundaries
    assert " ".join(chunks).split() == text.split()
    # No clause boundary: split at whitespace; no whitespace at all: hard split.
    words = " ".join(["word"] * 100)
    chunks = chunk_all([words], max_chunk_chars=50, first_chunk_min_chars=None)
    assert all(len(c) <= 50 for c in chunks) and " ".join(chunks) == words
    chunks = chunk_all(["x" * 130], max_chunk_chars=50)
    assert chunks == ["x" * 50, "x" * 50, "x" * 30]
    # Chinese with no terminator splits at 、/，
    zh = "这是一个很长的句子，" * 10
    chunks = chunk_all([zh], max_chunk_chars=40, first_chunk_min_chars=None)
    assert all(len(c) <= 40 and c.endswith("，") for c in chunks) and "".join(chunks) == zh


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mr. Smith met Dr. Jones on Main St. yesterday. Then they left.", 2),
        ("Use a fruit, e.g. Apples, or i.e. Pears. Then eat.", 2),
        ("It costs $3.50 today. Tomorrow $4.", 2),
        ("Python 3.12.1 is out. Upgrade now.", 2),
        ("Meet at 10:30 a.m. Tomorrow works too. Bye.", 2),
        ("See example.com/a.html now. Bye.", 2),
        ("Mail me at jane.doe@example.co.uk today. Bye.", 2),
        ("Open main.py and config.yaml. Then run.", 2),
        ("J. R. R. Tolkien wrote it. Read it.", 2),
        ("He lives in the U.S. The team too.", 1),
        ("Apples, pears, etc. All fruit.", 1),
        ("Rust vs. Go is a classic. Pick one.", 2),
        ("Wait... what happened? Nothing.", 2),
        ("Wait... What happened? Nothing.", 3),
        ("Well… I think so. Yes.", 3),
        ('He said "Stop." Then he left.', 2),
        ("(This is an aside.) Back to it.", 2),
        ("Really?! Yes. No!", 3),
        ("The value is 1,000,000. Big.", 2),
        ("Read No. 5 today. Okay.", 2),
        ("The answer is no. Then stop.", 2),
        ("So do I. Then we go.", 2),
        ("Version v2.0.0-rc.1 ships. Great.", 2),
    ],
)
def test_core_chunker_sentence_boundaries(text: str, expected: int) -> None:
    chunks = chunk_all([text], first_chunk_min_chars=None)
    assert len(chunks) == expected, chunks
    assert chunk_all(list(text), first_chunk_min_chars=None) == chunks
    assert " ".join(chunks) == text


def test_core_chunker_cjk_and_closers() -> None:
    assert chunk_all(["你好！我是小明。「你呢？」他问。"]) == ["你好！", "我是小明。", "「你呢？」", "他问。"]
    assert chunk_all(["日本語です。English follows. 終わり。"]) == [
        "日本語です。",
        "English follows.",
        "終わり。",
    ]


def test_core_chunker_markdown_blocks_end_chunks() -> None:
    text = "Here are the steps:\n- first step\n- second step\n\nA new paragraph\nwraps here\n# Heading\nBody"
    assert chunk_all([text]) == [
        "Here are the steps:",
        "first step",
        "second step",
        "A new paragraph wraps here",
        "Heading",
        "Body",
    ]
    code = "Run this:\n```bash\npip install kokoro\n```\nDone."
    assert chunk_all([code]) == ["Run this:", "bash", "pip install kokoro", "Done."]
    table = "| Model | Size |\n|---|---|\n| Kokoro | 82M |\nThat is all."
    assert chunk_all([table]) == ["Model Size", "Kokoro 82M", "That is all."]


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        (
            "**Bold** and *italic* and __under__ and _it_ and ~~gone~~.",
            "Bold and italic and under and it and gone.",
        ),
        ("Call `get_value()` on my_object.", "Call get_value() on my_object."),
        ("See [the docs](https://example.com/docs?a=1) now.", "See the docs now."),
        ("An image ![a cat](cat.png) here.", "An image a cat here."),
        ("Visit <https://example.com/x>.", "Visit example.com."),
        ("Go to https://www.example.org/path/to/page.html, then stop.", "Go to www.example.org, then stop."),
        ("Great job! 🎉🚀 Keep going 👍🏽.", "Great job! Keep going."),
        ("Status: ✅ done → next ⭐", "Status: done next"),
        (
            "## Heading\n- bullet\n* star\n+ plus\n• dot\n1. one\n10) ten\n> quote",
            "Heading bullet star plus dot one ten quote",
        ),
        ("---\n***\nText", "Text"),
        ("Line<br>break", "Line break"),
        ("C# and F# stay; 5 - 3 = 2 stays.", "C# and F# stay; 5 - 3 = 2 stays."),
        ("-5 degrees and #1 fan", "-5 degrees and #1 fan"),
    ],
)
def test_core_clean_for_speech(raw: str, spoken: str) -> None:
    assert clean_for_speech(raw) == spoken


def test_core_chunker_text_deltas_untouched() -> None:
    # The chunker never mutates what it was given (the caller shows the raw deltas to the user).
    fragments = tokenize_like_llm(LLM_ANSWER)
    copy = list(fragments)
    chunk_all(fragments)
    assert fragments == copy and "".join(fragments) == LLM_ANSWER


def test_core_chunker_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        IncrementalSentenceChunker(max_chunk_chars=5)
    with pytest.raises(ValueError):
        IncrementalSentenceChunker(first_chunk_min_chars=0)


def test_core_chunker_linear_time() -> None:
    # 250k characters fed one at a time. A rescan of the buffer on each feed, or of the whole stream,
    # would be orders of magnitude slower than this bound.
    text = (LLM_ANSWER + "\n\n") * 100 + "word " * 20_000
    pieces = list(text)
    # Per character: the same cost as a 20x shorter stream of the same kind (a rescan would be ~20x
    # costlier per character here, and grow with the stream).
    short = pieces[: len(pieces) // 20]
    baseline, _ = best_time(lambda: chunk_all(short))
    elapsed, chunks = best_time(lambda: chunk_all(pieces))
    assert elapsed < 0.5 + 20 * 4 * baseline, f"{elapsed:.2f} s vs {baseline:.2f} s for 1/20 of it"
    assert "".join("".join(chunks).split()) == "".join(clean_for_speech(text).split())


# ---- property tests -------------------------------------------------------------------------------

TOKENS = [
    "Hello", "world", "the", "Kokoro", "speech", "I", "A", "x", "Mr.", "Dr.", "e.g.", "i.e.", "U.S.", "etc.",
    "vs.", "3.14", "$1,000.50", "v1.2.3", "10:30", "https://a.io/b.c?d=1", "a@b.co", "file.py", "J.",
    "...", "…", ".", "!", "?", "?!", ",", ";", ":", "—", "“", "”", '"', "'", "(", ")", "[", "]",
    "[link](http://u.v/w)", "](x)", "**", "*", "_", "`", "```", "~~", "#", "## ", "- ", "1. ", "12) ", "> ",
    "|", "---", "😀", "🚀", "👍🏽", "✅", "。", "！", "？", "你好", "中文，", "」", "「", "\n", "\n\n",
    " ", "  ", "\t", "\r\n", "\u00a0", "<br>", "no", "No.", "5",
]  # fmt: skip

SEPARATORS = ["", " ", " ", " ", "\n", "\n\n", "  "]

texts = st.lists(
    st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), min_size=0, max_size=60
).map(lambda parts: "".join(t + s for t, s in parts))

mixed_texts = st.one_of(
    texts,
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from(list(".!? \n,;:-*#`[]()。！")), max_size=80),
)


@st.composite
def fragmented(draw: st.DrawFn, source: st.SearchStrategy[str]) -> tuple[str, list[str]]:
    text = draw(source)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=30)))
    edges = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(edges)]


def nonspace(s: str) -> str:
    return "".join(s.split())


PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(fragmented(mixed_texts), st.sampled_from([(40, 350), (None, 30), (10, 20), (25, 60)]))
def test_core_chunker_fragmentation_independent_and_lossless(
    case: tuple[str, list[str]], limits: tuple[int | None, int]
) -> None:
    text, fragments = case
    first, limit = limits
    whole = chunk_all([text], first_chunk_min_chars=first, max_chunk_chars=limit)
    assert chunk_all(fragments, first_chunk_min_chars=first, max_chunk_chars=limit) == whole
    assert chunk_all(list(text), first_chunk_min_chars=first, max_chunk_chars=limit) == whole
    flushed = chunk_flush(fragments, first_chunk_min_chars=first, max_chunk_chars=limit)
    assert nonspace("".join(flushed)) == nonspace("".join(whole))
    for chunk in whole:
        assert chunk and chunk == " ".join(chunk.split())
        assert len(chunk) <= limit
    # Nothing lost or duplicated, in order (character level: CJK chunks split inside a "word"). Only a
    # hard cut inside a run of more than `limit` non-space characters may clean differently (a link tail
    # or URL cut in two), so that case is left out here.
    if all(len(run) <= limit for run in text.split()):
        assert nonspace("".join(whole)) == nonspace(clean_for_speech(text))


WORDS = [
    "Hello", "world.", "the", "Kokoro,", "speaks;", "I", "Mr.", "e.g.", "U.S.", "3.14", "$5.", "v1.2.3",
    "10:30", "https://a.io/b.c", "a@b.co", "file.py.", "Why?", "Yes!", "Wait...", "so…", "“Quote.”",
    "(aside.)", "**bold**", "`code`", "[link](http://u.v/w).", "—", "well,", "x", "A.", "No.", "7",
]  # fmt: skip
LINE_STARTS = ["", "", "", "# ", "## ", "- ", "* ", "1. ", "> "]

word_texts = (
    st.lists(
        st.tuples(st.sampled_from(LINE_STARTS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=40)),
        max_size=8,
    )
    .flatmap(
        lambda lines: st.tuples(
            st.just(lines),
            st.lists(st.sampled_from(["\n", "\n\n", " "]), min_size=len(lines), max_size=len(lines)),
        )
    )
    .map(lambda pair: "".join(start + " ".join(ws) + sep for (start, ws), sep in zip(*pair, strict=True)))
)


@PROPERTY_SETTINGS
@given(fragmented(word_texts), st.sampled_from([(40, 350), (None, 40), (20, 60)]))
def test_core_chunker_words_preserved(case: tuple[str, list[str]], limits: tuple[int | None, int]) -> None:
    text, fragments = case
    first, limit = limits
    assume(all(len(word) < limit for word in text.split()))
    chunks = chunk_all(fragments, first_chunk_min_chars=first, max_chunk_chars=limit)
    assert " ".join(chunks).split() == clean_for_speech(text).split()


# ---- long runs: linear time, max_chunk_chars kept while a run grows ----------------------------------

RUN = 6_000
PATHOLOGICAL_RUNS = {
    "dots": "Hello" + "." * RUN,
    "ellipses": "Hello" + "…" * RUN,
    "bangs": "Hello" + "?!" * (RUN // 2),
    "cjk_terminators": "你好" + "。" * RUN,
    "stars_after_dot": "Hello." + "*" * RUN,
    "parens_after_dot": "Hello." + ")" * RUN,
    "spaces_after_sentence": "Hello there." + " " * RUN,
    "newlines_after_sentence": "Hello there." + "\n" * RUN,
    "spaces_after_newline": "Hello there\n" + " " * RUN,
    "leading_spaces": " " * RUN + "Hello.",
    "leading_newlines": "\n" * RUN + "Hello.",
    "tabs_mid_line": "Hello" + "\t" * RUN + "there.",
    "empty_bullets": "- \n" * (RUN // 3),
    "dashes": "-" * RUN,
    "hashes": "#" * RUN,
    "backticks": "`" * RUN,
    "digits": "1" * RUN,
    "numbered_dots": "1." * (RUN // 2),
    "url": "https://a.io/" + "b" * RUN,
    "cjk": "中" * RUN,
    "emoji": "😀" * RUN,
}


def _timed_chars(text: str) -> tuple[float, list[str]]:
    return best_time(lambda: chunk_all(list(text)))


@pytest.mark.parametrize("name", list(PATHOLOGICAL_RUNS))
def test_core_chunker_long_runs_linear_and_bounded(name: str) -> None:
    # Fed one character at a time, a 6,000-character run of any shape costs about what plain words cost
    # (a rescan of the undecided run on every feed is ~100x slower), every chunk keeps max_chunk_chars,
    # and the chunks are the same as for the whole text at once.
    text = PATHOLOGICAL_RUNS[name]
    baseline, _ = _timed_chars("word " * (RUN // 5))
    elapsed, chunks = _timed_chars(text)
    assert elapsed < 0.3 + 10 * baseline, f"{name}: {elapsed:.2f} s vs {baseline:.2f} s for plain words"
    assert chunks == chunk_all([text])
    assert all(chunk and len(chunk) <= 350 for chunk in chunks)


def test_core_chunker_max_chunk_chars_applies_while_a_run_grows() -> None:
    # The limit cuts a growing run of terminators at once, not when the run ends.
    chunker = IncrementalSentenceChunker()
    chunks = chunker.feed("Hello")
    for _ in range(1_000):
        chunks += chunker.feed(".")
    assert chunks == ["Hello" + "." * 345, "." * 350]
    assert chunker.flush() == "." * 305
    # A blank of more than max_chunk_chars after a sentence ends it whatever comes next (here a lowercase
    # word, which after a short blank continues the sentence).
    chunker = IncrementalSentenceChunker()
    assert chunker.feed("Hello there.") == []
    assert [c for _ in range(350) for c in chunker.feed(" ")] == []
    assert chunker.feed(" ") == ["Hello there."]
    assert chunker.feed("and more") == []
    assert chunker.flush() == "and more"
    assert chunk_all(["Hello there." + " " * 300 + "and more"]) == ["Hello there. and more"]
    # Same for a blank of more than max_chunk_chars after a newline: the next line starts a new chunk even
    # when a short blank would have joined them.
    assert chunk_all(["first line\n" + " " * 400 + "second line"]) == ["first line", "second line"]
    assert chunk_all(["first line\n   second line"]) == ["first line second line"]
    assert chunk_all(list("first line\n" + " " * 400 + "- item")) == ["first line", "item"]


def test_core_chunker_big_fragment_linear() -> None:
    # A whole document in one feed costs what it costs in small pieces (cutting chunk after chunk off the
    # front of one huge buffer would be quadratic), with the same chunks.
    text = (LLM_ANSWER + "\n\n") * 1_000
    pieces = [text[i : i + 1_000] for i in range(0, len(text), 1_000)]
    baseline, in_pieces = best_time(lambda: chunk_all(pieces))
    elapsed, whole = best_time(lambda: chunk_all([text]))
    # Quadratic cutting would cost ~1,000x (one copy of the buffer per chunk); 3x is noise headroom.
    assert elapsed < 0.5 + 3 * baseline, f"{elapsed:.2f} s vs {baseline:.2f} s in pieces"
    assert whole == in_pieces == LLM_CHUNKS * 1_000


def test_core_clean_for_speech_linear_on_long_blanks() -> None:
    baseline, _ = best_time(lambda: clean_for_speech("word " * 10_000))
    elapsed, cleaned = best_time(lambda: clean_for_speech(" " * 50_000 + "x" + " " * 50_000 + "."))
    assert cleaned == "x."
    assert elapsed < 0.3 + 10 * baseline, f"{elapsed:.2f} s vs {baseline:.2f} s"


RUN_PIECES = [
    " ", "\n", "\t", ".", "…", "?", "。", "*", ")", "`", "-", "#", "_", '"', ". ", "\n ", "\n\n", "- \n",
]  # fmt: skip

run_texts = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)).map("".join),
        st.tuples(st.sampled_from(RUN_PIECES), st.integers(10, 120)).map(lambda pair: pair[0] * pair[1]),
    ),
    max_size=25,
).map("".join)


@PROPERTY_SETTINGS
@given(fragmented(run_texts), st.sampled_from([(None, 30), (10, 20), (25, 60), (40, 100)]))
def test_core_chunker_long_runs_fragmentation_independent_and_lossless(
    case: tuple[str, list[str]], limits: tuple[int | None, int]
) -> None:
    # Runs longer than max_chunk_chars (where the chunker decides without waiting for the run to end).
    text, fragments = case
    first, limit = limits
    whole = chunk_all([text], first_chunk_min_chars=first, max_chunk_chars=limit)
    assert chunk_all(fragments, first_chunk_min_chars=first, max_chunk_chars=limit) == whole
    assert chunk_all(list(text), first_chunk_min_chars=first, max_chunk_chars=limit) == whole
    for chunk in whole:
        assert chunk and chunk == " ".join(chunk.split()) and len(chunk) <= limit
    if all(len(run) <= limit for run in text.split()):
        assert nonspace("".join(whole)) == nonspace(clean_for_speech(text))


def test_core_chunker_drops_lone_surrogates() -> None:
    """A broken model stream's lone surrogates are unspeakable and unsendable: they never reach a chunk."""
    chunker = IncrementalSentenceChunker(first_chunk_min_chars=None)
    assert chunker.feed("Hello \udc00there. Next \ud800") == ["Hello there."]
    assert chunker.flush() == "Next"
    assert clean_for_speech("a \ud83d b") == "a b"
