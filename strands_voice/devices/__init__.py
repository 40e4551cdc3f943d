"""The machine's sound devices: :class:`Speakers` plays an answer on the sound card (PortAudio through
sounddevice, the ``speakers`` extra), fed from a bounded playback buffer (``_playback``)."""

from __future__ import annotations

from strands_voice.devices._speakers import Speakers

__all__ = ["Speakers"]
