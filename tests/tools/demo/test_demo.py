"""``strands-voice demo``: the short form of the real run (real endpoint, real app, real HTTP/SSE)."""

from __future__ import annotations

import argparse
import io
import json
import shlex
import socket
import wave
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from strands_voice_tools import demo
from strands_voice_tools.demo import DemoError, Progress, start_demo_stack
from strands_voice_tools.demo import stack as demo_stack
from strands_voice_tools.demo.record import README_BEGIN, README_END, render_readme_figures

# Two short sentences with fast pacing: the short form of the demo.
TEXT = "Here is the first sentence of a short answer. And here is the second one."
FAST_SCRIPTED = f"scripted?text={quote(TEXT)}&first_sentence_s=0.2&total_s=0.8"


def demo_args(tmp_path: Path, **overrides: Any) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args(
        ["--model", FAST_SCRIPTED, "--out", str(tmp_path / "wavs"), "--json", str(tmp_path / "figures.json")]
    )
    for name, value in overrides.items():
        setattr(args, name, value)
    return args


@pytest.fixture
def shared_engine(onnx_engine: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Let the demo serve the session's already loaded ONNX engine instead of loading a second copy."""
    monkeypatch.setattr(demo_stack, "load_tts_engine", lambda: onnx_engine)
    return onnx_engine


def read_wav(path: Path) -> tuple[int, int, int, int]:
    with wave.open(str(path), "rb") as wav:
        return wav.getframerate(), wav.getnchannels(), wav.getsampwidth(), wav.getnframes()


def test_app_demo_runs_both_modes_and_writes_wavs_and_json(
    tmp_path: Path, shared_engine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert demo.run(demo_args(tmp_path)) == 0
    out, err = capsys.readouterr()

    figures = json.loads((tmp_path / "figures.json").read_text(encoding="utf-8"))
    assert set(figures["modes"]) == {"bidi", "batch"}
    assert figures["model"] == {"spec": "scripted", "scripted": True}
    for mode in ("bidi", "batch"):
        m = figures["modes"][mode]
        assert 0 < m["first_text_s"] < m["first_audio_s"] <= m["last_audio_s"] <= m["total_s"]
        assert m["errors"] == []
        assert m["server_agent_end"]["type"] == "agent_end"
        rate, channels, width, frames = read_wav(Path(m["wav"]))
        assert (rate, channels, width) == (24000, 1, 2)
        assert frames / rate == pytest.approx(m["audio_s"], abs=0.01)
        assert m["audio_s"] > 2.0  # two spoken sentences
    assert Path(figures["modes"]["bidi"]["wav"]) == tmp_path / "wavs" / "bidi.wav"
    # The ratio is batch / bidi. (Which mode speaks first is not asserted: on a shared 2-core machine the
    # synthesis speed swings more between the two runs than bidi's head start of about a second.)
    bidi, batch = figures["modes"]["bidi"], figures["modes"]["batch"]
    ratio = batch["first_audio_s"] / bidi["first_audio_s"]
    assert figures["ttfa_ratio_batch_over_bidi"] == pytest.approx(ratio, rel=1e-3)

    # The figures on stdout, the stand-in named plainly; progress on stderr.
    assert "first audio" in out and "batch / bidi" in out
    assert "bidi" in out and "batch" in out and str(tmp_path / "wavs" / "batch.wav") in out
    assert "scripted" in out and "not a real" in out
    assert "not a real model" in err


def test_app_demo_single_mode_recorded_for_the_readme(
    tmp_path: Path, shared_engine: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One mode, with --record: docs/demo.json and the README's block are written from the same run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text(f"# x\n\n{README_BEGIN}\nold figures\n{README_END}\n\nrest\n")
    assert demo.run(demo_args(tmp_path, mode="batch", json=None, record=True)) == 0
    assert [p.name for p in (tmp_path / "wavs").iterdir()] == ["batch.wav"]
    assert "batch / bidi" not in capsys.readouterr().out
    record = json.loads((tmp_path / "docs" / "demo.json").read_text(encoding="utf-8"))
    assert record["command"] == shlex.join(
        ["uv", "run", "strands-voice", "demo", "--record", "--mode", "batch", "--model", FAST_SCRIPTED]
    )
    assert record["machine"]["cpu_cores"] and record["recorded_at"]
    assert set(record["modes"]) == {"batch"} and record["modes"]["batch"]["first_audio_s"] > 0
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert readme == f"# x\n\n{render_readme_figures(record)}\n\nrest\n"
    assert "old figures" not in readme and f"{record['modes']['batch']['first_audio_s']:.2f} s" in readme


def test_app_demo_follow_up_turn_shows_the_memory(
    tmp_path: Path, shared_engine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = demo_args(tmp_path, mode="bidi", follow_up="And how do I cancel it?", prompt="Is it any good?")
    assert demo.run(args) == 0
    figures = json.loads((tmp_path / "figures.json").read_text(encoding="utf-8"))
    follow_up = figures["follow_up"]
    # The follow-up ran in the first question's conversation: the (scripted) agent remembers it.
    assert follow_up["prompt"] == "And how do I cancel it?" and follow_up["errors"] == []
    assert follow_up["text"] == f"Earlier you asked: Is it any good. {TEXT}"
    assert follow_up["first_audio_s"] > 0
    assert "follow-up in the same conversation: And how do I cancel it?" in capsys.readouterr().out


def test_app_demo_bad_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.run(demo_args(tmp_path, model="gpt-5")) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("strands-voice demo: error: unknown model") and "bedrock:<model-id>" in err


def test_app_demo_stack_for_other_tests(onnx_engine: Any) -> None:
    stack = start_demo_stack(FAST_SCRIPTED, engine=onnx_engine)
    try:
        assert stack.app_url.startswith("http://127.0.0.1:") and stack.endpoint_url.startswith(
            "http://127.0.0.1:"
        )
        assert stack.model.is_scripted and stack.voice == onnx_engine.default_voice
        assert httpx.get(f"{stack.app_url}/ping").status_code == 200
        assert httpx.get(f"{stack.endpoint_url}/ping").status_code == 200
    finally:
        stack.stop()
        stack.stop()  # idempotent
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{stack.app_url}/ping")


def test_app_demo_port_in_use_is_one_clear_error(onnx_engine: Any) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(DemoError, match=rf"port {port} on 127.0.0.1 is in use: pick another with --port"):
            start_demo_stack("scripted", app_port=port, engine=onnx_engine)
        with pytest.raises(DemoError, match="--tts-port"):
            start_demo_stack("scripted", endpoint_port=port, engine=onnx_engine)


def test_app_demo_progress_lines() -> None:
    plain = io.StringIO()
    with Progress(plain, animate=False).step("loading"):
        pass
    assert plain.getvalue().splitlines()[0] == "loading ..."
    assert plain.getvalue().splitlines()[1].startswith("✓ loading: done in ")

    spun = io.StringIO()
    with pytest.raises(RuntimeError), Progress(spun, animate=True).step("loading"):
        raise RuntimeError("boom")
    assert spun.getvalue().startswith("\r") and "✗ loading: failed in " in spun.getvalue()
