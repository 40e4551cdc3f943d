"""The machine's sound devices (the ``speakers`` extra: sounddevice over PortAudio, pywebrtc-audio):
:class:`Speakers` plays an answer on the sound card, fed from a bounded playback buffer (``_playback``),
and is a ``BidiAgent`` output (:class:`SpeakersOutput`); :class:`Microphone` records for a ``BidiAgent``,
with what the speakers played cancelled from it (:class:`EchoCanceller`, on the speakers' timeline:
:class:`PlayedAudio`)."""

from __future__ import annotations

from strands_voice.devices._echo import EchoCanceller
from strands_voice.devices._microphone import Microphone
from strands_voice.devices._speakers import Speakers
from strands_voice.devices._speakers_output import SpeakersOutput
from strands_voice.devices._timeline import PlayedAudio

__all__ = ["EchoCanceller", "Microphone", "PlayedAudio", "Speakers", "SpeakersOutput"]
