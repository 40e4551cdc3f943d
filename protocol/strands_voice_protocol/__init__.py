"""The strands-voice wire contract, shared by the library and the TTS endpoint.

Sans-I/O and free of any agent framework: Leg 1 frames (:mod:`.frames`), Leg 3 Server-Sent Events
(:mod:`.sse`, :mod:`.events`), audio encoders (:mod:`.audio`), the sentence rules (:mod:`.chunker`),
the one exception tree and error codes (:mod:`.errors`) and the wire constants (:mod:`.wire`).
Import from the modules; this package re-exports nothing.
"""
