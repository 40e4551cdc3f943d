"""The texts the benchmark speaks: fixed, so runs on different machines compare."""

from __future__ import annotations

from typing import Final

__all__ = ["BENCH_TEXT", "CONCURRENCY_TEXT", "FIRST_SENTENCE", "PROMPT"]

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

# Module-level checks: the experiment is only comparable if the text is exactly what the docs describe.
assert len(BENCH_TEXT) == 267, len(BENCH_TEXT)
assert BENCH_TEXT.count(". ") == 3 and BENCH_TEXT.endswith(".")
