"""Retake the README screenshot (``docs/img/page.png``) from the real stack: not a test.

Starts the Kokoro endpoint (ONNX) and the example app with
:func:`strands_voice_tools.demo.start_demo_stack` and a
short scripted answer, asks one question through the page in headless Chromium, waits until the answer has
played, and saves a full-page screenshot. The figures on it are real measurements of the machine it runs
on, so take it on a quiet one::

    uv run python scripts/retake_page_screenshot.py docs/img/page.png
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/support

from support.browser import CHROMIUM_ARGS, find_chromium

ANSWER = (
    "The Premium plan costs $24.99 per month, and you can cancel at any time. "
    "It includes unlimited cloud storage for your photos. "
    "You also get priority support, day and night. "
    "Shall I start a free trial for you?"
)
PROMPT = "What does the Premium plan include, and how much does it cost?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("artifacts/browser/page-doc.png"))
    parser.add_argument("--mode", choices=("bidi", "batch"), default="bidi")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("Debian's chromium is not installed: run `apt-get install -y chromium`", file=sys.stderr)
        return 1

    from agentcore_app.scripted import ScriptedModel
    from playwright.sync_api import sync_playwright
    from strands_voice_tools.demo import start_demo_stack

    stack = start_demo_stack("scripted", model=ScriptedModel(text=ANSWER, first_sentence_s=0.6, total_s=3.0))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport={"width": 1000, "height": 900}).new_page()
            page.goto(stack.app_url + "/")
            page.wait_for_selector("html[data-ready='true']", state="attached")
            page.fill("#prompt", PROMPT)
            page.select_option("#mode", args.mode)
            page.click("#speak")
            page.wait_for_function("['done', 'error'].includes(window.voiceStats.state)", timeout=600_000)
            stats = page.evaluate("() => window.voiceStats")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
            browser.close()
    finally:
        stack.stop()
    print(
        json.dumps({key: stats[key] for key in ("state", "ttfaMs", "agentTtfaMs", "audioSecondsScheduled")})
    )
    print(f"saved {args.out}")
    return 0 if stats["state"] == "done" else 1


if __name__ == "__main__":
    raise SystemExit(main())
