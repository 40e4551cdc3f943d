"""The snapshot-copy custom resource: copies the pinned files, verifies them, and never re-uploads."""

from __future__ import annotations

import hashlib
import io
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from strands_voice_infra.lambda_src import hf_snapshot_to_s3 as handler_module

REVISION = "f3ff3571791e39611d31c381e3a41a3af07b4987"
BUCKET = "weights"
PREFIX = f"models/kokoro-82m/{REVISION}/"


def _git_oid(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


class FakeResponse(io.BytesIO):
    """What urlopen returns: a readable, closable body with headers."""

    def __init__(self, body: bytes, headers: dict[str, str] | None = None, status: int = 200) -> None:
        super().__init__(body)
        self.headers = headers or {}
        self.status = status


class FakeHub:
    """A Hugging Face stand-in (paginated tree API, resolve URLs) that records CloudFormation replies too."""

    def __init__(self, files: dict[str, bytes], lfs: set[str]) -> None:
        self.files = files
        self.lfs = lfs
        self.downloads: list[str] = []
        self.responses: list[dict[str, Any]] = []
        self.corrupt: set[str] = set()

    def entry(self, path: str) -> dict[str, Any]:
        content = self.files[path]
        item: dict[str, Any] = {"type": "file", "path": path, "size": len(content), "oid": _git_oid(content)}
        if path in self.lfs:
            item["lfs"] = {
                "oid": hashlib.sha256(content).hexdigest(),
                "size": len(content),
                "pointerSize": 134,
            }
        return item

    def __call__(self, request: urllib.request.Request, timeout: float = 0) -> FakeResponse:
        url = request.full_url
        if url.startswith("https://cfn.example/"):
            self.responses.append(json.loads(request.data))  # type: ignore[arg-type]
            return FakeResponse(b"")
        tree = f"https://huggingface.co/api/models/hexgrad/Kokoro-82M/tree/{REVISION}?recursive=true"
        paths = sorted(self.files)
        if url == tree:  # page 1: directories and the first half, with a Link to page 2
            half = len(paths) // 2
            entries = [{"type": "directory", "path": "voices", "oid": "x", "size": 0}]
            entries += [self.entry(p) for p in paths[:half]]
            return FakeResponse(
                json.dumps(entries).encode(), {"Link": '<https://huggingface.co/page2>; rel="next"'}
            )
        if url == "https://huggingface.co/page2":
            return FakeResponse(json.dumps([self.entry(p) for p in paths[len(paths) // 2 :]]).encode())
        prefix = f"https://huggingface.co/hexgrad/Kokoro-82M/resolve/{REVISION}/"
        if url.startswith(prefix):
            path = url.removeprefix(prefix)
            self.downloads.append(path)
            content = self.files[path]
            return FakeResponse(content[:-1] + b"X" if path in self.corrupt else content)
        raise urllib.error.HTTPError(url, 404, "not found", {}, None)  # type: ignore[arg-type]


@pytest.fixture
def hub() -> FakeHub:
    files = {
        "config.json": b'{"n_token": 178}',
        "kokoro-v1_0.pth": b"\x80weights" * 1000,
        "voices/af_heart.pt": b"voice-a" * 100,
        "voices/am_adam.pt": b"voice-b" * 100,
        "README.md": b"not copied",
        "samples/x.wav": b"not copied either",
    }
    return FakeHub(files, lfs={"kokoro-v1_0.pth", "voices/af_heart.pt", "voices/am_adam.pt"})


@pytest.fixture
def s3(aws_env: None) -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _sync(s3: Any, hub: FakeHub, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "bucket": BUCKET,
        "prefix": PREFIX,
        "repo_id": "hexgrad/Kokoro-82M",
        "revision": REVISION,
        "include": ["config.json", "kokoro-v1_0.pth", "voices/*.pt"],
        "expected_sha256": {"kokoro-v1_0.pth": hashlib.sha256(hub.files["kokoro-v1_0.pth"]).hexdigest()},
        "opener": hub,
        **overrides,
    }
    return handler_module.sync_snapshot(s3, **kwargs)


def _keys(s3: Any) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def test_copies_only_the_included_files(s3: Any, hub: FakeHub) -> None:
    data = _sync(s3, hub)
    assert data == {
        "Files": 4,
        "Uploaded": 4,
        "Skipped": 0,
        "BytesUploaded": sum(len(hub.files[p]) for p in hub.files if p.endswith((".json", ".pth", ".pt"))),
        "S3Uri": f"s3://{BUCKET}/{PREFIX}",
    }
    assert _keys(s3) == [
        PREFIX + p for p in ["config.json", "kokoro-v1_0.pth", "voices/af_heart.pt", "voices/am_adam.pt"]
    ]
    body = s3.get_object(Bucket=BUCKET, Key=PREFIX + "kokoro-v1_0.pth")
    assert body["Body"].read() == hub.files["kokoro-v1_0.pth"]
    assert body["Metadata"]["hf-revision"] == REVISION


def test_rerun_uploads_nothing(s3: Any, hub: FakeHub) -> None:
    _sync(s3, hub)
    hub.downloads.clear()
    data = _sync(s3, hub)
    assert (data["Uploaded"], data["Skipped"], hub.downloads) == (0, 4, [])


def test_rerun_replaces_only_what_changed(s3: Any, hub: FakeHub) -> None:
    _sync(s3, hub)
    s3.put_object(Bucket=BUCKET, Key=PREFIX + "voices/am_adam.pt", Body=b"tampered")
    s3.delete_object(Bucket=BUCKET, Key=PREFIX + "config.json")
    hub.downloads.clear()
    data = _sync(s3, hub)
    assert sorted(hub.downloads) == ["config.json", "voices/am_adam.pt"]
    assert data["Uploaded"] == 2


def test_corrupt_download_is_deleted_and_fails(s3: Any, hub: FakeHub) -> None:
    hub.corrupt.add("voices/af_heart.pt")
    with pytest.raises(handler_module.IntegrityError, match="af_heart"):
        _sync(s3, hub)
    assert PREFIX + "voices/af_heart.pt" not in _keys(s3)


def test_a_pin_that_disagrees_with_the_hub_fails_before_copying(s3: Any, hub: FakeHub) -> None:
    with pytest.raises(handler_module.IntegrityError, match="pinned"):
        _sync(s3, hub, expected_sha256={"kokoro-v1_0.pth": "0" * 64})
    assert hub.downloads == []


def test_a_pattern_matching_nothing_fails(s3: Any, hub: FakeHub) -> None:
    with pytest.raises(FileNotFoundError, match=r"\*\.onnx"):
        _sync(s3, hub, include=["config.json", "*.onnx"])


def test_stops_before_the_deadline(s3: Any, hub: FakeHub) -> None:
    with pytest.raises(TimeoutError, match="deploy again"):
        _sync(s3, hub, remaining_ms=lambda: 1000)


def _event(request_type: str) -> dict[str, Any]:
    return {
        "RequestType": request_type,
        "ResponseURL": "https://cfn.example/response",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/SpeechModelCache/1",
        "RequestId": "req-1",
        "LogicalResourceId": "SnapshotKokoro82m",
        "PhysicalResourceId": f"s3://{BUCKET}/{PREFIX}",
        "ResourceProperties": {
            "Bucket": BUCKET,
            "Prefix": PREFIX,
            "RepoId": "hexgrad/Kokoro-82M",
            "Revision": REVISION,
            "Include": ["config.json", "kokoro-v1_0.pth", "voices/*.pt"],
            "ExpectedSha256": {},
        },
    }


class _Context:
    log_stream_name = "2026/01/01/[$LATEST]abc"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 600_000


def test_handler_reports_success_with_the_s3_uri(s3: Any, hub: FakeHub) -> None:
    handler_module.handler(_event("Create"), _Context(), s3=s3, opener=hub)
    (reply,) = hub.responses
    assert reply["Status"] == "SUCCESS"
    assert reply["Data"]["S3Uri"] == f"s3://{BUCKET}/{PREFIX}"
    assert reply["PhysicalResourceId"] == f"s3://{BUCKET}/{PREFIX}"
    assert (reply["RequestId"], reply["LogicalResourceId"]) == ("req-1", "SnapshotKokoro82m")


def test_handler_reports_failure_instead_of_hanging(s3: Any, hub: FakeHub) -> None:
    event = _event("Update")
    event["ResourceProperties"]["Include"] = ["missing/*"]
    handler_module.handler(event, _Context(), s3=s3, opener=hub)
    (reply,) = hub.responses
    assert reply["Status"] == "FAILED"
    assert "missing/*" in reply["Reason"]


def test_handler_delete_keeps_the_weights(s3: Any, hub: FakeHub) -> None:
    _sync(s3, hub)
    handler_module.handler(_event("Delete"), _Context(), s3=s3, opener=hub)
    (reply,) = hub.responses
    assert reply["Status"] == "SUCCESS"
    assert len(_keys(s3)) == 4
