"""CloudFormation custom resource: copy a pinned Hugging Face snapshot into S3, once.

Runs in Lambda (Python standard library and boto3 only). On Create and Update it lists the repository at
the pinned revision, keeps the files matching the include patterns, and streams each one from the hub
into ``s3://<bucket>/<prefix><path>``, hashing on the way and checking the hub's own hash (LFS SHA-256,
or the git blob id of small files) plus any extra pinned SHA-256. A file already in S3 with the same
source hash is skipped, so a re-run uploads only what changed or is missing, and a run cut short by the
Lambda deadline resumes where it stopped on the next deploy. Delete does nothing: the weights stay in
the retained bucket.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

__all__ = ["HubFile", "IntegrityError", "handler", "list_hub_files", "send_response", "sync_snapshot"]

logger = logging.getLogger()
logger.setLevel(logging.INFO)

HUB_ENDPOINT = "https://huggingface.co"
USER_AGENT = "strands-voice-model-cache/1 (+https://github.com/strands-agents)"
_READ_TIMEOUT_S = 60
_SAFETY_MARGIN_MS = 90_000
_PART_BYTES = 64 * 1024 * 1024

Opener = Callable[..., Any]


class IntegrityError(RuntimeError):
    """A downloaded file does not hash to what the hub (or the pin) says."""


class _S3(Protocol):
    def head_object(self, **kwargs: Any) -> dict[str, Any]: ...
    def upload_fileobj(self, Fileobj: Any, Bucket: str, Key: str, **kwargs: Any) -> None: ...
    def delete_object(self, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class HubFile:
    """One file of the repository at the pinned revision.

    Attributes:
        path: Path in the repository, e.g. ``voices/af_heart.pt``.
        size: Size in bytes.
        git_oid: Git blob id (SHA-1 of the blob); identifies small (non-LFS) files.
        sha256: SHA-256 of the content for LFS files, else ``None``.
    """

    path: str
    size: int
    git_oid: str
    sha256: str | None

    @property
    def source_id(self) -> str:
        """What identifies this content on the hub: the LFS SHA-256, else the git blob id."""
        return self.sha256 or self.git_oid


class _HashingReader:
    """A read-only file object over an HTTP response that hashes what passes through."""

    def __init__(self, raw: BinaryIO, size: int) -> None:
        self._raw = raw
        self.sha256 = hashlib.sha256()
        self.git = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
        self.count = 0

    def read(self, amount: int = -1) -> bytes:
        data = self._raw.read(amount if amount is not None and amount >= 0 else -1)
        self.sha256.update(data)
        self.git.update(data)
        self.count += len(data)
        return data


def _get(url: str, opener: Opener, attempts: int = 3) -> Any:
    """Open ``url`` (following redirects), retrying transient failures."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    for attempt in range(1, attempts + 1):
        try:
            return opener(request, timeout=_READ_TIMEOUT_S)
        except OSError as exc:  # URLError and timeouts are OSErrors; HTTP 4xx/5xx is HTTPError(URLError)
            status = getattr(exc, "code", None)
            if attempt == attempts or (status is not None and 400 <= status < 500 and status != 429):
                raise
            logger.warning("url=<%s>, attempt=<%d>, error=<%s> | retrying", url, attempt, exc)
            time.sleep(2**attempt)
    raise AssertionError("unreachable")


def list_hub_files(
    repo_id: str, revision: str, *, opener: Opener, endpoint: str = HUB_ENDPOINT
) -> list[HubFile]:
    """Every file of ``repo_id`` at ``revision``, following the tree API's pagination.

    Args:
        repo_id: e.g. ``hexgrad/Kokoro-82M``.
        revision: A commit id.
        opener: ``urllib.request.urlopen`` or a stand-in.
        endpoint: The hub's base URL.

    Returns:
        The files (directories left out).
    """
    quoted_repo = urllib.parse.quote(repo_id, safe="/")
    url: str | None = (
        f"{endpoint}/api/models/{quoted_repo}/tree/{urllib.parse.quote(revision, safe='')}?recursive=true"
    )
    files: list[HubFile] = []
    while url:
        with _get(url, opener) as response:
            entries = json.loads(response.read())
            link = response.headers.get("Link", "") if response.headers else ""
        for entry in entries:
            if entry.get("type") != "file":
                continue
            lfs = entry.get("lfs") or {}
            files.append(
                HubFile(
                    path=entry["path"], size=int(entry["size"]), git_oid=entry["oid"], sha256=lfs.get("oid")
                )
            )
        match = re.search(r'<([^>]+)>;\s*rel="next"', link or "")
        url = match.group(1) if match else None
    return files


def _select(files: Iterable[HubFile], include: Iterable[str]) -> list[HubFile]:
    patterns = list(include)
    selected = [f for f in files if any(fnmatch.fnmatchcase(f.path, pattern) for pattern in patterns)]
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(f.path, pattern) for f in selected):
            raise FileNotFoundError(f"no file in the repository matches {pattern!r}")
    return sorted(selected, key=lambda f: f.path)


def _already_there(s3: _S3, bucket: str, key: str, hub_file: HubFile) -> bool:
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except Exception as exc:  # botocore ClientError 404 (or 403 without ListBucket)
        if getattr(exc, "response", {}).get("Error", {}).get("Code") in {
            "404",
            "NoSuchKey",
            "NotFound",
            "403",
        }:
            return False
        raise
    metadata = {k.lower(): v for k, v in head.get("Metadata", {}).items()}
    return (
        metadata.get("source-id") == hub_file.source_id
        and int(head.get("ContentLength", -1)) == hub_file.size
    )


def sync_snapshot(
    s3: _S3,
    *,
    bucket: str,
    prefix: str,
    repo_id: str,
    revision: str,
    include: Iterable[str],
    expected_sha256: Mapping[str, str] | None = None,
    opener: Opener = urllib.request.urlopen,
    endpoint: str = HUB_ENDPOINT,
    remaining_ms: Callable[[], int] = lambda: 10**9,
) -> dict[str, Any]:
    """Make ``s3://bucket/prefix`` hold the selected files of the snapshot, uploading only what is missing.

    Args:
        s3: A boto3 S3 client.
        bucket: Destination bucket.
        prefix: Destination key prefix, ending in ``/``.
        repo_id: Hugging Face repository.
        revision: Pinned commit id.
        include: Glob patterns of repository paths to copy; each must match at least one file.
        expected_sha256: Extra pinned SHA-256 per path, checked against the hub's listing and the bytes.
        opener: ``urllib.request.urlopen`` or a stand-in.
        endpoint: The hub's base URL.
        remaining_ms: Milliseconds left before the Lambda deadline.

    Returns:
        ``Files``, ``Uploaded``, ``Skipped``, ``BytesUploaded`` and ``S3Uri``.

    Raises:
        IntegrityError: a hash does not match; the bad object is deleted.
        TimeoutError: too little time is left to start the next file (a re-deploy resumes).
    """
    if not prefix.endswith("/"):
        prefix += "/"
    pins = dict(expected_sha256 or {})
    files = _select(list_hub_files(repo_id, revision, opener=opener, endpoint=endpoint), include)
    _check_pins(files, pins)
    uploaded = skipped = sent = 0
    for hub_file in files:
        key = prefix + hub_file.path
        if _already_there(s3, bucket, key, hub_file):
            skipped += 1
            continue
        if remaining_ms() < _SAFETY_MARGIN_MS:
            raise TimeoutError(f"stopped before {hub_file.path} to beat the deadline; deploy again to resume")
        url = f"{endpoint}/{repo_id}/resolve/{revision}/{urllib.parse.quote(hub_file.path)}"
        source = {"hf-repo": repo_id, "hf-revision": revision}
        sent += _upload(s3, bucket, key, hub_file, _get(url, opener), source, pins.get(hub_file.path))
        uploaded += 1
    logger.info("files=<%d>, uploaded=<%d>, skipped=<%d> | snapshot in place", len(files), uploaded, skipped)
    return {
        "Files": len(files),
        "Uploaded": uploaded,
        "Skipped": skipped,
        "BytesUploaded": sent,
        "S3Uri": f"s3://{bucket}/{prefix}",
    }


def _verify(hub_file: HubFile, reader: _HashingReader, pinned: str | None) -> str | None:
    if reader.count != hub_file.size:
        return f"got {reader.count} bytes, the hub lists {hub_file.size}"
    if hub_file.sha256 is not None and reader.sha256.hexdigest() != hub_file.sha256:
        return "SHA-256 differs from the hub's LFS hash"
    if hub_file.sha256 is None and reader.git.hexdigest() != hub_file.git_oid:
        return "git blob id differs from the hub's"
    if pinned is not None and reader.sha256.hexdigest() != pinned:
        return "SHA-256 differs from the pinned hash"
    return None


def _transfer_config() -> Any:
    from boto3.s3.transfer import TransferConfig

    return TransferConfig(multipart_threshold=_PART_BYTES, multipart_chunksize=_PART_BYTES, max_concurrency=4)


def send_response(
    event: Mapping[str, Any],
    status: str,
    *,
    physical_id: str,
    data: Mapping[str, Any] | None = None,
    reason: str = "",
    log_stream: str = "",
    opener: Opener = urllib.request.urlopen,
) -> None:
    """PUT the custom resource's result to CloudFormation's pre-signed response URL.

    Args:
        event: The CloudFormation request.
        status: ``SUCCESS`` or ``FAILED``.
        physical_id: The resource's physical id.
        data: Attributes for ``Fn::GetAtt``.
        reason: Shown in the stack events (kept short).
        log_stream: Where to look for details.
        opener: ``urllib.request.urlopen`` or a stand-in.
    """
    body = json.dumps(
        {
            "Status": status,
            "Reason": (reason or f"See CloudWatch log stream {log_stream}")[:900],
            "PhysicalResourceId": physical_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": False,
            "Data": dict(data or {}),
        }
    ).encode()
    request = urllib.request.Request(
        event["ResponseURL"],
        data=body,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )
    with opener(request, timeout=_READ_TIMEOUT_S) as response:
        logger.info("status=<%s>, http=<%s> | response sent", status, getattr(response, "status", "?"))


def handler(
    event: dict[str, Any], context: Any, *, s3: Any = None, opener: Opener = urllib.request.urlopen
) -> None:
    """Lambda entry point for ``Custom::HuggingFaceSnapshot``.

    Args:
        event: The CloudFormation custom resource request.
        context: The Lambda context (for the deadline and log stream).
        s3: An S3 client (tests); a new boto3 client when ``None``.
        opener: ``urllib.request.urlopen`` or a stand-in (tests).
    """
    props = event.get("ResourceProperties", {})
    bucket, prefix = props.get("Bucket", ""), props.get("Prefix", "")
    physical_id = f"s3://{bucket}/{prefix}" if bucket else event.get("PhysicalResourceId", "hf-snapshot")
    log_stream = getattr(context, "log_stream_name", "")
    try:
        if event["RequestType"] == "Delete":
            logger.info("physical_id=<%s> | delete: the weights stay in the retained bucket", physical_id)
            send_response(
                event, "SUCCESS", physical_id=event.get("PhysicalResourceId", physical_id), opener=opener
            )
            return
        if s3 is None:
            import boto3

            s3 = boto3.client("s3")
        data = sync_snapshot(
            s3,
            bucket=bucket,
            prefix=prefix,
            repo_id=props["RepoId"],
            revision=props["Revision"],
            include=props["Include"],
            expected_sha256=props.get("ExpectedSha256") or {},
            opener=opener,
            endpoint=props.get("HubEndpoint", HUB_ENDPOINT),
            remaining_ms=getattr(context, "get_remaining_time_in_millis", lambda: 10**9),
        )
        send_response(event, "SUCCESS", physical_id=physical_id, data=data, opener=opener)
    except Exception as exc:
        logger.exception("physical_id=<%s> | snapshot sync failed", physical_id)
        send_response(
            event,
            "FAILED",
            physical_id=physical_id,
            reason=f"{type(exc).__name__}: {exc}",
            log_stream=log_stream,
            opener=opener,
        )


def _check_pins(files: list[HubFile], pins: Mapping[str, str]) -> None:
    """Every pinned path is listed by the hub with its pinned SHA-256.

    Raises:
        IntegrityError: a pinned path is missing or listed with another hash.
    """
    for path, sha in pins.items():
        listed = next((f for f in files if f.path == path), None)
        if listed is None or listed.sha256 != sha:
            raise IntegrityError(
                f"{path}: the hub lists {listed.sha256 if listed else 'no file'}, pinned {sha}"
            )


def _upload(
    s3: _S3,
    bucket: str,
    key: str,
    hub_file: HubFile,
    download: Any,
    source: Mapping[str, str],
    pin: str | None,
) -> int:
    """Stream one hub file into ``s3://bucket/key`` and verify it; returns the bytes uploaded.

    Raises:
        IntegrityError: its size or a hash does not match; the bad object is deleted.
    """
    started = time.monotonic()
    with download as response:
        reader = _HashingReader(response, hub_file.size)
        s3.upload_fileobj(
            reader,
            bucket,
            key,
            ExtraArgs={
                "Metadata": {"source-id": hub_file.source_id, **source},
                "ContentType": "application/octet-stream",
            },
            Config=_transfer_config(),
        )
    problem = _verify(hub_file, reader, pin)
    if problem:
        s3.delete_object(Bucket=bucket, Key=key)
        raise IntegrityError(f"{hub_file.path}: {problem}")
    logger.info(
        "path=<%s>, bytes=<%d>, seconds=<%.1f> | uploaded",
        hub_file.path,
        reader.count,
        time.monotonic() - started,
    )
    return reader.count
