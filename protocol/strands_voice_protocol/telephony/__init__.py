"""Phone lines (sans-I/O): a carrier's media-stream wire in, typed events out, and the phone's audio.

A carrier is a codec, not a call: :mod:`.twilio` reads and writes Twilio Media Streams (JSON text frames
with an ``event`` field); :mod:`.phone_audio` turns the phone's μ-law at 8 kHz into the call's pcm16 at
16 kHz and back (with :mod:`strands_voice_protocol.audio`'s G.711 and decimator). A new carrier (Telnyx,
Plivo, ...) is a new codec module beside them; the call it feeds stays the same. Import from the modules.
"""

__all__: list[str] = []
