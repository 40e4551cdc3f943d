"""cdk-nag AwsSolutions runs on every stack: no unacknowledged finding, and each acknowledgment says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from strands_voice_infra.config import InfraConfig
from strands_voice_infra.models import get_model


def _report(synth: Any) -> dict[str, Any]:
    return json.loads((synth.assembly / "validation-report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("which", ["speech_synth", "agent_synth"])
def test_aws_solutions_checks_pass(which: str, request: pytest.FixtureRequest) -> None:
    synth = request.getfixturevalue(which)
    report = _report(synth)  # written on every synth; a plugin only appears in it with violations
    assert [v for p in report["pluginReports"] for v in p["violations"]] == []
    # The pack did run: it wrote its acknowledgments into the templates.
    assert any(
        "cdk_nag" in r.get("Metadata", {}) for t in synth.templates.values() for r in t["Resources"].values()
    )


def test_every_acknowledgment_states_a_reason(speech_synth: Any, agent_synth: Any) -> None:
    acknowledged = 0
    for template in {**speech_synth.templates, **agent_synth.templates}.values():
        for resource in template["Resources"].values():
            for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
                assert rule["id"].startswith("AwsSolutions-")
                assert len(rule["reason"]) >= 60, rule
                acknowledged += 1
    assert acknowledged >= 5


def test_acknowledgments_are_per_finding_never_blanket(speech_synth: Any, agent_synth: Any) -> None:
    for template in {**speech_synth.templates, **agent_synth.templates}.values():
        for resource in template["Resources"].values():
            for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
                if rule["id"].startswith("AwsSolutions-IAM5"):
                    assert rule["id"].startswith("AwsSolutions-IAM5[Resource::"), rule["id"]
                    assert "Action::" not in rule["id"]


def test_an_unacknowledged_finding_fails_synth(tmp_path: Path) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_iam as iam
    from strands_voice_infra.nag import apply_nag

    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Bad")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["s3:*"], resources=["*"]))
    apply_nag(app)
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    rules = {
        v["ruleName"]
        for p in json.loads((tmp_path / "validation-report.json").read_text())["pluginReports"]
        for v in p["violations"]
    }
    assert "AwsSolutions-IAM5[Action::s3:*]" in rules


def test_suppress_refuses_an_empty_reason() -> None:
    from aws_cdk import App
    from strands_voice_infra.nag import suppress

    with pytest.raises(ValueError, match="real reason"):
        suppress(App(), "AwsSolutions-IAM5", "because")


def test_synth_reports_unacknowledged_findings_in_one_message(
    build_context: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import strands_voice_infra.speech_foundation as foundation
    from strands_voice_infra import toolkit

    monkeypatch.setattr(foundation, "suppress", lambda *args, **kwargs: None)
    config = InfraConfig(speech_model=get_model("kokoro-82m"), repo_root=build_context)
    with pytest.raises(toolkit.SynthError) as caught:
        toolkit.synth(config, tmp_path, speech=True, agent=False)
    message = str(caught.value)
    assert "unacknowledged finding" in message
    assert "AwsSolutions-IAM5[Resource::<ModelBucket" in message
    assert "Traceback" not in message
