"""`speech-infra` and `agent-infra`: deploy/destroy command lines, status and one-line errors (moto)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from strands_voice_infra import agent_cli, speech_cli, toolkit

FAKE_CDK = """\
import json, os, sys
with open(os.environ["FAKE_CDK_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "region": os.environ.get("AWS_REGION")}) + "\\n")
print(f"fake-cdk {sys.argv[1]}: starting", flush=True)
print(f"fake-cdk {sys.argv[1]}: progress on stderr", file=sys.stderr, flush=True)
sys.exit(int(os.environ.get("FAKE_CDK_RC", "0")))
"""


@pytest.fixture
def fake_cdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the CLIs at a fake CDK CLI that logs its arguments; returns the log file."""
    script = tmp_path / "fake_cdk.py"
    script.write_text(FAKE_CDK, encoding="utf-8")
    log = tmp_path / "cdk-calls.jsonl"
    monkeypatch.setenv(toolkit.CDK_CLI_ENV, f"{sys.executable} {script}")
    monkeypatch.setenv("FAKE_CDK_LOG", str(log))
    return log


def _calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def moto(aws_env: None) -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def reuse_speech_assembly(speech_synth: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """deploy/destroy synthesize first; reuse the session's assembly instead of synthesizing again."""
    calls: list[tuple[bool, bool]] = []

    def fake_synth(
        config: Any, outdir: Path, *, speech: bool = True, agent: bool = True
    ) -> toolkit.SynthResult:
        calls.append((speech, agent))
        names = ["SpeechFoundation", "SpeechModelCache", "Speech-kokoro-82m"]
        templates = {n: speech_synth.assembly / f"{n}.template.json" for n in names}
        return toolkit.SynthResult(assembly_dir=speech_synth.assembly, templates=templates, seconds=0.1)

    monkeypatch.setattr(toolkit, "synth", fake_synth)
    return speech_synth.assembly


@pytest.fixture
def reuse_agent_assembly(agent_synth: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    def fake_synth(
        config: Any, outdir: Path, *, speech: bool = True, agent: bool = True
    ) -> toolkit.SynthResult:
        assert (speech, agent) == (False, True)
        templates = {
            n: agent_synth.assembly / f"{n}.template.json" for n in ("AgentFoundation", "AgentRuntime")
        }
        return toolkit.SynthResult(assembly_dir=agent_synth.assembly, templates=templates, seconds=0.1)

    monkeypatch.setattr(toolkit, "synth", fake_synth)
    return agent_synth.assembly


def _bootstrapped() -> None:
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="CDKToolkit",
        TemplateBody=json.dumps({"Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}}}),
    )


def _no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


# -- deploy / destroy ---------------------------------------------------------------------------------------


def test_speech_deploy_bootstraps_then_deploys_the_three_stacks(
    moto: None, fake_cdk: Path, reuse_speech_assembly: Path
) -> None:
    out = io.StringIO()
    assert speech_cli.main(["deploy", "kokoro-82m"], stdout=out) == 0
    bootstrap, deploy = _calls(fake_cdk)
    assert bootstrap["argv"] == [
        "bootstrap",
        "aws://123456789012/us-east-1",
        "--app",
        str(reuse_speech_assembly),
    ]
    assert deploy["argv"] == [
        "deploy",
        "SpeechFoundation",
        "SpeechModelCache",
        "Speech-kokoro-82m",
        "--app",
        str(reuse_speech_assembly),
        "--require-approval",
        "never",
        "--progress",
        "events",
    ]
    assert deploy["region"] == "us-east-1"
    text = out.getvalue()
    assert "fake-cdk deploy: starting" in text and "fake-cdk deploy: progress on stderr" in text
    assert "endpoint strands-voice-kokoro-82m is in service" in text


def test_speech_deploy_skips_bootstrap_when_done_and_passes_profile_region(
    moto: None, fake_cdk: Path, reuse_speech_assembly: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _bootstrapped()
    config = tmp_path / "config"
    config.write_text(
        "[profile dev]\nregion = us-east-1\naws_access_key_id = testing\naws_secret_access_key = testing\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    argv = ["deploy", "kokoro-82m", "--profile", "dev", "--region", "us-east-1", "--max-instances", "4"]
    assert speech_cli.main(argv, stdout=io.StringIO()) == 0
    (deploy,) = _calls(fake_cdk)
    assert deploy["argv"][0] == "deploy"
    assert deploy["argv"][deploy["argv"].index("--profile") + 1] == "dev"


def test_speech_deploy_failure_is_the_cli_exit_code(
    moto: None, fake_cdk: Path, reuse_speech_assembly: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bootstrapped()
    monkeypatch.setenv("FAKE_CDK_RC", "4")
    out = io.StringIO()
    assert speech_cli.main(["deploy", "kokoro-82m"], stdout=out) == 4
    assert "in service" not in out.getvalue()


def test_speech_destroy_removes_endpoint_cache_and_foundation(
    moto: None, fake_cdk: Path, reuse_speech_assembly: Path
) -> None:
    out = io.StringIO()
    assert speech_cli.main(["destroy", "kokoro-82m"], stdout=out) == 0
    (destroy,) = _calls(fake_cdk)
    assert destroy["argv"] == [
        "destroy",
        "Speech-kokoro-82m",
        "SpeechModelCache",
        "SpeechFoundation",
        "--app",
        str(reuse_speech_assembly),
        "--force",
    ]
    assert "retained" in out.getvalue()


def test_agent_deploy_deploys_both_stacks_and_warns_without_endpoint(
    moto: None, fake_cdk: Path, reuse_agent_assembly: Path
) -> None:
    _bootstrapped()
    out = io.StringIO()
    argv = ["deploy", "--bedrock-model-id", "us.anthropic.claude-haiku-4-5-20251001-v1:0"]
    assert agent_cli.main(argv, stdout=out) == 0
    (deploy,) = _calls(fake_cdk)
    assert deploy["argv"][:4] == ["deploy", "AgentFoundation", "AgentRuntime", "--app"]
    assert "--require-approval" in deploy["argv"]
    assert "endpoint strands-voice-kokoro-82m not found" in out.getvalue()


def test_agent_destroy_removes_runtime_then_foundation(
    moto: None, fake_cdk: Path, reuse_agent_assembly: Path
) -> None:
    argv = ["destroy", "--bedrock-model-id", "us.anthropic.claude-haiku-4-5-20251001-v1:0"]
    assert agent_cli.main(argv, stdout=io.StringIO()) == 0
    (destroy,) = _calls(fake_cdk)
    assert destroy["argv"] == [
        "destroy",
        "AgentRuntime",
        "AgentFoundation",
        "--app",
        str(reuse_agent_assembly),
        "--force",
    ]


def test_agent_deploy_requires_a_model_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(["deploy"])
    assert caught.value.code == 2
    assert "--bedrock-model-id" in capsys.readouterr().err


# -- one clear line -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["deploy", "destroy", "synth", "status"])
def test_unknown_model_is_one_line_exit_2(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        speech_cli.main([command, "kokoro-9000"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("note: ")]
    assert lines == ["speech-infra: error: unknown model 'kokoro-9000'; available: kokoro-82m"]


def test_agent_unknown_speech_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(["status", "--speech-model", "nope"])
    assert caught.value.code == 2
    assert (
        capsys.readouterr().err.strip() == "agent-infra: error: unknown model 'nope'; available: kokoro-82m"
    )


@pytest.mark.parametrize(
    ("cli", "argv"),
    [
        (speech_cli, ["deploy", "kokoro-82m"]),
        (speech_cli, ["destroy", "kokoro-82m"]),
        (speech_cli, ["status", "kokoro-82m"]),
        (agent_cli, ["deploy", "--bedrock-model-id", "us.anthropic.claude-haiku-4-5-20251001-v1:0"]),
        (agent_cli, ["status"]),
        (agent_cli, ["demo", "--prompt", "hi"]),
    ],
)
def test_missing_credentials_is_one_line_exit_1(
    cli: Any,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _no_credentials(monkeypatch, tmp_path)
    with pytest.raises(SystemExit) as caught:
        cli.main(argv, stdout=io.StringIO())
    assert caught.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1
    assert "error: no AWS credentials found" in lines[0]


def test_missing_region_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_credentials(monkeypatch, tmp_path)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    with pytest.raises(SystemExit) as caught:
        speech_cli.main(["status", "kokoro-82m"])
    assert caught.value.code == 1
    assert (
        capsys.readouterr().err.strip()
        == "speech-infra: error: no AWS region configured; set AWS_REGION or pass --region"
    )


@pytest.mark.parametrize(
    ("env", "argv"),
    [
        ({"AWS_REGION": "eu-west-1"}, []),
        ({"AWS_DEFAULT_REGION": "eu-west-1"}, []),
        ({"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-1"}, []),  # AWS_REGION wins, as in SDKs
        ({"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}, ["--region", "eu-west-1"]),
        ({}, ["--region", "eu-west-1"]),
    ],
    ids=["AWS_REGION", "AWS_DEFAULT_REGION", "both", "flag-over-env", "flag"],
)
@pytest.mark.parametrize("cli", [speech_cli, agent_cli], ids=["speech-infra", "agent-infra"])
def test_every_cli_takes_the_region_from_flag_or_either_variable(
    moto: None, monkeypatch: pytest.MonkeyPatch, cli: Any, env: dict[str, str], argv: list[str]
) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()
    if cli is speech_cli:
        assert cli.main(["status", "kokoro-82m", *argv], stdout=out) == 1
        assert out.getvalue().strip().endswith("in eu-west-1)")
    else:
        assert cli.main(["status", "--json", *argv], stdout=out) == 1
        assert json.loads(out.getvalue())["region"] == "eu-west-1"


def test_bad_setting_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        speech_cli.main(["synth", "kokoro-82m", "--min-instances", "3", "--max-instances", "2"])
    assert caught.value.code == 2
    assert capsys.readouterr().err.strip().endswith("max instances (2) must be at least min instances (3)")


def test_synth_without_a_dockerfile_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        speech_cli.main(["synth", "kokoro-82m", "--repo-root", str(tmp_path), "--out", str(tmp_path / "out")])
    assert caught.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note: ")]
    assert lines == [f"speech-infra: error: endpoint/Dockerfile not found under {tmp_path}"]


def test_console_scripts_are_installed() -> None:
    bindir = Path(sys.executable).parent
    for name in ("speech-infra", "agent-infra"):
        result = subprocess.run(
            [bindir / name, "--help"], capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
        assert "deploy" in result.stdout and "status" in result.stdout
    result = subprocess.run(
        [bindir / "speech-infra", "deploy", "piper"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "speech-infra: error: unknown model 'piper'; available: kokoro-82m"
    assert "Traceback" not in result.stderr


# -- status -------------------------------------------------------------------------------------------------


def _endpoint(instance_type: str = "ml.m5.large") -> None:
    """The endpoint as deployed, on an instance type moto accepts (it refuses ml.g5.*)."""
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    sagemaker.create_model(
        ModelName="kokoro",
        ExecutionRoleArn="arn:aws:iam::123456789012:role/sm",
        PrimaryContainer={"Image": "img"},
    )
    sagemaker.create_endpoint_config(
        EndpointConfigName="kokoro-config",
        ProductionVariants=[
            {
                "VariantName": "AllTraffic",
                "ModelName": "kokoro",
                "InstanceType": instance_type,
                "InitialInstanceCount": 1,
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName="strands-voice-kokoro-82m", EndpointConfigName="kokoro-config")
    scaling = boto3.client("application-autoscaling", region_name="us-east-1")
    resource = "endpoint/strands-voice-kokoro-82m/variant/AllTraffic"
    dimension = "sagemaker:variant:DesiredInstanceCount"
    scaling.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId=resource,
        ScalableDimension=dimension,
        MinCapacity=1,
        MaxCapacity=3,
    )
    scaling.put_scaling_policy(
        PolicyName="strands-voice-kokoro-82m-concurrency",
        ServiceNamespace="sagemaker",
        ResourceId=resource,
        ScalableDimension=dimension,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {
                "PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"
            },
        },
    )


def _runtime() -> dict[str, Any]:
    return boto3.client("bedrock-agentcore-control", region_name="us-east-1").create_agent_runtime(
        agentRuntimeName="strands_voice_agent",
        agentRuntimeArtifact={
            "containerConfiguration": {"containerUri": "123456789012.dkr.ecr.us-east-1.amazonaws.com/a:1"}
        },
        roleArn="arn:aws:iam::123456789012:role/agent",
        networkConfiguration={"networkMode": "PUBLIC"},
        environmentVariables={
            "BEDROCK_MODEL_ID": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
            "TTS_ENDPOINT_URL": "sagemaker://strands-voice-kokoro-82m?region=us-east-1",
        },
    )


def test_speech_status_describes_endpoint_and_scaling(moto: None) -> None:
    _endpoint()
    out = io.StringIO()
    assert speech_cli.main(["status", "kokoro-82m"], stdout=out) == 0
    text = out.getvalue()
    assert "endpoint   strands-voice-kokoro-82m (us-east-1)" in text
    assert "status     InService" in text
    assert "variant    AllTraffic: ml.m5.large, 1 running (desired 1)" in text
    assert "scaling    1 to 3 instances" in text
    assert "SageMakerVariantConcurrentRequestsPerModelHighResolution target 4.0" in text


def test_speech_status_json(moto: None) -> None:
    _endpoint()
    out = io.StringIO()
    assert speech_cli.main(["status", "kokoro-82m", "--json"], stdout=out) == 0
    data = json.loads(out.getvalue())
    assert data["deployed"] is True
    assert data["variants"] == [
        {"name": "AllTraffic", "instance_type": "ml.m5.large", "current": 1, "desired": 1}
    ]
    assert data["scaling"]["max"] == 3


def test_speech_status_when_not_deployed(moto: None) -> None:
    out = io.StringIO()
    assert speech_cli.main(["status", "kokoro-82m"], stdout=out) == 1
    assert (
        out.getvalue().strip()
        == "kokoro-82m: not deployed (no endpoint strands-voice-kokoro-82m in us-east-1)"
    )


def test_agent_status_describes_runtime_and_endpoint(moto: None) -> None:
    created = _runtime()
    _endpoint()
    out = io.StringIO()
    assert agent_cli.main(["status"], stdout=out) == 0
    text = out.getvalue()
    assert f"arn        {created['agentRuntimeArn']}" in text
    assert "env        TTS_ENDPOINT_URL=sagemaker://strands-voice-kokoro-82m?region=us-east-1" in text
    assert "status     InService" in text


def test_agent_status_when_nothing_is_deployed(moto: None) -> None:
    out = io.StringIO()
    assert agent_cli.main(["status", "--json"], stdout=out) == 1
    assert json.loads(out.getvalue()) == {"region": "us-east-1", "runtime": None, "endpoint": None}


def test_demo_without_a_deployed_runtime_is_one_line(moto: None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(["demo", "--prompt", "hi"], stdout=io.StringIO())
    assert caught.value.code == 1
    assert "no runtime strands_voice_agent in us-east-1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("cli", "argv", "dockerfile"),
    [
        (speech_cli, ["synth", "kokoro-82m"], "endpoint/Dockerfile"),
        (agent_cli, ["synth"], "examples/agentcore_app/Dockerfile"),
    ],
)
def test_synth_of_this_checkout(cli: Any, argv: list[str], dockerfile: str, tmp_path: Path) -> None:
    """The real build context, as on a fresh clone: offline, no Docker, every stack written."""
    from strands_voice_infra.config import REPO_ROOT

    assert (REPO_ROOT / dockerfile).is_file(), f"{dockerfile} is missing from this checkout"
    out = io.StringIO()
    assert cli.main([*argv, "--out", str(tmp_path)], stdout=out) == 0
    templates = sorted(p.name for p in tmp_path.glob("*.template.json"))
    assert len(templates) == (3 if cli is speech_cli else 2)
    staged = [p for p in tmp_path.glob("asset.*") if (p / dockerfile).is_file()]
    assert len(staged) == 1
    assert not (staged[0] / ".venv").exists() and not (staged[0] / ".git").exists()


def test_aws_errors_are_one_line(
    moto: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from botocore.exceptions import ClientError
    from strands_voice_infra import status

    def denied(*args: Any, **kwargs: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "DescribeEndpoint"
        )

    monkeypatch.setattr(status, "describe_endpoint", denied)
    with pytest.raises(SystemExit) as caught:
        speech_cli.main(["status", "kokoro-82m"], stdout=io.StringIO())
    assert caught.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("speech-infra: error: AWS call failed: An error occurred (AccessDeniedException)")
    assert "\n" not in err
