"""Fixtures for the SageMaker transport tests: dummy AWS credentials, a trusted TLS certificate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_sagemaker_runtime import DUMMY_KEY_ID, DUMMY_SECRET, TLSFiles


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
