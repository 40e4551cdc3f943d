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


def _metric(namespace: str, dimensions: dict[str, str], name: str, statistic: str, label: str) -> cw.Metric:
    """One metric at the dashboards' period."""
    return cw.Metric(
        namespace=namespace,
        metric_name=name,
        dimensions_map=dimensions,
        statistic=statistic,
        period=METRIC_PERIOD,
        label=label,
    )


def _graph(title: str, left: list[cw.IMetric], right: list[cw.IMetric] | None = None) -> cw.GraphWidget:
    """A graph a third of the dashboard wide; ``right`` on a second axis."""
    if right is None:
        return cw.GraphWidget(title=title, left=left, width=_WIDTH)
    return cw.GraphWidget(title=title, left=left, right=right, width=_WIDTH)


def _dashboard(scope: Construct, name: str, markdown: str) -> cw.Dashboard:
    """A dashboard named ``name`` whose first row is ``markdown`` across the whole width."""
    dashboard = cw.Dashboard(scope, "Dashboard", dashboard_name=name)
    dashboard.add_widgets(cw.TextWidget(markdown=markdown, width=24, height=2))
    return dashboard


class SpeechMonitoring(Construct):
    """The speech endpoint's dashboard and alarms (and, when asked, the SNS topic they notify).

    Attributes:
        dashboard: The CloudWatch dashboard.
        alarms: The alarms by name: ``first_chunk_p95``, ``error_rate``, ``sessions_near_capacity``.
        topic: The SNS topic the alarms notify, if any.
        endpoint_name: The endpoint watched.
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: InfraConfig) -> None:
        """Define the dashboard, the alarms and the optional topic.

        Args:
            scope: The speech endpoint's stack.
            construct_id: The construct id.
            config: The endpoint's name and the alarm thresholds and recipients.
        """
        super().__init__(scope, construct_id)
        self.endpoint_name = name = config.endpoint_name
        self.dashboard = _dashboard(
            self,
            f"{name}-speech",
            f"# Speech endpoint `{name}`\nEMF metrics of the container (`{ENDPOINT_NAMESPACE}`) "
            "and SageMaker's own; see docs/observability.md.",
        )
        latency_p95 = self._metric("FirstChunkLatency", "p95", "first chunk p95 (ms)")
        five_minutes = Duration.minutes(5)
        errors = self._metric("Errors", "Sum", "errors")
        requests = self._metric("Requests", "Sum", "requests")
        error_rate = cw.MathExpression(
            expression="IF(requests > 0, 100 * errors / requests, 0)",
            using_metrics={
                "errors": errors.with_(period=five_minutes),
                "requests": requests.with_(period=five_minutes),
            },
            label="error rate (%)",
            period=five_minutes,
        )
        sessions_max = self._metric("ActiveSessions", "Maximum", "sessions (busiest instance)")
        session_limit = self._metric("SessionLimit", "Maximum", "session limit per instance")
        capacity_used = cw.MathExpression(
            expression="IF(limit > 0, 100 * sessions / limit, 0)",
            using_metrics={"sessions": sessions_max, "limit": session_limit},
            label="sessions, % of an instance's limit",
            period=METRIC_PERIOD,
        )
        self._add_graphs(latency_p95, errors, requests, error_rate, sessions_max, session_limit)
        self.alarms = self._alarms(config, latency_p95, error_rate, capacity_used)
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
        logger.debug(
            "endpoint=<%s>, alarms=<%d> | speech monitoring defined", self.endpoint_name, len(self.alarms)
        )

    def _metric(
        self, name: str, statistic: str, label: str, namespace: str = ENDPOINT_NAMESPACE
    ) -> cw.Metric:
        """The container's EMF metric, or SageMaker's own for ``namespace`` ``AWS/SageMaker``."""
        if namespace == "AWS/SageMaker":
            dimensions = {"EndpointName": self.endpoint_name, "VariantName": VARIANT_NAME}
        else:
            dimensions = {"Endpoint": self.endpoint_name}
        return _metric(namespace, dimensions, name, statistic, label)

    def _add_graphs(
        self,
        latency_p95: cw.Metric,
        errors: cw.Metric,
        requests: cw.Metric,
        error_rate: cw.MathExpression,
        sessions_max: cw.Metric,
        session_limit: cw.Metric,
    ) -> None:
        """Two rows of graphs: latency, real-time factor, sessions; errors, invocations, instances."""
        metric = self._metric
        self.dashboard.add_widgets(
            _graph(
                "First-chunk latency (ms)",
                [metric("FirstChunkLatency", "p50", "first chunk p50 (ms)"), latency_p95],
            ),
            _graph(
                "Real-time factor (synthesis / audio time)",
                [metric("RealTimeFactor", "p50", "RTF p50"), metric("RealTimeFactor", "p95", "RTF p95")],
            ),
            _graph(
                "Sessions",
                [
                    metric("ActiveSessions", "Sum", "sessions (all instances)"),
                    sessions_max,
                    session_limit,
                    metric("QueuedSteps", "Maximum", "queued synthesis steps"),
                ],
            ),
        )
        self.dashboard.add_widgets(
            _graph(
                "Errors",
                [errors, metric("Invocation5XXErrors", "Sum", "SageMaker 5XX", "AWS/SageMaker")],
                [error_rate],
            ),
            _graph(
                "Invocations",
                [metric("Invocations", "Sum", "SageMaker invocations", "AWS/SageMaker"), requests],
            ),
            _graph(
                "Instances in service",
                [metric("ActiveSessions", "SampleCount", "instances reporting")],
                [metric("AudioSeconds", "Sum", "audio seconds served")],
            ),
        )

    def _alarms(
        self,
        config: InfraConfig,
        latency_p95: cw.Metric,
        error_rate: cw.MathExpression,
        capacity_used: cw.MathExpression,
    ) -> dict[str, cw.Alarm]:
        """The three alarms, each over ``datapoints`` of its last ``periods`` periods."""
        name = self.endpoint_name
        above = cw.ComparisonOperator.GREATER_THAN_THRESHOLD

        def alarm(
            construct_id: str,
            description: str,
            metric: cw.IMetric,
            threshold: float,
            periods: tuple[int, int],
            comparison: cw.ComparisonOperator = above,
        ) -> cw.Alarm:
            return cw.Alarm(
                self,
                construct_id,
                alarm_description=description,
                metric=metric,
                threshold=threshold,
                evaluation_periods=periods[1],
                datapoints_to_alarm=periods[0],
                comparison_operator=comparison,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )

        latency_ms = config.first_chunk_p95_alarm_ms
        error_percent = config.error_rate_alarm_percent
        sessions_percent = config.sessions_alarm_percent
        return {
            "first_chunk_p95": alarm(
                "FirstChunkLatencyP95Alarm",
                f"{name}: first-chunk latency p95 above {latency_ms:g} ms in 3 of 5 minutes",
                latency_p95,
                latency_ms,
                (3, 5),
            ),
            "error_rate": alarm(
                "ErrorRateAlarm",
                f"{name}: more than {error_percent:g}% of requests answered with an error in 2 of 3 "
                "five-minute periods",
                error_rate,
                error_percent,
                (2, 3),
            ),
            "sessions_near_capacity": alarm(
                "SessionsNearCapacityAlarm",
                f"{name}: the busiest instance holds over {sessions_percent:g}% of its session limit for 3 "
                "minutes (new sessions will be refused)",
                capacity_used,
                sessions_percent,
                (3, 3),
                cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            ),
        }

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

        def metric(name: str, statistic: str, label: str) -> cw.Metric:
            return _metric(AGENT_NAMESPACE, {"Service": service}, name, statistic, label)

        self.dashboard = _dashboard(
            self,
            f"{service}-agent",
            f"# Voice agent `{service}`\nOne EMF line per answer (`{AGENT_NAMESPACE}`); each "
            "line's `TraceId` finds the answer's trace (spans `strands_voice.answer`).",
        )
        self.dashboard.add_widgets(
            _graph(
                "Time to first audio at the caller (ms)",
                [metric("TimeToFirstAudio", "p50", "p50"), metric("TimeToFirstAudio", "p95", "p95")],
            ),
            _graph(
                "Answers and interruptions",
                [metric("Answers", "Sum", "answers"), metric("Interrupted", "Sum", "interrupted")],
            ),
            _graph(
                "Speech errors and audio",
                [metric("SpeechErrors", "Sum", "speech errors")],
                [metric("AudioSeconds", "Sum", "audio seconds")],
            ),
        )
        logger.debug("service=<%s> | agent monitoring defined", service)
