"""One call of the split graph's encoder or decoder, interruptible.

The encoder (:mod:`.onnx_split`) runs on a whole segment: the aligned text features, the F0 and energy
curves, the per-token durations and the harmonic source's running phase. The decoder runs on any range of
its frames (a window, :mod:`.onnx_windowed`), continuing the harmonic source's phase from the frame before
the range, so that a window decoded on its own joins the one before it.

Every call of a streamed request watches its :class:`~kokoro_endpoint.scheduling.interrupt.Interrupt`: when
the request is cancelled mid-call, onnxruntime stops at its next node (``RunOptions.terminate``).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.onnx.onnx_split import ASR, ENERGY, F0, PHASE_OFFSET
from kokoro_endpoint.scheduling.interrupt import Interrupt, SynthesisInterrupted

__all__ = ["Encoded", "run_decoder", "run_encoder", "run_model"]


class Encoded(NamedTuple):
    """The encoder's outputs for one segment."""

    #: The aligned text features, ``(1, 512, frames)``.
    asr: npt.NDArray[np.float32]
    #: The F0 curve, ``(1, 2 * frames)``.
    f0: npt.NDArray[np.float32]
    #: The energy curve, ``(1, 2 * frames)``.
    energy: npt.NDArray[np.float32]
    #: Frames per input token (``[pad, *tokens, pad]``), as the model rounded them.
    durations: npt.NDArray[np.float32]
    #: The harmonic source's running phase in cycles, ``(1, 2 * frames, 9)``.
    phase: npt.NDArray[np.float32]

    @property
    def frames(self) -> int:
        """The segment's length in decoder frames."""
        return int(self.asr.shape[2])


def run_model(
    session: Any, outputs: list[str] | None, feeds: dict[str, Any], interrupt: Interrupt | None
) -> Any:
    """One model call; when ``interrupt`` is set meanwhile, onnxruntime stops at its next node (paused: it
    stops, then runs again once resumed, with the same inputs and so the same output).

    Raises:
        SynthesisInterrupted: the interrupt was set before or during the call.
    """
    if interrupt is None:
        return session.run(outputs, feeds)
    import onnxruntime as ort  # type: ignore[import-untyped]

    while True:
        options = ort.RunOptions()
        with interrupt.watching(functools.partial(setattr, options, "terminate", True)):
            pauses = interrupt.pauses
            try:
                return session.run(outputs, feeds, options)
            except Exception:
                if interrupt.is_set:  # onnxruntime's own error says only "terminate flag being set"
                    raise SynthesisInterrupted("the request was cancelled") from None
                if interrupt.pauses == pauses:
                    raise


def run_encoder(encoder: Any, feeds: dict[str, Any], interrupt: Interrupt | None) -> Encoded:
    """The encoder's outputs for one segment's ``tokens``, ``style`` and ``speed``."""
    return Encoded(*run_model(encoder, None, feeds, interrupt))


def run_decoder(
    decoder: Any,
    style: npt.NDArray[np.float32],
    encoded: Encoded,
    lo: int,
    hi: int,
    interrupt: Interrupt | None,
) -> npt.NDArray[np.float32]:
    """Decode frames ``[lo, hi)`` of ``encoded``, continuing the harmonic source's phase from frame ``lo``."""
    phase = encoded.phase
    # The phase runs at the F0 curve's rate (two steps per frame), in cycles.
    offset = phase[:, 2 * lo - 1 : 2 * lo, :] if lo > 0 else np.zeros((1, 1, phase.shape[2]), np.float32)
    feeds = {
        "style": style,
        ASR: encoded.asr[:, :, lo:hi],
        F0: encoded.f0[:, 2 * lo : 2 * hi],
        ENERGY: encoded.energy[:, 2 * lo : 2 * hi],
        PHASE_OFFSET: np.ascontiguousarray(offset, dtype=np.float32),
    }
    (audio,) = run_model(decoder, None, feeds, interrupt)
    return np.asarray(audio, dtype=np.float32).reshape(-1)
