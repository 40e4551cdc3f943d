"""Endpoint test fixtures: a Whisper model for transcription (:mod:`whisper_support`)."""

from __future__ import annotations

from support.whisper import whisper_model

__all__ = ["whisper_model"]
