"""CloudWatch dashboards and alarms: the speech endpoint's, and a section for the agent runtime.

The endpoint container writes its metrics as EMF lines (``KOKORO_METRICS=emf``, namespace
``StrandsVoice/Endpoint``, dimension ``Endpoint`` = the endpoint's name); the agent app writes one line per
answer (``AGENT_METRICS=emf``, namespace ``StrandsVoice/Agent``, dimension ``Service`` = the runtime's
name). SageMaker's own ``AWS/SageMaker`` metrics give the invocations. Every metric is listed in
``docs/observability.md``.

"Instances" is the number of containers reporting: each writes one interval line a minute, so the
``SampleCount`` of ``ActiveSessions`` over a minute is the number of instances in service.
"""

from __future__ import annotations

import logging
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct
from strands_voice_protocol.emf import AGENT_NAMESPACE, ENDPOINT_NAMESPACE

from .config import VARIANT_NAME, InfraConfig

__all__ = ["METRIC_PERIOD", "AgentMonitoring", "SpeechMonitoring", "endpoint_metrics_environment"]

logger = logging.getLogger(__name__)

#: The endpoint's interval lines come once a minute: the finest period the dashboards and alarms use.
METRIC_PERIOD: Final = Duration.minutes(1)

_WIDTH: Final = 8  # three widgets per dashboard row (24 columns)


def endpoint_metrics_environment(endpoint_name: str) -> dict[str, str]:
    """The container variables that turn the endpoint's EMF metrics on, named after ``endpoint_name``."""
    return {"KOKORO_METRICS": "emf", "KOKORO_METRICS_ENDPOINT": endpoint_name}


class SpeechMonitoring(Construct):
    """The speech endpoint's dashboard and alarms (and, when asked, the SNS topic they notify).

    Attributes:
        dashboard: The CloudWatch dashboard.
        alarms: The alarms by name: ``first_chunk_p95``, ``error_rate``, ``sessions_near_capacity``.
        topic: The SNS topic the alarms notify, if any.
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: InfraConfig) -> None:
        """Define the dashboard, the alarms and the optional topic.

        Args:
            scope: The speech endpoint's stack.
            construct_id: The construct id.
            config: The endpoint's name and the alarm thresholds and recipients.
        """
        super().__init__(scope, construct_id)
        name = config.endpoint_name
        own = {"Endpoint": name}
        sagemaker = {"EndpointName": name, "VariantName": VARIANT_NAME}

        def metric(
            metric_name: str, statistic: str, label: str, namespace: str = ENDPOINT_NAMESPACE
        ) -> cw.Metric:
            dimensions = sagemaker if namespace == "AWS/SageMaker" else own
            return cw.Metric(
                namespace=namespace,
                metric_name=metric_name,
                dimensions_map=dimensions,
                statistic=statistic,
                period=METRIC_PERIOD,
                label=label,
            )

        latency_p50 = metric("FirstChunkLatency", "p50", "first chunk p50 (ms)")
        latency_p95 = metric("FirstChunkLatency", "p95", "first chunk p95 (ms)")
        errors = metric("Errors", "Sum", "errors")
        requests = metric("Requests", "Sum", "requests")
        sessions_max = metric("ActiveSessions", "Maximum", "sessions (busiest instance)")
        session_limit = metric("SessionLimit", "Maximum", "session limit per instance")
        error_rate = cw.MathExpression(
            expression="IF(requests > 0, 100 * errors / requests, 0)",
            using_metrics={
                "errors": errors.with_(period=Duration.minutes(5)),
                "requests": requests.with_(period=Duration.minutes(5)),
            },
            label="error rate (%)",
            period=Duration.minutes(5),
        )
        capacity_used = cw.MathExpression(
            expression="IF(limit > 0, 100 * sessions / limit, 0)",
            using_metrics={"sessions": sessions_max, "limit": session_limit},
            label="sessions, % of an instance's limit",
            period=METRIC_PERIOD,
        )

        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=f"{name}-speech")
        self.dashboard.add_widgets(
            cw.TextWidget(
                markdown=f"# Speech endpoint `{name}`\nEMF metrics of the container (`{ENDPOINT_NAMESPACE}`) "
                "and SageMaker's own; see docs/observability.md.",
                width=24,
                height=2,
            )
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="First-chunk latency (ms)", left=[latency_p50, latency_p95], width=_WIDTH),
            cw.GraphWidget(
                title="Real-time factor (synthesis / audio time)",
                left=[metric("RealTimeFactor", "p50", "RTF p50"), metric("RealTimeFactor", "p95", "RTF p95")],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Sessions",
                left=[
                    metric("ActiveSessions", "Sum", "sessions (all instances)"),
                    sessions_max,
                    session_limit,
                    metric("QueuedSteps", "Maximum", "queued synthesis steps"),
                ],
                width=_WIDTH,
            ),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Errors",
                left=[errors, metric("Invocation5XXErrors", "Sum", "SageMaker 5XX", "AWS/SageMaker")],
                right=[error_rate],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Invocations",
                left=[metric("Invocations", "Sum", "SageMaker invocations", "AWS/SageMaker"), requests],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Instances in service",
                left=[metric("ActiveSessions", "SampleCount", "instances reporting")],
                right=[metric("AudioSeconds", "Sum", "audio seconds served")],
                width=_WIDTH,
            ),
        )

        self.alarms = {
            "first_chunk_p95": cw.Alarm(
                self,
                "FirstChunkLatencyP95Alarm",
                alarm_description=(
                    f"{name}: first-chunk latency p95 above {config.first_chunk_p95_alarm_ms:g} ms in 3 of 5 "
                    "minutes"
                ),
                metric=latency_p95,
                threshold=config.first_chunk_p95_alarm_ms,
                evaluation_periods=5,
                datapoints_to_alarm=3,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            ),
            "error_rate": cw.Alarm(
                self,
                "ErrorRateAlarm",
                alarm_description=(
                    f"{name}: more than {config.error_rate_alarm_percent:g}% of requests answered with an "
                    "error in 2 of 3 five-minute periods"
                ),
                metric=error_rate,
                threshold=config.error_rate_alarm_percent,
                evaluation_periods=3,
                datapoints_to_alarm=2,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            ),
            "sessions_near_capacity": cw.Alarm(
                self,
                "SessionsNearCapacityAlarm",
                alarm_description=(
                    f"{name}: the busiest instance holds over {config.sessions_alarm_percent:g}% of its "
                    "session limit for 3 minutes (new sessions will be refused)"
                ),
                metric=capacity_used,
                threshold=config.sessions_alarm_percent,
                evaluation_periods=3,
                datapoints_to_alarm=3,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            ),
        }
        self.dashboard.add_widgets(
            *(
                cw.AlarmWidget(alarm=alarm, title=alarm.node.id, width=_WIDTH)
                for alarm in self.alarms.values()
            )
        )

        self.topic = self._topic(config)
        if self.topic is not None:
            action = cw_actions.SnsAction(self.topic)
            for alarm in self.alarms.values():
                alarm.add_alarm_action(action)
                alarm.add_ok_action(action)
        logger.debug("endpoint=<%s>, alarms=<%d> | speech monitoring defined", name, len(self.alarms))

    def _topic(self, config: InfraConfig) -> sns.ITopic | None:
        """The topic to notify: the configured one, a new one for ``alarm_email``, or none."""
        if config.alarm_topic_arn:
            return sns.Topic.from_topic_arn(self, "AlarmTopic", config.alarm_topic_arn)
        if not config.alarm_email:
            return None
        # CloudWatch can publish to an encrypted topic only through a customer managed key it may use.
        key = kms.Key(
            self, "AlarmTopicKey", enable_key_rotation=True, description="strands-voice alarm topic"
        )
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey")
        topic = sns.Topic(
            self, "AlarmTopic", master_key=key, enforce_ssl=True, display_name="strands-voice alarms"
        )
        sns.Subscription(
            self,
            "AlarmEmail",
            topic=topic,
            protocol=sns.SubscriptionProtocol.EMAIL,
            endpoint=config.alarm_email,
        )
        return topic


class AgentMonitoring(Construct):
    """The agent runtime's dashboard: the app's per-answer figures.

    Attributes:
        dashboard: The CloudWatch dashboard.
    """

    def __init__(self, scope: Construct, construct_id: str, *, service: str) -> None:
        """Define the dashboard.

        Args:
            scope: The agent runtime's stack.
            construct_id: The construct id.
            service: The ``Service`` dimension the app writes (the runtime's name).
        """
        super().__init__(scope, construct_id)

        def metric(metric_name: str, statistic: str, label: str) -> cw.Metric:
            return cw.Metric(
                namespace=AGENT_NAMESPACE,
                metric_name=metric_name,
                dimensions_map={"Service": service},
                statistic=statistic,
                period=METRIC_PERIOD,
                label=label,
            )

        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=f"{service}-agent")
        self.dashboard.add_widgets(
            cw.TextWidget(
                markdown=f"# Voice agent `{service}`\nOne EMF line per answer (`{AGENT_NAMESPACE}`); each "
                "line's `TraceId` finds the answer's trace (spans `strands_voice.answer`).",
                width=24,
                height=2,
            )
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Time to first audio at the caller (ms)",
                left=[metric("TimeToFirstAudio", "p50", "p50"), metric("TimeToFirstAudio", "p95", "p95")],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Answers and interruptions",
                left=[metric("Answers", "Sum", "answers"), metric("Interrupted", "Sum", "interrupted")],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Speech errors and audio",
                left=[metric("SpeechErrors", "Sum", "speech errors")],
                right=[metric("AudioSeconds", "Sum", "audio seconds")],
                width=_WIDTH,
            ),
        )
        logger.debug("service=<%s> | agent monitoring defined", service)
