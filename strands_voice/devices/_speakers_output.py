"""``SpeakersOutput``: :class:`~strands_voice.Speakers` as a ``strands.bidi`` output stream.

``BidiAgent.run(outputs=[speakers.output()])`` plays the model's audio (``BidiAudioDeltaEvent``, pcm at
the model's rate) and silences the speakers at once on ``BidiBargeInEvent``. The device starts with the
agent (silence until the first answer), so a :class:`~strands_voice.Microphone`'s echo canceller has the
speakers' timing before the agent first speaks.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import TYPE_CHECKING, Protocol

from strands.bidi.models.model import AudioCapable
from strands.bidi.types.events import BidiAudioDeltaEvent, BidiBargeInEvent, BidiOutputEvent
from strands_voice_protocol.errors import ConfigurationError

if TYPE_CHECKING:
    from strands.bidi.agent.agent import BidiAgent

__all__ = ["Player", "SpeakersOutput"]

logger = logging.getLogger(__name__)


class Player(Protocol):
    """What the output needs of :class:`~strands_voice.Speakers`."""

    def set_format(self, sample_rate: int, channels: int = 1) -> None:
        """Play pcm16 at this rate and channel count from now on."""

    def open(self) -> None:
        """Start the device now."""

    def play(self, pcm: bytes) -> None:
        """Queue pcm16 audio (waits while the buffer is full)."""

    def stop(self) -> None:
        """Drop every sample not yet played."""


class SpeakersOutput:
    """A ``BidiAgent`` output that plays the agent's audio on ``speakers``.

    Args:
        speakers: The speakers (closing them stays their owner's business).
    """

    def __init__(self, speakers: Player) -> None:
        self.speakers = speakers

    async def start(self, agent: BidiAgent | None = None) -> None:
        """Take the model's output format (when it has one) and start the device.

        Raises:
            ConfigurationError: the model speaks something other than pcm, or the device cannot play it.
        """
        if agent is not None and isinstance(agent.model, AudioCapable):
            output = agent.model.get_audio_config()["output"]
            if output["format"] != "pcm":
                raise ConfigurationError(f"Speakers play pcm; the model speaks {output['format']!r}")
            self.speakers.set_format(int(output["sample_rate"]), int(output["channels"]))
        self.speakers.open()

    async def stop(self) -> None:
        """The conversation is over: what is still queued is dropped."""
        self.speakers.stop()

    async def __call__(self, event: BidiOutputEvent) -> None:
        """Play audio; a barge-in silences the speakers at once; other events pass."""
        if isinstance(event, BidiAudioDeltaEvent):
            if event.format != "pcm":
                raise ConfigurationError(f"Speakers play pcm; the model sent {event.format!r}")
            self.speakers.set_format(event.sample_rate, event.channels)
            # play() waits while the speakers' buffer is full: not on the event loop.
            await asyncio.to_thread(self.speakers.play, base64.b64decode(event.audio))
        elif isinstance(event, BidiBargeInEvent):
            self.speakers.stop()
            logger.debug("barge-in | speakers silenced")
