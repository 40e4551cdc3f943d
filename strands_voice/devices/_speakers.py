"""``Speakers``: hear the agent on the machine's sound card, as the audio arrives.

Give it to the handler as ``on_event`` (it then learns the audio's format from ``audio_start`` and drops
what it holds at once on ``interrupted``), or as ``on_audio`` (24 kHz mono pcm16 unless told otherwise;
:meth:`Speakers.stop` drops what it holds). The audio waits in a bounded buffer
(``_playback.PlaybackBuffer``) that the sound card's own thread (PortAudio, through
``sounddevice``: the ``speakers`` extra) reads as it plays; when the buffer is full the handler's thread
waits for room, for about one chunk's time.

Example:
    ```python
    speakers = Speakers()  # the default output device; Speakers("USB Audio") names one
    voice = VoiceCallbackHandler(url, on_event=speakers)
    Agent(callback_handler=voice)("Tell me about bicycles.")
    voice.wait()  # every chunk delivered
    speakers.wait()  # and played
    ```
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice._closing import ClosedOnExit
from strands_voice.devices._playback import PlaybackBuffer
from strands_voice.devices._portaudio import block_time, find_device, sounddevice
from strands_voice.devices._timeline import PlayedAudio

if TYPE_CHECKING:
    from strands_voice.devices._speakers_output import SpeakersOutput

__all__ = ["Speakers"]

logger = logging.getLogger(__name__)

#: How long a full buffer's writer waits before looking again (it is woken as soon as there is room).
_WAIT_STEP_S: Final = 0.25


class Speakers(ClosedOnExit):
    """Plays the handler's pcm16 audio on an output device as it arrives.

    Args:
        device: An output device's index or (part of its) name; None: the system's default output.
        sample_rate: The audio's rate until an ``audio_start`` event says otherwise (24 kHz: the wire's).
        channels: The audio's channels until an ``audio_start`` event says otherwise.
        max_buffer_s: The most audio held (seconds); a writer waits for room beyond it.
        latency: PortAudio's output latency (``"low"``, ``"high"`` or seconds).

    Raises:
        MissingDependencyError: sounddevice or the PortAudio library is not installed.
        ConfigurationError: the device does not exist (or there is no default output device).
    """

    def __init__(
        self,
        device: int | str | None = None,
        *,
        sample_rate: int = SAMPLE_RATE,
        channels: int = 1,
        max_buffer_s: float = 60.0,
        latency: str | float = "high",
    ) -> None:
        if max_buffer_s <= 0:
            raise ConfigurationError("max_buffer_s must be positive")
        self._sd = sounddevice("Speakers")
        self.device = find_device(self._sd, device, "output", "Speakers")
        self._device = device
        self._latency = latency
        self._max_buffer_s = max_buffer_s
        self._cond = threading.Condition()
        self._stream: Any = None
        self._closed = False
        self._events_seen = False
        self._accepting = True
        self._generation = 0
        self._rate, self._channels = sample_rate, channels
        self._buffer = self._new_buffer()
        #: What was played, when (mono): the reference of a :class:`~strands_voice.Microphone`'s echo
        #: canceller, written as each block leaves for the device.
        self.played = PlayedAudio(sample_rate)

    @property
    def sample_rate(self) -> int:
        """The rate the audio is played at."""
        return self._rate

    @property
    def queued_s(self) -> float:
        """Seconds of audio waiting to be played."""
        with self._cond:
            return self._buffer.queued / (2 * self._channels * self._rate)

    def __call__(self, item: bytes | Mapping[str, Any]) -> None:
        """``on_audio`` (bytes) or ``on_event`` (an event): either way the handler's audio is played.

        Once events arrive, they carry the audio, and bytes given as ``on_audio`` too are not played twice.
        """
        if isinstance(item, bytes | bytearray | memoryview):
            if not self._events_seen:
                self.play(bytes(item))
            return
        self.handle(item)

    def handle(self, event: Mapping[str, Any]) -> None:
        """One handler event: ``audio_start`` sets the format, ``audio_chunk`` plays, ``interrupted``
        stops."""
        self._events_seen = True
        kind = event.get("type")
        if kind == "audio_start":
            audio_format = str(event.get("format", "pcm16"))
            self._accepting = audio_format == "pcm16"
            if not self._accepting:
                logger.error(
                    "format=<%s> | Speakers play pcm16 only: VoiceOptions(format='pcm16')", audio_format
                )
                return
            self.set_format(int(event.get("sample_rate", SAMPLE_RATE)), int(event.get("channels", 1)))
        elif kind == "audio_chunk" and self._accepting:
            self.play(base64.b64decode(event["data"]))
        elif kind == "interrupted":
            self.stop()

    def play(self, pcm: bytes) -> None:
        """Queue pcm16 audio (at the current format) and start the device if it is not playing.

        Waits while the buffer is full; returns without queueing when :meth:`stop` is called meanwhile.

        Raises:
            RuntimeError: the speakers are closed.
            ConfigurationError: the device cannot be opened at this format.
        """
        with self._cond:
            if self._closed:
                raise RuntimeError("the speakers are closed")
            self._ensure_stream()
            generation = self._generation
            while not self._buffer.room_for(len(pcm)):
                self._cond.wait(_WAIT_STEP_S)
                if self._closed or self._generation != generation:
                    return
            self._buffer.push(pcm)

    def stop(self) -> None:
        """Drop every sample not yet played, at once (any thread); later audio plays as it comes."""
        with self._cond:
            dropped = self._buffer.clear()
            self._generation += 1
            self._cond.notify_all()
        logger.debug("dropped_bytes=<%d> | speakers stopped", dropped)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued sample has been handed to the device; returns False on timeout."""
        with self._cond:
            done = self._cond.wait_for(lambda: self._buffer.queued == 0 or self._closed, timeout)
            stream = self._stream
        if done and stream is not None:
            time.sleep(float(stream.latency))  # the device's own buffer plays out
        return bool(done)

    def close(self) -> None:
        """Stop playing and release the device (idempotent)."""
        with self._cond:
            self._closed = True
            stream, self._stream = self._stream, None
            self._buffer.clear()
            self._cond.notify_all()
        if stream is not None:
            stream.abort()  # at once: a stop drains the device's buffer, which may never empty
            stream.close()

    def output(self) -> SpeakersOutput:
        """These speakers as a ``strands.bidi`` output stream.

        ``BidiAgent.run(inputs=[...], outputs=[speakers.output()])`` plays the agent's answers here.
        """
        from strands_voice.devices._speakers_output import SpeakersOutput

        return SpeakersOutput(self)

    def open(self) -> None:
        """Start the device now, playing silence until audio comes (otherwise the first :meth:`play` does).

        An echo canceller then has the speakers' timing before the first answer.

        Raises:
            RuntimeError: the speakers are closed.
            ConfigurationError: the device cannot be opened at this format.
        """
        with self._cond:
            if self._closed:
                raise RuntimeError("the speakers are closed")
            self._ensure_stream()

    def set_format(self, sample_rate: int, channels: int = 1) -> None:
        """Play pcm16 at ``sample_rate`` and ``channels`` from now on (a change closes the open stream,
        and the next :meth:`play` or :meth:`open` opens it again)."""
        with self._cond:
            if (sample_rate, channels) == (self._rate, self._channels):
                return
            stream, self._stream = self._stream, None
            self._rate, self._channels = sample_rate, channels
            self._buffer = self._new_buffer()
            self.played.restart(sample_rate)
            self._generation += 1  # a writer still waiting for room held audio of the old format
            self._cond.notify_all()
        if stream is not None:
            stream.close()

    def _new_buffer(self) -> PlaybackBuffer:
        frame = 2 * self._channels
        return PlaybackBuffer(max(frame, int(self._max_buffer_s * self._rate) * frame), frame)

    def _ensure_stream(self) -> None:
        """Open and start the output stream (called holding the lock)."""
        if self._stream is not None:
            return
        try:
            stream = self._sd.RawOutputStream(
                samplerate=self._rate,
                channels=self._channels,
                dtype="int16",
                device=self._device,
                latency=self._latency,
                callback=self._callback,
            )
            stream.start()
        except (ValueError, self._sd.PortAudioError) as error:
            raise ConfigurationError(
                f"Speakers: cannot play {self._rate} Hz x {self._channels} channel(s) on "
                f"{self.device['name']!r}: {error}"
            ) from None
        self._stream = stream

    def _callback(self, outdata: Any, frames: int, timing: Any, status: Any) -> None:
        """PortAudio's thread: the next ``frames`` frames, silence where nothing is queued; what leaves for
        the device is the echo canceller's reference, at the time it will be heard."""
        with self._cond:
            pulled = self._buffer.pull(len(outdata))
            if pulled.audio_bytes:
                self._cond.notify_all()
            channels, stream = self._channels, self._stream
        outdata[:] = pulled.data
        latency = float(stream.latency) if stream is not None else 0.0
        at = block_time(timing.outputBufferDacTime, timing.currentTime, latency)
        self.played.write(_mono(pulled.data, channels), at, bool(status.output_underflow))


def _mono(pcm: bytes, channels: int) -> bytes:
    """Interleaved pcm16 of ``channels`` channels as one channel (their mean)."""
    if channels == 1:
        return pcm
    frames = np.frombuffer(pcm, dtype="<i2").reshape(-1, channels).astype(np.int32)
    return bytes(frames.mean(axis=1).astype("<i2").tobytes())
