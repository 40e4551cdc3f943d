"""The phone bridge on ECS Fargate behind an Application Load Balancer: Twilio to the deployed runtime.

Twilio's ``<Stream url="wss://...">`` cannot sign requests, so calls to a deployed runtime go through
``strands-voice phone-bridge`` (tools/phone_bridge.Dockerfile): one relay per call, no state beyond it. The
stack: a VPC (two AZs, one NAT gateway, flow logs), an internet-facing ALB whose TLS listener uses the
certificate ``CertificateArn`` names (ACM, for the host name Twilio is given), HTTP to the tasks on 8080
(health check ``GET /ping``, a long deregistration delay so a deploy does not cut calls), a Fargate service
in the private subnets, and a task role that may call only ``bedrock-agentcore:InvokeAgentRuntime*`` on the
runtime ``RuntimeArn`` names (and its endpoints). Both are CloudFormation parameters:
``cdk deploy PhoneBridge --parameters RuntimeArn=... --parameters CertificateArn=...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from aws_cdk import CfnOutput, CfnParameter, Duration, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from .buckets import private_bucket
from .config import image_excludes
from .images import ECR_LOGIN_REASON
from .nag import suppress

__all__ = ["BRIDGE_DOCKERFILE", "BRIDGE_PORT", "PhoneBridgeStack"]

BRIDGE_DOCKERFILE: Final = "tools/phone_bridge.Dockerfile"
BRIDGE_PORT: Final = 8080
#: A call lasts minutes: a task being replaced keeps its calls this long.
_DRAIN: Final = Duration.minutes(5)


class PhoneBridgeStack(Stack):
    """The bridge service (module docstring).

    Args:
        scope: The app.
        construct_id: The stack's name.
        repo_root: The Docker build context (this checkout).
        desired_count: How many bridge tasks run.
        **kwargs: Passed to ``Stack``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, repo_root: Path, desired_count: int = 1, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        runtime_arn = CfnParameter(
            self,
            "RuntimeArn",
            description="The AgentCore runtime the calls go to (agent-infra status shows it)",
            allowed_pattern=r"arn:aws[a-z-]*:bedrock-agentcore:[a-z0-9-]+:\d{12}:runtime/[A-Za-z0-9_-]+",
        ).value_as_string
        certificate_arn = CfnParameter(
            self, "CertificateArn", description="The ACM certificate of the host name Twilio's <Stream> uses"
        ).value_as_string
        vpc = self._vpc()
        service = self._service(vpc, runtime_arn, desired_count, repo_root)
        balancer = self._balancer(vpc, service, certificate_arn)
        CfnOutput(
            self, "StreamHost", value=balancer.load_balancer_dns_name, description="point a DNS name here"
        )

    def _vpc(self) -> ec2.Vpc:
        vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1)
        flow_logs = logs.LogGroup(self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH)
        vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        return vpc

    def _task_role(self, runtime_arn: str) -> iam.Role:
        role = iam.Role(self, "TaskRole", assumed_by=iam.ServicePrincipal("ecs-tasks.amazonaws.com"))
        endpoints = f"{runtime_arn}/runtime-endpoint/*"
        role.add_to_policy(
            iam.PolicyStatement(
                sid="InvokeTheRuntime",
                actions=["bedrock-agentcore:InvokeAgentRuntime*"],
                resources=[runtime_arn, endpoints],
            )
        )
        suppress(
            role,
            "AwsSolutions-IAM5",
            "InvokeAgentRuntime* covers the runtime's invoke actions (HTTP and WebSocket streams) on this "
            "one runtime; runtime-endpoint/* are its qualifiers (DEFAULT and named endpoints), nothing else.",
            applies_to=[
                "Action::bedrock-agentcore:InvokeAgentRuntime*",
                "Resource::<RuntimeArn>/runtime-endpoint/*",
            ],
        )
        return role

    def _service(
        self, vpc: ec2.Vpc, runtime_arn: str, desired_count: int, repo_root: Path
    ) -> ecs.FargateService:
        cluster = ecs.Cluster(self, "Cluster", vpc=vpc, container_insights_v2=ecs.ContainerInsights.ENABLED)
        task = ecs.FargateTaskDefinition(
            self, "Task", cpu=512, memory_limit_mib=1024, task_role=self._task_role(runtime_arn)
        )
        image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(repo_root),
            file=BRIDGE_DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_AMD64,
            exclude=image_excludes(repo_root, BRIDGE_DOCKERFILE),
            display_name="strands-voice phone bridge",
        )
        log_group = logs.LogGroup(
            self, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        task.add_container(
            "Bridge",
            image=ecs.ContainerImage.from_docker_image_asset(image),
            command=["--runtime-arn", runtime_arn],  # the image's entry point serves on 0.0.0.0:8080
            port_mappings=[ecs.PortMapping(container_port=BRIDGE_PORT)],
            logging=ecs.LogDriver.aws_logs(stream_prefix="bridge", log_group=log_group),
        )
        # The execution role pulls the image: its ECR login is grantable on '*' only.
        suppress(task, "AwsSolutions-IAM5", ECR_LOGIN_REASON, applies_to=["Resource::*"])
        return ecs.FargateService(
            self,
            "Service",
            cluster=cluster,
            task_definition=task,
            desired_count=desired_count,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            min_healthy_percent=100,
        )

    def _balancer(
        self, vpc: ec2.Vpc, service: ecs.FargateService, certificate_arn: str
    ) -> elbv2.ApplicationLoadBalancer:
        logs_bucket = _access_log_bucket(self)
        balancer = elbv2.ApplicationLoadBalancer(self, "Balancer", vpc=vpc, internet_facing=True)
        balancer.log_access_logs(logs_bucket, prefix="alb")
        suppress(
            balancer,
            "AwsSolutions-EC23",
            "Twilio's media servers connect from address ranges Twilio changes; the listener takes TLS only "
            "and the tasks relay nothing but Twilio Media Streams to one runtime.",
        )
        listener = balancer.add_listener(
            "Tls",
            port=443,
            protocol=elbv2.ApplicationProtocol.HTTPS,
            certificates=[elbv2.ListenerCertificate.from_arn(certificate_arn)],
            ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS,
        )
        listener.add_targets(
            "Bridge",
            port=BRIDGE_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            targets=[service],
            deregistration_delay=_DRAIN,
            health_check=elbv2.HealthCheck(path="/ping", healthy_http_codes="200"),
        )
        return balancer


def _access_log_bucket(stack: Stack) -> Any:
    """The ALB's access-log bucket (S3-managed keys: what ELB log delivery writes to)."""
    bucket = private_bucket(stack, "AccessLogs", removal_policy=RemovalPolicy.RETAIN)
    suppress(
        bucket,
        "AwsSolutions-S1",
        "This bucket holds the load balancer's access logs; logging its own reads would log the logs.",
    )
    return bucket
