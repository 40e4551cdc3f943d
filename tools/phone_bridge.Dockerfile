# syntax=docker/dockerfile:1
# The phone bridge: `strands-voice phone-bridge`, Twilio Media Streams to a deployed AgentCore runtime.
# The PhoneBridge stack (cdk/strands_voice_infra/phone_bridge.py) builds it and runs it on ECS Fargate.
#
# Build from the REPOSITORY ROOT:
#   docker build -f tools/phone_bridge.Dockerfile -t strands-voice-phone-bridge .
# Run (AWS credentials from the environment or the task role; the region is the ARN's):
#   docker run --rm -p 8080:8080 -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_SESSION_TOKEN \
#     strands-voice-phone-bridge --runtime-arn arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/x
#
# Every package is the version uv.lock pins (`uv sync --frozen`).
FROM python:3.12-slim

COPY --from=ghcr.io/astral-sh/uv:0.13 /uv /usr/local/bin/uv

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    PATH=/opt/venv/bin:$PATH

WORKDIR /src

COPY pyproject.toml uv.lock README.md LICENSE ./
COPY endpoint/pyproject.toml endpoint/
COPY cdk/pyproject.toml cdk/
COPY examples/agentcore_app/pyproject.toml examples/agentcore_app/
COPY protocol/pyproject.toml protocol/
COPY tools/pyproject.toml tools/
RUN uv sync --frozen --no-default-groups --no-editable --package strands-voice-tools --no-install-workspace

COPY protocol/strands_voice_protocol protocol/strands_voice_protocol
COPY strands_voice ./strands_voice
COPY endpoint/kokoro_endpoint endpoint/kokoro_endpoint
COPY examples/agentcore_app/agentcore_app examples/agentcore_app/agentcore_app
COPY tools/strands_voice_tools tools/strands_voice_tools
RUN uv sync --frozen --no-default-groups --no-editable --package strands-voice-tools

RUN useradd --uid 1000 --no-create-home --shell /usr/sbin/nologin bridge
USER bridge
WORKDIR /tmp
EXPOSE 8080

ENTRYPOINT ["strands-voice", "phone-bridge", "--host", "0.0.0.0", "--port", "8080"]
