"""Voice names and blends (pure functions): ``af_bella``, ``a+b``, ``a(2)+b(1)``.

A blend's style is the weighted mean of its parts' style packs, the way Kokoro-FastAPI mixes voices. The
endpoint still lists only its base voices; any blend of them is accepted wherever a voice is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "KOKORO_DEFAULT_VOICE",
    "MAX_WEIGHT",
    "BlendWeightError",
    "VoicePart",
    "blend_styles",
    "parse_voice",
    "unknown_part",
    "voice_language",
]

#: Kokoro's own default voice: the torch engine's, and the ONNX engine's whenever a voice file provides it.
KOKORO_DEFAULT_VOICE: Final = "af_heart"

_PART: Final = re.compile(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\(\s*([0-9]*\.?[0-9]+)\s*\))?\s*")
#: More parts than this is a typo or abuse, not a voice.
MAX_PARTS: Final = 8
#: The largest weight a part may have: weights are relative, so a larger one only risks overflow (a weight
#: that overflows to infinity made a blend of NaNs, spoken as silence).
MAX_WEIGHT: Final = 1000.0


class BlendWeightError(ValueError):
    """A blend's weight is not a number in (0, ``MAX_WEIGHT``]: the request is invalid, the voices fine."""


@dataclass(frozen=True, slots=True)
class VoicePart:
    """One voice of a blend and its weight (1 when none is written)."""

    name: str
    weight: float = 1.0


def parse_voice(spec: str) -> tuple[VoicePart, ...]:
    """The parts of a voice spec: one voice, ``a+b`` (equal weights) or ``a(2)+b(1)``.

    Raises:
        BlendWeightError: a weight is not above 0 and at most ``MAX_WEIGHT``.
        ValueError: the spec is not a voice or blend (the message says why, for the client).
    """
    pieces = spec.split("+")
    if len(pieces) > MAX_PARTS:
        raise ValueError(f"A blend has at most {MAX_PARTS} voices.")
    parts = []
    for piece in pieces:
        match = _PART.fullmatch(piece)
        if match is None:
            raise ValueError(f"'{spec}' is not a voice or a blend such as 'a+b' or 'a(2)+b(1)'.")
        weight = 1.0 if match.group(2) is None else float(match.group(2))
        if not 0 < weight <= MAX_WEIGHT:  # "1" and 400 zeros reads as inf; 0.000...1 as 0
            raise BlendWeightError(
                f"The weight of '{match.group(1)}' must be above 0 and at most {MAX_WEIGHT:g}."
            )
        parts.append(VoicePart(match.group(1), weight))
    return tuple(parts)


def unknown_part(parts: Sequence[VoicePart], voices: frozenset[str]) -> str | None:
    """The first part the engine has no voice for, or None when it has them all."""
    return next((part.name for part in parts if part.name not in voices), None)


def voice_language(spec: str) -> str:
    """The language letter of a voice spec: its (first) voice's first letter (``jf_alpha`` → ``j``)."""
    return spec.lstrip()[:1].lower()


def blend_styles(
    parts: Sequence[VoicePart], styles: Mapping[str, npt.NDArray[np.float32]]
) -> npt.NDArray[np.float32]:
    """The weighted mean of the parts' style packs (all of one shape).

    Raises:
        ValueError: a part is not in ``styles``.
    """
    total = sum(part.weight for part in parts)
    mixed: npt.NDArray[np.float64] | None = None
    for part in parts:
        style = styles.get(part.name)
        if style is None:
            raise ValueError(f"unknown voice '{part.name}'")
        term = np.asarray(style, dtype=np.float64) * (part.weight / total)
        mixed = term if mixed is None else mixed + term
    if mixed is None:
        raise ValueError("a blend needs at least one voice")
    return mixed.astype(np.float32)
