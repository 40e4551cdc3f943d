"""A request's text as the model reads it: normalized for speech, cut into segments, and its words timed.

- :mod:`~kokoro_endpoint.text.normalize`: written English to what people say, with a char map back
  (:mod:`~kokoro_endpoint.text.normalized_text`);
- :mod:`~kokoro_endpoint.text.segmentation`: sentences, clauses and phoneme pieces, what one model call takes;
- :mod:`~kokoro_endpoint.text.timestamps`: a segment's phoneme durations to words of the original text.
"""
