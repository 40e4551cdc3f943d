"""The strands-voice wire contract, shared by the library and the TTS endpoint.

Sans-I/O and free of any agent framework: Leg 1 frames (:mod:`.frames`), Leg 3 Server-Sent Events
(:mod:`.sse`, :mod:`.events`, the client :mod:`.leg3_client`) and the endpoint's SSE transport
(:mod:`.synthesis_events`), audio encoders (:mod:`.audio`), the sentence rules (:mod:`.chunker`,
:mod:`.sentences`, :mod:`.speech_text`, :mod:`.punctuation`), the one exception tree and error codes
(:mod:`.errors`), the limits both ends share (:mod:`.limits`) and the wire constants (:mod:`.wire`). The
asyncio helpers of the I/O layer live apart, in :mod:`.aio`, which no sans-I/O module imports.
Import from the modules; this package re-exports nothing.
"""
