"""Who synthesizes next: the scheduler's steps on a few threads, admission, playback clocks and interrupts.

- :mod:`~kokoro_endpoint.scheduling.scheduler`: the most urgent step first, on a small pool of threads;
- :mod:`~kokoro_endpoint.scheduling.segment_stream`: one request's steps as the event loop sees them;
- :mod:`~kokoro_endpoint.scheduling.admission` and :mod:`~kokoro_endpoint.scheduling.calibration`: whether one
  more listener can be kept fed, from the engine's measured rate;
- :mod:`~kokoro_endpoint.scheduling.capacity`: concurrent sessions against a limit;
- :mod:`~kokoro_endpoint.scheduling.interrupt`: stopping a request's synthesis.
"""
