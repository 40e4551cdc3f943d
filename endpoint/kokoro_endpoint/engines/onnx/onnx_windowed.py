"""One segment's audio from the split graph, decoded whole or window by window (a :class:`WindowPlan`).

The encoder runs on the whole segment (so prosody sees the whole sentence); the decoder then runs over
growing windows of its frames (:mod:`.windows`), each yielded as soon as it is decoded, so the first audio
of a long sentence costs about what a short one's does. Each window is decoded with context frames on each
side, thrown away, and cross-faded into its neighbours: the context is the windows' cost in throughput.

A segment that is not its request's first starts with a window as large as the audio the request has
already produced (``produced``): that audio plays while the window is decoded, so no small first window
is needed there, and fewer, larger windows decode fewer context frames. A segment no longer than that is
one window, its leading silence skipped as a windowed segment's is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

import numpy as np

from kokoro_endpoint.engines.onnx.onnx_runner import run_decoder, run_encoder
from kokoro_endpoint.engines.onnx.windows import WindowPlan, WindowStitcher
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.speech import SegmentTiming
from kokoro_endpoint.scheduling.interrupt import Interrupt

__all__ = ["CROSSFADE", "HOP", "decode_segment"]

#: Samples per decoder frame (the aligned text features' rate: 40 frames per second).
HOP: Final = 600
#: Samples cross-faded where two decoded windows meet (10 ms).
CROSSFADE: Final = 240


def decode_segment(
    split: Any,
    feeds: dict[str, Any],
    timing_of: Callable[[Any], SegmentTiming],
    plan: WindowPlan | None,
    interrupt: Interrupt | None,
    produced: int = 0,
) -> Iterator[SpeechPiece]:
    """The segment's audio: one piece when decoded whole (``plan`` None or a short segment), else one per
    window, the first carrying the segment's timing.

    Args:
        split: The split graph's sessions (``onnx_sessions.SplitSessions``).
        feeds: The encoder's inputs (``tokens``, ``style``, ``speed``).
        timing_of: The segment's timing from the encoder's per-token durations.
        plan: How to cut the frames into windows; None decodes the segment whole.
        interrupt: Stops the running model call when set.
        produced: Frames of audio the request produced before this segment.
    """
    encoded = run_encoder(split.encoder, feeds, interrupt)
    frames, style = encoded.frames, feeds["style"]
    timing = timing_of(encoded.durations)
    windows = list(plan.windows(frames, produced)) if plan is not None else []
    if plan is None or (len(windows) <= 1 and produced <= 0):
        yield SpeechPiece(run_decoder(split.decoder, style, encoded, 0, frames, interrupt), True, timing)
        return
    # The first token is the leading pad: the model speaks silence for its frames. Decoding them costs
    # as much as speech, so all but the last ``lead_frames`` are sent as zeros, not decoded, and the
    # first window starts just before the first sound (a later phrase's one window too).
    lead = int(np.rint(np.asarray(encoded.durations).reshape(-1)[0]))
    skip = max(0, min(lead - plan.lead_frames, frames - plan.first))
    windows = list(plan.windows(frames - skip, produced))
    stitcher = WindowStitcher(HOP, (frames - skip) * HOP, CROSSFADE)
    for index, window in enumerate(windows):
        audio = run_decoder(split.decoder, style, encoded, window.lo + skip, window.hi + skip, interrupt)
        out = stitcher.add(window, audio)
        if index == 0 and skip:
            out = np.concatenate([np.zeros(skip * HOP, dtype=np.float32), out])
        yield SpeechPiece(out, index == len(windows) - 1, timing if index == 0 else None)
