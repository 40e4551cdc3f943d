"""How Whisper counts a digit said two or three times in a row, per second-pass window.

Not a test (pytest does not collect it). Run from the repository root (the ``listen`` group and Debian's
``asterisk-core-sounds-en-wav``, whose digits are real human recordings):

    HF_HUB_OFFLINE=1 uv run python scripts/measure_repeated_words.py 0 10 16 20 30

For each window (seconds; 0: no second pass, the window cut to the turn alone), 48 numbers made of the
Asterisk digits (each digit 0-9 said twice, 0, 1, 2 and 5 three times, "4 1 5" and "5 5 1 2"; 0.05, 0.15
and 0.3 s apart) go through ``WhisperRecognizer.recognize``: how many come out with the digits as said
(spelled digits read as digits; a text the guard does not trust is wrong), which are wrong, how many were
heard again through the second window (the rest were read once, or read again alike from the same encoding)
and the median time of a recognition. Set ``MKL_ENABLE_INSTRUCTIONS`` or ``CT2_USE_MKL=0
CT2_FORCE_CPU_ISA=AVX2`` to try CTranslate2's other kernels.
"""

from __future__ import annotations

import statistics
import sys
import time

NUMBERS = [digit * 2 for digit in "0123456789"] + [digit * 3 for digit in "0125"] + ["415", "5512"]
GAPS_S = (0.05, 0.15, 0.3)


def main(windows: list[int]) -> None:
    from strands_voice_tools.bench.eot_set import digits_heard, human_digits

    import strands_voice.listen._whisper as whisper

    recognizer = whisper.WhisperRecognizer()
    recognizer.transcribe(bytes(32000))
    encodings: list[int] = []
    encode = whisper.WhisperRecognizer._encode

    def counted(self: whisper.WhisperRecognizer, *args: object) -> object:
        encodings.append(1)
        return encode(self, *args)  # type: ignore[arg-type]

    whisper.WhisperRecognizer._encode = counted  # type: ignore[assignment,method-assign]
    for window in windows:
        whisper._RECHECK_WINDOW_S = window  # type: ignore[misc]  # the window under measurement
        wrong, took = [], []
        encodings.clear()
        for number in NUMBERS:
            for gap_s in GAPS_S:
                pcm16 = bytes(9600) + human_digits(number, gap_s) + bytes(2048)
                started = time.perf_counter()
                words = recognizer.recognize(pcm16)
                took.append(time.perf_counter() - started)
                if not words.trusted or digits_heard(words.text) != number:
                    wrong.append(f"{number}@{gap_s}: {words.text[:30]!r}")
        count = len(NUMBERS) * len(GAPS_S)
        median_ms = round(1000 * statistics.median(took))
        said = count - len(wrong)
        again = len(encodings) - count
        figures = f"{said} of {count} as said, {again} heard again, median {median_ms} ms"
        print(f"window {window} s: {figures}", flush=True)
        for line in wrong:
            print(f"  wrong {line}")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [0, 20])
