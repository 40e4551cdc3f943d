"""Fixtures for the library tests: a client-side recording wrapper around real transports, a short text,
for the SageMaker transport dummy AWS credentials and a trusted TLS certificate, and a Whisper model
(:mod:`whisper_support`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fake_sagemaker_runtime import DUMMY_KEY_ID, DUMMY_SECRET, TLSFiles
from support.whisper import whisper_model

from strands_voice.transports._base import Frame, FrameTransport

__all__ = ["whisper_model"]

#: Short, so the real Kokoro endpoint answers quickly on a shared CPU; three chunks for the chunker.
#: The first chunk is tiny, so its audio comes quickly even on a loaded machine.
SHORT_TEXT = (
    "Hi there! The Premium plan costs **$24.99** per month. You can cancel online, e.g. from the app."
)


class RecordingTransport:
    """Wraps a real transport and records what the client sent (and can drop the connection once, on cue)."""

    def __init__(self, inner: FrameTransport, *, drop_after_completes: int | None = None) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self.drop_after_completes = drop_after_completes
        self._completes = 0

    async def connect(self) -> None:
        await self.inner.connect()

    async def send(self, message: str) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> Frame:
        frame = await self.inner.receive()
        if isinstance(frame, str) and '"synthesis_complete"' in frame:
            self._completes += 1
            if self.drop_after_completes is not None and self._completes == self.drop_after_completes:
                # Cut the TCP connection under the WebSocket: the next receive sees a dropped connection.
                self.inner._connection.transport.abort()  # type: ignore[attr-defined]
        return frame

    async def close(self) -> None:
        self.closed = True
        await self.inner.close()

    @property
    def synthesized(self) -> list[str]:
        return [m["text"] for m in self.sent if m.get("type") == "synthesize"]


@pytest.fixture
def recording() -> Iterator[Callable[..., Callable[[], RecordingTransport]]]:
    """``recording(url, **kw)`` → a transport factory; the transports it made are in ``factory.made``."""

    def make(url: str, **kwargs: Any) -> Callable[[], RecordingTransport]:
        from strands_voice.transports._websocket import WebSocketTransport

        made: list[RecordingTransport] = []

        def factory() -> RecordingTransport:
            transport = RecordingTransport(WebSocketTransport(url), **kwargs)
            made.append(transport)
            return transport

        factory.made = made  # type: ignore[attr-defined]
        return factory

    yield make


@pytest.fixture
def short_text() -> str:
    """A short answer for the scripted model: three chunks, Markdown, a price and an abbreviation."""
    return SHORT_TEXT


@pytest.fixture(scope="module")
def text_limited_endpoint(onnx_engine: Any) -> Iterator[Any]:
    """A second REAL endpoint (same engine) whose per-request text limit is 45 characters."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    with running_server(create_app(engine=onnx_engine, settings=Settings(max_text_chars=45))) as server:
        yield server


def _isolate_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real AWS configuration leaks in: no profiles, no instance/container roles, no endpoint overrides."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2",
        "AWS_ENDPOINT_URL_TRANSCRIBE_STREAMING",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An environment with no AWS credentials and no region anywhere."""
    _isolate_aws(monkeypatch, tmp_path)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy credentials in the environment (the standard chain's first source) and a region."""
    _isolate_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
    monkeypatch.setenv("AWS_REGION", "us-east-1")


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSFiles]:
    """A throwaway CA and a server certificate for localhost, written to disk."""
    import trustme

    base = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    ca_file, cert_file, key_file = base / "ca.pem", base / "server.pem", base / "server.key"
    ca.cert_pem.write_to_path(str(ca_file))
    server.private_key_pem.write_to_path(str(key_file))
    server.cert_chain_pems[0].write_to_path(str(cert_file))
    for extra in server.cert_chain_pems[1:]:
        with cert_file.open("ab") as fh:
            fh.write(extra.bytes())
    yield TLSFiles(str(ca_file), str(cert_file), str(key_file))
