"""How an answer is spoken: :class:`VoiceOptions`, the one carrier of per-request options.

A handler's defaults are one ``VoiceOptions`` (``VoiceCallbackHandler(url, options=VoiceOptions(...))``);
a request that wants others gives a whole ``VoiceOptions`` too: in ``invocation_state[VOICE_OPTIONS_KEY]``
or as :meth:`~strands_voice.VoiceCallbackHandler.stream`'s ``options``. It replaces the defaults
for that request (build it with :func:`dataclasses.replace` to change one field of the defaults).

:class:`ResponseSettings` is the other half: what every response of one handler shares (how the endpoint
is reached, the timeouts, the per-request text limit), fixed when the handler is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from strands_voice_protocol.audio import AUDIO_FORMATS
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.limits import MAX_TEXT_CHARS

from strands_voice.session import SILENCE_TIMEOUT_S
from strands_voice.transports import CONNECT_TIMEOUT_S, FrameTransport

__all__ = [
    "MODES",
    "VOICE_OPTIONS_KEY",
    "Chunker",
    "Mode",
    "ResponseSettings",
    "TransportFactory",
    "VoiceOptions",
    "request_options",
]

#: ``bidi``: speak each chunk as the chunker releases it; ``batch``: speak the whole answer at the end.
Mode = Literal["bidi", "batch"]

#: The modes, in the order the docs list them.
MODES: Final = ("bidi", "batch")

#: ``invocation_state`` key for a request's options: ``agent("…", invocation_state={VOICE_OPTIONS_KEY:
#: VoiceOptions(mode="batch")})``.
VOICE_OPTIONS_KEY: Final = "voice_options"


class Chunker(Protocol):
    """Cuts a response's streamed text into the chunks spoken one request each (``bidi`` mode).

    :class:`~strands_voice_protocol.chunker.IncrementalSentenceChunker` is the default one.
    """

    def feed(self, fragment: str, /) -> list[str]:
        """Add streamed text; return the chunks it completed (often none)."""
        ...

    def finish(self) -> list[str]:
        """End the text (a model step's end): return every remaining chunk, and start afresh."""
        ...


#: Creates a fresh (unconnected) transport for one session.
TransportFactory = Callable[[], FrameTransport]


@dataclass(frozen=True, slots=True)
class VoiceOptions:
    """How one response is spoken: when, in which voice, and how the audio is encoded.

    Attributes:
        voice: The voice (None: the endpoint's default).
        speed: The speed (None: the endpoint's default, 1.0).
        format: ``pcm16``, ``wav``, ``mp3`` or ``opus`` (see ``strands_voice_protocol.audio.AUDIO_FORMATS``).
        mode: ``bidi`` (speak while the agent writes) or ``batch`` (speak the whole text once written).
        normalize: False reads the text as written (no abbreviation/symbol expansion at the endpoint);
            None: the endpoint's default (on).
        timestamps: True asks for word timings: a ``words`` event per synthesized segment.
        lang: The language letter the endpoint reads the text in (None: the voice's).
        lexicon: ``{"word": "phonemes"}`` (Kokoro's phoneme alphabet) for every sentence.
    """

    voice: str | None = None
    speed: float | None = None
    format: str = "pcm16"
    mode: Mode = "bidi"
    normalize: bool | None = None
    timestamps: bool = False
    lang: str | None = None
    lexicon: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigurationError(f"unknown mode {self.mode!r}; expected 'bidi' or 'batch'")
        if self.format not in AUDIO_FORMATS:
            raise ConfigurationError(f"unknown audio format {self.format!r}; expected one of {AUDIO_FORMATS}")


def request_options(requested: object, defaults: VoiceOptions) -> VoiceOptions:
    """The options of one request: ``requested`` when given, else the handler's ``defaults``.

    Raises:
        ConfigurationError: ``requested`` is neither None nor a :class:`VoiceOptions`.
    """
    if requested is None:
        return defaults
    if isinstance(requested, VoiceOptions):
        return requested
    raise ConfigurationError(
        f"a request's options must be a VoiceOptions, not {type(requested).__name__} (invocation_state"
        f"[{VOICE_OPTIONS_KEY!r}] or stream(options=...))"
    )


@dataclass(frozen=True, slots=True)
class ResponseSettings:
    """What every response of one handler shares.

    Attributes:
        transport_factory: Creates each TTS session's transport.
        chunker_factory: Creates the ``bidi`` chunker of each response.
        connect_timeout: Seconds opening a TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        max_request_chars: ``batch`` mode's per-request text limit (the endpoint's ``max_text_chars``).
    """

    transport_factory: TransportFactory
    chunker_factory: Callable[[], Chunker] = field(default=IncrementalSentenceChunker)
    connect_timeout: float = CONNECT_TIMEOUT_S
    silence_timeout: float = SILENCE_TIMEOUT_S
    max_request_chars: int = MAX_TEXT_CHARS
