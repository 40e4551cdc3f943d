"""Where the deployed voice agent keeps its conversations: an S3 bucket or an AgentCore Memory.

The app chooses its Strands session manager from environment variables (``CONVERSATION_STORE`` =
``file`` | ``s3`` | ``agentcore-memory`` | ``none``, ``CONVERSATION_BUCKET``, ``CONVERSATION_PREFIX``,
``AGENTCORE_MEMORY_ID``); :class:`ConversationStoreResources` provisions the store the config names,
grants the runtime role exactly what that session manager calls, and gives the runtime those variables.
``docs/infrastructure.md`` says how to choose.
"""

from __future__ import annotations

import logging
from typing import Final

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_bedrockagentcore as agentcore
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from .buckets import private_bucket
from .config import CONVERSATION_STORES, InfraConfig
from .nag import suppress

__all__ = ["MEMORY_ACTIONS", "S3_OBJECT_ACTIONS", "ConversationStoreResources"]

logger = logging.getLogger(__name__)

#: What Strands' S3 session manager does with its objects (read, write, delete a session).
S3_OBJECT_ACTIONS: Final = ("s3:GetObject", "s3:PutObject", "s3:DeleteObject")
#: What bedrock-agentcore's Strands session manager calls on a memory with no extraction strategy.
MEMORY_ACTIONS: Final = (
    "bedrock-agentcore:CreateEvent",
    "bedrock-agentcore:GetEvent",
    "bedrock-agentcore:ListEvents",
    "bedrock-agentcore:DeleteEvent",
    "bedrock-agentcore:ListSessions",
)


class ConversationStoreResources(Construct):
    """The conversation store ``config.conversation_store`` names, and the runtime role's access to it.

    Attributes:
        bucket: The S3 bucket (``s3`` only).
        memory: The AgentCore Memory (``agentcore-memory`` only).
        environment: The variables the runtime needs for this store.
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: InfraConfig, role: iam.Role) -> None:
        """Define the store and grant ``role`` its use.

        Args:
            scope: The stack.
            construct_id: The construct id.
            config: ``conversation_store``, ``conversation_prefix`` and ``conversation_retention_days``.
            role: The AgentCore runtime's execution role.
        """
        super().__init__(scope, construct_id)
        kind = config.conversation_store
        assert kind in CONVERSATION_STORES  # validated by InfraConfig
        self.bucket: s3.Bucket | None = None
        self.memory: agentcore.CfnMemory | None = None
        self.environment: dict[str, str] = {"CONVERSATION_STORE": kind}
        if kind == "s3":
            self._bucket(config, role)
        elif kind == "agentcore-memory":
            self._memory(config, role)
        logger.debug("store=<%s> | conversation store defined", kind)

    def _bucket(self, config: InfraConfig, role: iam.Role) -> None:
        prefix = config.conversation_prefix
        bucket = private_bucket(
            self,
            "Bucket",
            # Conversations are callers' words: kept when the stack goes, gone after the retention period.
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[
                s3.LifecycleRule(
                    prefix=prefix,
                    expiration=Duration.days(config.conversation_retention_days),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                )
            ],
        )
        suppress(
            bucket,
            "AwsSolutions-S1",
            "Only the runtime role reads or writes this bucket, through its own prefix; its objects are "
            "conversation snapshots that expire, and an access-log bucket would keep the callers' session "
            "ids past that expiry. CloudTrail data events can audit it where required.",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ReadWriteConversations",
                actions=list(S3_OBJECT_ACTIONS),
                resources=[bucket.arn_for_objects(f"{prefix}*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ListConversations",
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            )
        )
        stack = Stack.of(self)
        bucket_id = stack.get_logical_id(bucket.node.default_child)  # type: ignore[arg-type]
        suppress(
            role,
            "AwsSolutions-IAM5",
            "Session object names are made at run time from the AgentCore session id; the wildcard stays "
            "inside the conversations prefix of this stack's own bucket.",
            applies_to=[f"Resource::<{bucket_id}.Arn>/{prefix}*"],
        )
        self.bucket = bucket
        self.environment.update({"CONVERSATION_BUCKET": bucket.bucket_name, "CONVERSATION_PREFIX": prefix})
        CfnOutput(
            stack, "ConversationBucketName", value=bucket.bucket_name, description="Conversations bucket"
        )

    def _memory(self, config: InfraConfig, role: iam.Role) -> None:
        memory = agentcore.CfnMemory(
            self,
            "Memory",
            name=f"{config.agent_runtime_name}_conversations",
            description="Conversations of the strands-voice agent (short-term memory, no extraction)",
            event_expiry_duration=config.conversation_retention_days,
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="UseConversationMemory", actions=list(MEMORY_ACTIONS), resources=[memory.attr_memory_arn]
            )
        )
        self.memory = memory
        self.environment["AGENTCORE_MEMORY_ID"] = memory.attr_memory_id
        CfnOutput(
            Stack.of(self),
            "ConversationMemoryId",
            value=memory.attr_memory_id,
            description="AgentCore Memory",
        )
