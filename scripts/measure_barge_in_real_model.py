"""How fast a hang-up and a new question stop an answer whose model is a real model's client. Not a test: a
measurement.

The example app answers over ``POST /invocations`` with its agent on Strands' ``OpenAIModel``, against the
OpenAI-compatible stand-in server (tests/support/openai_model.py: the first answer pauses mid-answer, as a
real model does while it thinks or writes a tool call's arguments); the TTS endpoint is the tests'
in-memory one. Two moments are timed, each from the caller's act:

- a hang-up once the first sentence was heard: until the model server sees its stream dropped, and until
  the session's next question gets its first text;
- a new question on the session while the answer is still going: until its first text (or its ``error``),
  and until the model server sees the old answer's stream dropped.

One JSON line per run; run it on two checkouts in turn to compare them::

    uv run python scripts/measure_barge_in_real_model.py [label]
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The tests' shared helpers (tests/support) serve the app and the model.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import httpx
from strands_voice_protocol.sse import SSEDecoder
from support.instant_tts import SECONDS_PER_REQUEST
from support.openai_model import PAUSED, app_on_openai_model

SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
GUARD_S = 60.0


def post(url: str, session: str, prompt: str, on_event: Callable[[dict[str, Any]], bool]) -> None:
    """POST ``prompt``; hand each event to ``on_event``, and hang up once it returns True."""
    decoder = SSEDecoder()
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=GUARD_S)) as client,
        client.stream(
            "POST", f"{url}/invocations", json={"prompt": prompt}, headers={SESSION_HEADER: session}
        ) as response,
    ):
        for data in response.iter_raw():
            for event in decoder.feed(data):
                if on_event(event.json()):
                    return


def heard(event: dict[str, Any]) -> bool:
    """True once the first sentence has been delivered and played."""
    if event["type"] != "sentence_complete":
        return False
    time.sleep(SECONDS_PER_REQUEST + 0.3)
    return True


def first_text(marks: list[tuple[float, str]]) -> Callable[[dict[str, Any]], bool]:
    """An ``on_event`` that notes when the first ``text_delta`` (or ``error``) came, and reads on."""

    def note(event: dict[str, Any]) -> bool:
        if not marks and event["type"] in ("text_delta", "error"):
            marks.append((time.monotonic(), event["type"]))
        return False

    return note


def measure(url: str, log: Any) -> tuple[dict[str, Any], threading.Thread]:
    """The two moments (see the module docstring), in seconds; the first answer's reader (to join)."""
    figures: dict[str, Any] = {}
    hung_up = "hang-up-0123456789abcdef0123456789"
    post(url, hung_up, "What is the Premium plan?", heard)
    marks: list[tuple[float, str]] = []
    left = time.monotonic()
    post(url, hung_up, "What does it cost?", first_text(marks))
    figures["hang_up_model_stream_dropped_s"] = round((log.requests[0].ended_at or float("nan")) - left, 3)
    figures["hang_up_next_first_text_s"] = round(marks[0][0] - left, 3)

    speaking = "speaking-0123456789abcdef0123456789"
    ready = threading.Event()

    def listening(event: dict[str, Any]) -> bool:
        if heard(event):
            ready.set()
        return False  # the caller reads on

    reader = threading.Thread(target=post, args=(url, speaking, "What is the Premium plan?", listening))
    reader.start()
    ready.wait(GUARD_S)
    marks.clear()
    asked = time.monotonic()
    post(url, speaking, "What does it cost?", first_text(marks))
    figures["new_question_first_event_s"] = round(marks[0][0] - asked, 3)
    figures["new_question_first_event"] = marks[0][1]
    ended = log.requests[2].ended_at
    figures["new_question_old_stream_dropped_s"] = None if ended is None else round(ended - asked, 3)
    return figures, reader


def main() -> None:
    logging.basicConfig(level=logging.CRITICAL)
    with app_on_openai_model(PAUSED) as (url, log):
        figures, reader = measure(url, log)
    reader.join(GUARD_S)  # the model resumed as the app stopped: an unstopped first answer ends too
    print(json.dumps({"label": sys.argv[1] if len(sys.argv) > 1 else "", **figures}))


if __name__ == "__main__":
    main()
