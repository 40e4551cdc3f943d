"""The asyncio adapter layer of the protocol package: helpers for the code that does the I/O.

Everything else in ``strands_voice_protocol`` is sans-I/O and never imports this subpackage (the way
``websockets.asyncio`` sits beside the pure protocol of python-websockets); the library, the endpoint and
the example app import it where they run their tasks. Import from the modules (:mod:`.tasks`).
"""

__all__: list[str] = []
