"""First-fragment policy measurements: engine time to first audio and Whisper WER, cut vs whole.

Not a test (pytest does not collect it). Run from the repository root:

    HF_HUB_OFFLINE=1 uv run python scripts/measure_first_fragment.py \
        docs/benchmarks/first_fragment_cut_vs_whole.json

In process, one onnxruntime thread, medians of 3: the time to the first audio of a request (silence
policy on) for the 44- and 197-character sentences, windowed and whole-segment, and for first fragments
of about 10-60 characters cut at a word boundary; and Whisper's WER on the 197-character sentence spoken
whole vs spoken as a cut-off first fragment plus the rest (two engine calls, joined as the endpoint does).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from typing import Any

import numpy as np


def words(s: str) -> str:
    return " ".join(re.findall(r"[a-z']+", s.lower()))


def cut_at(text: str, n: int) -> tuple[str, str]:
    i = text.find(" ", n)
    return (text[:i], text[i + 1 :]) if i > 0 else (text, "")


def main(out_path: str) -> None:
    """Measure and write the JSON. The ``asr`` group's packages load here, not at import."""
    import jiwer
    from faster_whisper import WhisperModel
    from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine
    from kokoro_endpoint.engines.onnx.windows import WindowPlan
    from kokoro_endpoint.engines.pipeline import synthesize_segments
    from kokoro_endpoint.engines.silence import SilencePolicy
    from strands_voice_tools.bench.texts import HEARD_LONG, HEARD_SHORT

    from strands_voice.listen import whisper_model_dir as _whisper_dir

    e = OnnxEngine.load(threads=1)
    e.warm_up()
    wm = WhisperModel(str(_whisper_dir()), device="cpu", compute_type="int8", cpu_threads=1)

    def tx(a: Any) -> str:
        a = np.concatenate([np.zeros(7200, np.float32), a])
        segs, _ = wm.transcribe(a, language="en", beam_size=1)
        return " ".join(s.text for s in segs)

    def first_audio_s(text: str, windowed: bool = True, trials: int = 3) -> int:
        e.plan = WindowPlan() if windowed else None
        out = []
        for _ in range(trials):
            t = time.perf_counter()
            g = synthesize_segments(e, text, "jm_kumo", 1.0, 60, SilencePolicy())
            next(g)
            out.append(time.perf_counter() - t)
            g.close()
        e.plan = WindowPlan()
        return round(statistics.median(out) * 1e3)

    def spoken(text: str) -> list[Any]:
        return [o.audio for o in synthesize_segments(e, text, "jm_kumo", 1.0, 60, SilencePolicy())]

    res: dict[str, dict[str, Any]] = {"engine_first_audio_ms": {}, "wer": {}}
    for label, text in (("44-char", HEARD_SHORT), ("197-char", HEARD_LONG)):
        res["engine_first_audio_ms"][label + " windowed"] = first_audio_s(text)
        res["engine_first_audio_ms"][label + " whole"] = first_audio_s(
            text, windowed=False, trials=1 if label == "197-char" else 3
        )
    for n in (10, 20, 40, 60):
        head, _ = cut_at(HEARD_LONG, n)
        res["engine_first_audio_ms"][f"first fragment {len(head)} chars"] = first_audio_s(head)
    whole = np.concatenate(spoken(HEARD_LONG))
    res["wer"]["whole sentence"] = round(jiwer.wer(words(HEARD_LONG), words(tx(whole))), 3)
    for n in (10, 20, 40, 60, 100):
        head, rest = cut_at(HEARD_LONG, n)
        heard = tx(np.concatenate(spoken(head) + spoken(rest)))
        res["wer"][f"cut after {len(head)} chars"] = round(jiwer.wer(words(HEARD_LONG), words(heard)), 3)
        print(n, heard, flush=True)
    print(json.dumps(res, indent=1))
    with open(out_path, "w", encoding="utf-8") as out:
        json.dump(res, out, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/benchmarks/first_fragment_cut_vs_whole.json")
