"""The ``strands-voice`` command: the offline demo and the benchmark.

These tools start the whole stack (the Kokoro endpoint, the AgentCore app, the library) in one process,
so they live above all three; the library itself imports none of them.
"""
