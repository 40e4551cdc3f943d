"""CDK entry point for the plain `cdk` CLI (run from `cdk/`); the CLIs build the same app in-process.

Settings come from context: ``cdk synth -c bedrock_model_id=... -c instance_type=ml.g5.2xlarge``; see
``strands_voice_infra.config.InfraConfig.from_context`` for the keys.
"""

from __future__ import annotations

from aws_cdk import App
from strands_voice_infra.app_builder import build_app
from strands_voice_infra.config import InfraConfig

__all__: list[str] = []

app = App()
context = app.node.get_all_context()
# `-c phone_bridge=1` adds the PhoneBridge stack (cdk/strands_voice_infra/phone_bridge.py).
build_app(
    InfraConfig.from_context(context), app=app, phone_bridge=str(context.get("phone_bridge", "")) == "1"
)
app.synth()
