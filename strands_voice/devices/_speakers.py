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
from typing import Any, Final

from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice._closing import ClosedOnExit
from strands_voice.devices._playback import PlaybackBuffer

__all__ = ["Speakers"]

logger = logging.getLogger(__name__)

#: How long a full buffer's writer waits before looking again (it is woken as soon as there is room).
_WAIT_STEP_S: Final = 0.25


def _sounddevice() -> Any:
    """The ``sounddevice`` module, or an error naming what to install."""
    try:
        import sounddevice
    except ImportError:
        raise MissingDependencyError(
            "Speakers needs sounddevice: pip install 'strands-voice[speakers]' (in this repository: "
            "uv sync --group speakers)"
        ) from None
    except OSError as error:  # sounddevice loads the PortAudio library when imported
        raise MissingDependencyError(
            f"Speakers needs the PortAudio library ({error}): apt-get install libportaudio2 on Debian or "
            "Ubuntu, brew install portaudio on macOS"
        ) from None
    return sounddevice


def _output_device(sd: Any, device: int | str | None) -> dict[str, Any]:
    """The PortAudio output device ``device`` names (None: the default one).

    Raises:
        ConfigurationError: no such output device (the message lists the ones there are).
    """
    try:
        info = sd.query_devices(device, "output") if device is not None else sd.query_devices(kind="output")
    except (ValueError, sd.PortAudioError) as error:
        outputs = [str(d["name"]) for d in sd.query_devices() if int(d["max_output_channels"]) > 0]
        wanted = "no default output device" if device is None else f"no output device {device!r}"
        raise ConfigurationError(
            f"Speakers: {wanted} ({error}); output devices here: {', '.join(outputs) or 'none'}"
        ) from None
    return dict(info)


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
        self._sd = _sounddevice()
        self.device = _output_device(self._sd, device)
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
            self._format(int(event.get("sample_rate", SAMPLE_RATE)), int(event.get("channels", 1)))
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
            stream.stop()
            stream.close()

    def _format(self, rate: int, channels: int) -> None:
        """Play at ``rate`` and ``channels`` from now on (a change closes the open stream)."""
        with self._cond:
            if (rate, channels) == (self._rate, self._channels):
                return
            stream, self._stream = self._stream, None
            self._rate, self._channels = rate, channels
            self._buffer = self._new_buffer()
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
        """PortAudio's thread: the next ``frames`` frames, silence where nothing is queued."""
        with self._cond:
            pulled = self._buffer.pull(len(outdata))
            if pulled.audio_bytes:
                self._cond.notify_all()
        outdata[:] = pulled.data
