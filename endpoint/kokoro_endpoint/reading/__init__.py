"""How the endpoint reads a language: which language a request is in, and its grapheme-to-phoneme readers.

- :mod:`~kokoro_endpoint.reading.languages`: the request's language and the readers installed for each;
- :mod:`~kokoro_endpoint.reading.g2p`, :mod:`~kokoro_endpoint.reading.g2p_ja`,
  :mod:`~kokoro_endpoint.reading.g2p_espeak`, :mod:`~kokoro_endpoint.reading.g2p_zh`: the readers;
- :mod:`~kokoro_endpoint.reading.lexicon`: pronunciation lexicons, per request or per deployment.
"""
