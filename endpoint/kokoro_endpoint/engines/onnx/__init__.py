"""Kokoro-82M's int8 ONNX export on onnxruntime: the offline engine, its graphs, sessions and voice packs.

- :mod:`~kokoro_endpoint.engines.onnx.onnx_engine`: the engine;
- :mod:`~kokoro_endpoint.engines.onnx.onnx_split` and :mod:`~kokoro_endpoint.engines.onnx.onnx_windowed`: the
  graph split into an encoder and a decoder, decoded window by window
  (:mod:`~kokoro_endpoint.engines.onnx.windows`);
- :mod:`~kokoro_endpoint.engines.onnx.cpu_path`: the int8 path this CPU takes.
"""
