"""Speech engines behind one interface, and the text-to-audio pipeline over them.

- :mod:`~kokoro_endpoint.engines.interface`: the ``Engine`` protocols;
- :mod:`~kokoro_endpoint.engines.loader`: ``load_engine`` (onnx, torch or auto);
- :mod:`~kokoro_endpoint.engines.pipeline`: ``synthesize_segments``, a request's text to its audio;
- :mod:`~kokoro_endpoint.engines.onnx.onnx_engine` and :mod:`~kokoro_endpoint.engines.torch_engine`: the two
  engines (Kokoro-82M int8 on onnxruntime, full precision on PyTorch).
"""
