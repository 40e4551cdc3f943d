"""The machine's sound devices: the microphone, the speakers as a ``BidiAgent`` output, and the echo
cancellation between them (the ``speakers`` extra: sounddevice, pywebrtc-audio)."""

from __future__ import annotations

from strands_voice.devices.echo import EchoCanceller
from strands_voice.devices.microphone import Microphone
from strands_voice.devices.speakers_output import SpeakersOutput
from strands_voice.devices.timeline import PlayedAudio

__all__ = ["EchoCanceller", "Microphone", "PlayedAudio", "SpeakersOutput"]
