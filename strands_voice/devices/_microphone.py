"""``Microphone``: the machine's input device as mono pcm16, cleaned of the speakers' echo, for ``BidiAgent``.

A ``strands.bidi`` input stream (``start``/``stop``/``__call__``) read through PortAudio (``sounddevice``,
the ``speakers`` extra), at the rate the agent's model asks for (16 kHz for ``VoiceCascade``). Given the
:class:`~strands_voice.Speakers` the agent speaks through, it cancels their sound from what it hears
(WebRTC's AEC3, :class:`~strands_voice.devices.EchoCanceller`) before the model's VAD and recognizer get
it: on a laptop without headphones the agent then does not take its own voice for the caller's.

Example:
    ```python
    with Speakers() as speakers, Microphone(speakers=speakers) as microphone:
        agent = BidiAgent(model=VoiceCascade(model, tts_url))
        await agent.run(inputs=[microphone], outputs=[speakers.output()])
    ```
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import TYPE_CHECKING, Any, Final, Protocol

from strands.bidi.models.model import AudioCapable
from strands.bidi.types.media import AudioDelta
from strands_voice_protocol.errors import ConfigurationError

from strands_voice._closing import ClosedOnExit
from strands_voice.devices._echo import EchoCanceller
from strands_voice.devices._portaudio import block_time, find_device, sounddevice
from strands_voice.devices._timeline import PlayedAudio

if TYPE_CHECKING:
    from strands.bidi.agent.agent import BidiAgent

__all__ = ["EchoSource", "Microphone"]

logger = logging.getLogger(__name__)

#: The rate when neither the caller nor the agent's model names one (what the listener hears).
DEFAULT_RATE: Final = 16000
#: How long :meth:`Microphone.start` waits for the device's first block.
FIRST_BLOCK_S: Final = 5.0


class EchoSource(Protocol):
    """What the microphone needs of :class:`~strands_voice.Speakers`: what they played, when."""

    played: PlayedAudio


class Microphone(ClosedOnExit):
    """An input device as a ``BidiAgent`` input: mono pcm16 blocks, echo cancelled against ``speakers``.

    Args:
        device: An input device's index or (part of its) name; None: the system's default input.
        speakers: The speakers the agent speaks through: what they play is cancelled from what this
            microphone hears. None: nothing to cancel (headphones, or no speakers).
        echo_cancellation: Cancel the speakers' echo (needs ``speakers``); False where headphones keep the
            speakers' sound out of the microphone.
        noise_suppression: Also suppress steady background noise (WebRTC NS).
        sample_rate: The rate to record at; None: the agent's model's input rate (16 kHz without one).
        block_s: The length of the blocks PortAudio hands over.
        latency: PortAudio's input latency (``"low"``, ``"high"`` or seconds).
        max_queued_s: The most audio held for a reader that falls behind (the oldest is dropped beyond).

    Raises:
        MissingDependencyError: sounddevice, the PortAudio library or (for echo cancellation or noise
            suppression) pywebrtc-audio is not installed.
        ConfigurationError: the device does not exist (or there is no default input device).
    """

    def __init__(
        self,
        device: int | str | None = None,
        *,
        speakers: EchoSource | None = None,
        echo_cancellation: bool = True,
        noise_suppression: bool = False,
        sample_rate: int | None = None,
        block_s: float = 0.02,
        latency: str | float = "low",
        max_queued_s: float = 5.0,
    ) -> None:
        if block_s <= 0 or max_queued_s <= 0:
            raise ConfigurationError("block_s and max_queued_s must be positive")
        self._sd = sounddevice("Microphone")
        self.device = find_device(self._sd, device, "input", "Microphone")
        self._device = device
        self.speakers = speakers if echo_cancellation else None
        self.noise_suppression = noise_suppression
        self.sample_rate = sample_rate
        self._block_s = block_s
        self._latency = latency
        self._max_queued_s = max_queued_s
        self._blocks: collections.deque[tuple[bytes, float, bool]] = collections.deque()
        self._arrival = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stream: Any = None
        self.canceller: EchoCanceller | None = None
        #: Blocks dropped because the reader fell more than ``max_queued_s`` behind.
        self.dropped = 0

    # --- strands.bidi InputStream ------------------------------------------------------------------------

    async def start(self, agent: BidiAgent | None = None) -> None:
        """Open the device at the agent's model's input rate (or :attr:`sample_rate`) and start recording;
        returns once the first block has come (a sound server may take a second to deliver it, and what is
        said before then is lost), or after ``FIRST_BLOCK_S`` (logged).

        Raises:
            ConfigurationError: the model wants audio other than mono pcm, or the device cannot record it.
        """
        rate = self.sample_rate or _model_input_rate(agent) or DEFAULT_RATE
        self._loop = asyncio.get_running_loop()
        self.open(rate)
        try:
            await asyncio.wait_for(self._arrival.wait(), FIRST_BLOCK_S)
        except TimeoutError:
            logger.warning("device=<%s> | no sound from the microphone yet", self.device["name"])

    async def stop(self) -> None:
        """Stop recording and release the device."""
        self.close()

    async def __call__(self) -> AudioDelta:
        """The next block of (cleaned) audio, as ``BidiAgent`` sends it to the model."""
        while True:
            while not self._blocks:
                self._arrival.clear()
                await self._arrival.wait()
            pcm, at, missed = self._blocks.popleft()
            cleaned = self.canceller.process(pcm, at, missed) if self.canceller is not None else pcm
            if cleaned:
                return AudioDelta(format="pcm", source={"bytes": cleaned})

    # --- the device --------------------------------------------------------------------------------------

    def open(self, sample_rate: int) -> None:
        """Start recording at ``sample_rate`` (the asyncio reader: call :meth:`start` instead).

        Raises:
            ConfigurationError: the device cannot record mono pcm16 at ``sample_rate``.
        """
        if self._stream is not None:
            return
        self.sample_rate = sample_rate
        if self.speakers is not None or self.noise_suppression:
            played = self.speakers.played if self.speakers is not None else None
            self.canceller = EchoCanceller(played, rate=sample_rate, noise_suppression=self.noise_suppression)
        try:
            stream = self._sd.RawInputStream(
                samplerate=sample_rate,
                channels=1,
                dtype="int16",
                device=self._device,
                latency=self._latency,
                blocksize=round(self._block_s * sample_rate),
                callback=self._callback,
            )
            stream.start()
        except (ValueError, self._sd.PortAudioError) as error:
            raise ConfigurationError(
                f"Microphone: cannot record {sample_rate} Hz mono on {self.device['name']!r}: {error}"
            ) from None
        self._stream = stream
        logger.debug("device=<%s>, rate=<%d> | microphone open", self.device["name"], sample_rate)

    def close(self) -> None:
        """Stop recording and release the device (idempotent)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort()  # at once: a stop drains the device's buffer, which may never empty
            stream.close()

    def _callback(self, indata: Any, frames: int, timing: Any, status: Any) -> None:
        """PortAudio's thread: the block and when its first sample was captured, to the reader's loop."""
        stream = self._stream
        latency = float(stream.latency) if stream is not None else 0.0
        block_s = frames / (self.sample_rate or DEFAULT_RATE)
        at = block_time(timing.inputBufferAdcTime, timing.currentTime, -latency - block_s)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._arrived, bytes(indata), at, bool(status.input_overflow))

    def _arrived(self, pcm: bytes, at: float, missed: bool) -> None:
        """The reader's loop: queue a block (dropping the oldest beyond ``max_queued_s``)."""
        self._blocks.append((pcm, at, missed))
        while len(self._blocks) * self._block_s > self._max_queued_s:
            self._blocks.popleft()
            self.dropped += 1
        self._arrival.set()


def _model_input_rate(agent: BidiAgent | None) -> int | None:
    """The agent's model's input rate (None: no agent, or a model without an audio configuration).

    Raises:
        ConfigurationError: the model wants audio other than mono pcm.
    """
    if agent is None or not isinstance(agent.model, AudioCapable):
        return None
    wanted = agent.model.get_audio_config()["input"]
    if wanted["format"] != "pcm" or wanted["channels"] != 1:
        raise ConfigurationError(f"Microphone records mono pcm; the model wants {dict(wanted)}")
    return int(wanted["sample_rate"])
