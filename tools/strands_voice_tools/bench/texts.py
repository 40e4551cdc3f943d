"""The texts the benchmark speaks: fixed, so runs on different machines compare."""

from __future__ import annotations

from typing import Final

__all__ = [
    "BENCH_TEXT",
    "CONCURRENCY_TEXT",
    "FIRST_SENTENCE",
    "HEARD_LONG",
    "HEARD_SHORT",
    "HEARD_TWO_SENTENCES",
    "PROMPT",
]

#: The TTS-only experiment's text: four sentences, exactly 267 characters, sent as ONE message.
BENCH_TEXT: Final = (
    "Streaming speech lets a voice agent start talking before it has finished thinking. "
    "The first sentence is spoken while the model is still writing the rest. "
    "Later sentences follow on the same open session. "
    "The listener hears one steady voice and never waits in silence."
)

#: The first sentence of :data:`BENCH_TEXT` alone: the experiment's baseline.
FIRST_SENTENCE: Final = BENCH_TEXT.split(". ", 1)[0] + "."

#: A short one-sentence text for the concurrency section (short keeps 8 sessions affordable on 2 cores).
CONCURRENCY_TEXT: Final = "Thanks for waiting, here is your answer."

#: The end-to-end prompt; the scripted model answers the same way whatever it is asked.
PROMPT: Final = "Why does streaming speech sentence by sentence make a voice agent feel fast?"

#: Time to first heard sound, short: one 44-character sentence.
HEARD_SHORT: Final = "The red kite circled above the quiet valley."

#: ... and long: one 197-character sentence with no internal punctuation (no clause to split at).
HEARD_LONG: Final = (
    "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the great lamp "
    "that guided the small fishing boats safely home across the dark and restless water of the wider bay."
)

#: Two plain sentences in one message: the silence a listener hears between them.
HEARD_TWO_SENTENCES: Final = "The weather is nice today. Please open the front door."

# Module-level checks: the experiment is only comparable if the text is exactly what the docs describe.
assert len(BENCH_TEXT) == 267, len(BENCH_TEXT)
assert BENCH_TEXT.count(". ") == 3 and BENCH_TEXT.endswith(".")
assert len(HEARD_SHORT) == 44 and len(HEARD_LONG) == 197, (len(HEARD_SHORT), len(HEARD_LONG))
assert not any(mark in HEARD_LONG[:-1] for mark in ",;:.!?—")
