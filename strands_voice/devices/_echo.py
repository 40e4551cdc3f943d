"""Echo cancellation: the microphone's audio cleaned of what the speakers played (WebRTC's AEC3).

On a laptop without headphones the microphone hears the speakers: without this, the agent's own voice is
the caller's speech to the VAD and to the recognizer. :class:`EchoCanceller` takes the microphone's blocks
with their capture times, cuts them into the 10 ms frames WebRTC works in, and gives each frame, as the
reference, what the speakers played at that moment (:class:`~strands_voice.devices.PlayedAudio`,
written by the speakers' output callback as each block leaves for the device, so it is there long before
it is heard) plus ``headroom_s``: the canceller then always gets a sound before its echo, ``headroom_s``
ahead, even when the two devices' clocks are off by a little; its own delay estimator finds the rest (AEC3
follows delays of up to about half a second). When the echo path moves while the speakers sound (either
clock jumped: the process stalled, a device under- or overran; or a frame had to go without its
reference), AEC3 adapted to the old path lets the echo through for seconds: it starts afresh (a reset
AEC3 suppresses hard until it has found the path), and for ``settle_s`` its output is silence (the
caller's first words in that moment are lost, the agent's own voice is not taken for theirs). Sans-I/O:
blocks and times in, cleaned audio out; the adapters (:class:`~strands_voice.devices.Microphone`,
:class:`~strands_voice.Speakers`) do the devices.

Needs ``pywebrtc-audio`` (the ``speakers`` extra).
"""

from __future__ import annotations

import logging
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from strands_voice.devices._portaudio import import_devices_extra
from strands_voice.devices._timeline import PlayedAudio, Timeline

__all__ = ["HEADROOM_S", "MAX_WAIT_S", "SETTLE_S", "EchoCanceller"]

logger = logging.getLogger(__name__)

#: The reference given with a microphone frame is what was played this much after the frame's capture: a
#: little timing error in either device's clock then still leaves each echo after its sound (AEC3 cannot
#: cancel an echo that comes before its reference).
HEADROOM_S: Final = 0.05
#: The longest a microphone frame waits for the speakers' callback to write its reference.
MAX_WAIT_S: Final = 0.2
#: How long the cleaned audio is silenced after the echo path moved while the speakers sounded.
SETTLE_S: Final = 0.5
_SOUNDING_S: Final = 0.5  # the speakers sound if this much of what they played before a frame has sound
_SOUND_PEAK: Final = 100  # a peak above this (of 32767) is sound (about -50 dBFS)
_FRAME_S: Final = 0.01  # WebRTC's frame
_STOPPED_S: Final = 1.0  # speakers whose written sound ends this long before a frame's reference are off


class EchoCanceller:
    """Removes the speakers' sound from the microphone's audio, frame by frame (one reader only).

    Args:
        played: What the speakers played (their output callback writes it); None: no echo to cancel
            (noise suppression alone).
        rate: The microphone's sample rate (16 kHz: what the listener hears).
        noise_suppression: Also suppress steady background noise (WebRTC NS, moderate level).
        headroom_s: How far ahead of each frame's capture time its reference is taken (the delay AEC3
            starts from).
        max_wait_s: The longest a frame waits for its reference (in the microphone's time).
        settle_s: How long the cleaned audio is silenced after the echo path moved while the speakers
            sounded.
        processor: A processor with ``process(near, far) -> cleaned`` over int16 frames and ``reset()``
            (default: WebRTC's ``AudioProcessor`` with AEC3 and the high-pass filter).

    Raises:
        MissingDependencyError: pywebrtc-audio is not installed.
    """

    def __init__(
        self,
        played: PlayedAudio | None,
        *,
        rate: int = 16000,
        noise_suppression: bool = False,
        headroom_s: float = HEADROOM_S,
        max_wait_s: float = MAX_WAIT_S,
        settle_s: float = SETTLE_S,
        processor: Any = None,
    ) -> None:
        self.played = played
        self.rate = rate
        self.headroom_s = headroom_s
        self.max_wait_s = max_wait_s
        self.timeline = Timeline(rate)
        self._frame = round(_FRAME_S * rate)
        self._pending = np.zeros(0, dtype=np.int16)
        self._pending_start = 0  # the timeline index of the first pending sample
        if processor is None:
            webrtc = import_devices_extra("pywebrtc_audio", "Echo cancellation")
            processor = webrtc.AudioProcessor(
                sample_rate=rate,
                num_channels=1,
                echo_cancellation=played is not None,
                noise_suppression=noise_suppression,
                high_pass_filter=True,
                stream_delay_ms=round(headroom_s * 1000),
            )
        self._processor = processor
        self._settle = round(settle_s * rate)
        self._settled_from = 0  # the timeline index from which the output is no longer silenced
        self._path = self._echo_path()
        #: Frames cleaned so far, those of them cleaned before their whole reference was written, and those
        #: silenced while AEC3 found a moved echo path again.
        self.frames = 0
        self.unreferenced = 0
        self.silenced = 0

    def process(self, pcm16: bytes, at: float, missed: bool = False) -> bytes:
        """A block from the microphone (mono pcm16 at :attr:`rate`; its first sample captured at ``at``;
        ``missed``: the device reported an overflow before it): the 10 ms frames cleaned so far, in order.

        A frame waits (for a later block) while it is not whole, and while its reference has not been
        written yet: the speakers' callback runs when the system gets to it, sometimes after the
        microphone's, and a frame cancelled against missing sound would let its echo through. It waits at
        most ``max_wait_s`` of the microphone's own time (the speakers may have stopped).
        """
        block = np.frombuffer(pcm16, dtype="<i2")
        # The samples still waiting come just before this block (wherever the timeline put it).
        self._pending_start = self.timeline.place(len(block), at, missed) - len(self._pending)
        self._pending = np.concatenate([self._pending, block])
        cleaned, done = [], 0
        while len(self._pending) - done >= self._frame and self._ready(self._pending_start + done):
            cleaned.append(self._clean(self._pending[done : done + self._frame], self._pending_start + done))
            done += self._frame
        self._pending = self._pending[done:]
        self._pending_start += done
        return b"".join(cleaned)

    def _reference_time(self, index: int) -> float:
        """The time of the sound given as the reference of the frame at ``index``: a little AFTER its capture
        (that sound's echo comes after it, always)."""
        return self.timeline.time_of(index) + self.headroom_s

    def _ready(self, index: int) -> bool:
        """Whether the frame at ``index`` can be cleaned now (its reference is there, or is not coming)."""
        if self.played is None:
            return True
        written_until = self.played.written_until()
        if written_until is None:
            return True  # the speakers have not played yet
        needed = self._reference_time(index) + _FRAME_S
        if needed - written_until > _STOPPED_S:
            return True  # the speakers stopped long ago (closed, or a new format not yet playing)
        if written_until >= needed:
            return True
        waited = self.timeline.time_of(self.timeline.end) - self.timeline.time_of(index)
        if waited >= self.max_wait_s:
            self.unreferenced += 1
            self._path = None  # cancelled against missing sound: as good as a moved path
            return True
        return False

    def _echo_path(self) -> tuple[int, ...] | None:
        """Where the two clocks stand: it changes when either jumps (a new speakers' stream included)."""
        if self.played is None:
            return None
        played = self.played.timeline
        return (id(played), played.gaps, played.restarts, self.timeline.gaps, self.timeline.restarts)

    def _silenced(self, index: int) -> bool:
        """Whether the frame at ``index`` is silenced (the echo path moved while the speakers sounded)."""
        if self.played is None:
            return False
        path = self._echo_path()
        if path != self._path:
            self._path = path
            at = self._reference_time(index) + _FRAME_S
            recent = self.played.read(at - _SOUNDING_S, round(_SOUNDING_S * self.rate), self.rate)
            if len(recent) and float(np.max(np.abs(recent))) > _SOUND_PEAK:
                # AEC3 fresh from a reset suppresses hard until it finds the path; one adapted to the old
                # path lets the echo through for seconds.
                self._processor.reset()
                self._settled_from = index + self._settle
        return index < self._settled_from

    def _clean(self, near: npt.NDArray[np.int16], index: int) -> bytes:
        far16 = None
        if self.played is not None:
            far = self.played.read(self._reference_time(index), self._frame, self.rate)
            far16 = np.clip(np.rint(far), -32768, 32767).astype(np.int16)
        self.frames += 1
        silenced = self._silenced(index)
        cleaned = np.asarray(self._processor.process(near, far16), dtype="<i2")  # AEC3 adapts either way
        if silenced:
            self.silenced += 1
            return bytes(2 * len(near))
        return bytes(cleaned.tobytes())
