"""CloudWatch Embedded Metric Format (EMF): metrics as JSON log lines.

A SageMaker endpoint's stdout goes to CloudWatch Logs, where a line in EMF becomes metrics with no agent
or SDK (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):

```json
{"_aws": {"Timestamp": 1764600000000,
          "CloudWatchMetrics": [{"Namespace": "StrandsVoice/Endpoint",
                                 "Dimensions": [["Endpoint"], ["Endpoint", "Route"]],
                                 "Metrics": [{"Name": "FirstChunkLatency", "Unit": "Milliseconds"}]}]},
 "Endpoint": "kokoro", "Route": "bidi", "FirstChunkLatency": 212.5}
```

Every dimension named in ``Dimensions`` and every metric in ``Metrics`` is a member of the root object;
other members are properties (searchable in Logs Insights, not metrics). The maintained
``aws-embedded-metrics`` package is asynchronous and built around its own environment detection and
agent sinks; the format is small, so it is written here (sans-I/O apart from :func:`stdout_writer`) and
checked against the specification in the tests. The endpoint (:mod:`kokoro_endpoint.serving.metrics`) and the
example app (:mod:`agentcore_app.metrics`) both write through it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from strands_voice_protocol.errors import ConfigurationError

__all__ = [
    "AGENT_NAMESPACE",
    "EMF_UNITS",
    "ENDPOINT_NAMESPACE",
    "MAX_DIMENSIONS",
    "MAX_METRICS",
    "EmfWriter",
    "Metric",
    "emf_line",
    "stdout_writer",
    "writer_from_env",
]

#: The CloudWatch namespace of the TTS endpoint's metrics (the CDK dashboard and alarms read it).
ENDPOINT_NAMESPACE: Final = "StrandsVoice/Endpoint"
#: The CloudWatch namespace of the example agent app's per-answer metrics.
AGENT_NAMESPACE: Final = "StrandsVoice/Agent"

#: The units CloudWatch accepts (the ``Unit`` of a metric definition).
EMF_UNITS: Final = frozenset(
    {
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    }
)
#: At most this many metrics in one directive.
MAX_METRICS: Final = 100
#: At most this many dimensions in one dimension set.
MAX_DIMENSIONS: Final = 30


@dataclass(frozen=True)
class Metric:
    """One metric value of a line: its name, CloudWatch unit and value."""

    name: str
    unit: str
    value: float

    def __post_init__(self) -> None:
        if self.unit not in EMF_UNITS:
            raise ValueError(f"{self.unit!r} is not a CloudWatch unit")


def emf_line(
    namespace: str,
    dimensions: Mapping[str, str],
    dimension_sets: Sequence[Sequence[str]],
    metrics: Sequence[Metric],
    properties: Mapping[str, str | int | float | bool] | None = None,
    timestamp_ms: int | None = None,
) -> str:
    """One EMF log line (no newline).

    Args:
        namespace: The CloudWatch namespace.
        dimensions: Every dimension's value (strings).
        dimension_sets: The dimension sets each metric is published under (names from ``dimensions``).
        metrics: The metrics (at most :data:`MAX_METRICS`, names unique).
        properties: Extra members, not metrics (must not clash with a dimension or metric name).
        timestamp_ms: Milliseconds since the epoch (now when None).

    Raises:
        ValueError: The line would not be valid EMF.
    """
    if not metrics or len(metrics) > MAX_METRICS:
        raise ValueError(f"a line carries 1 to {MAX_METRICS} metrics")
    names = [metric.name for metric in metrics]
    if len(set(names)) != len(names):
        raise ValueError("metric names repeat")
    for dimension_set in dimension_sets:
        if len(dimension_set) > MAX_DIMENSIONS or any(name not in dimensions for name in dimension_set):
            raise ValueError(f"dimension set {list(dimension_set)} names an unknown dimension or too many")
    extra = dict(properties or {})
    if set(extra) & (set(dimensions) | set(names) | {"_aws"}):
        raise ValueError("a property clashes with a dimension or a metric")
    root: dict[str, object] = {
        "_aws": {
            "Timestamp": int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [list(dimension_set) for dimension_set in dimension_sets],
                    "Metrics": [{"Name": metric.name, "Unit": metric.unit} for metric in metrics],
                }
            ],
        },
        **{name: str(value) for name, value in dimensions.items()},
        **extra,
    }
    for metric in metrics:
        root[metric.name] = metric.value
    return json.dumps(root, separators=(",", ":"), allow_nan=False)


_stdout_lock = threading.Lock()


def stdout_writer(line: str) -> None:
    """Write one line to stdout at once (whole lines, even from several threads)."""
    with _stdout_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class EmfWriter:
    """Writes EMF lines of one namespace and fixed dimensions.

    Args:
        namespace: The CloudWatch namespace.
        dimensions: Dimensions every line carries (``{"Endpoint": "kokoro"}``).
        write: Where a line goes (stdout by default).
    """

    def __init__(
        self,
        namespace: str,
        dimensions: Mapping[str, str],
        write: Callable[[str], None] = stdout_writer,
    ) -> None:
        self.namespace = namespace
        self.dimensions = dict(dimensions)
        self._write = write

    def emit(
        self,
        metrics: Sequence[Metric],
        *,
        extra_dimensions: Mapping[str, str] | None = None,
        dimension_sets: Sequence[Sequence[str]] | None = None,
        properties: Mapping[str, str | int | float | bool] | None = None,
    ) -> None:
        """Write one line: ``metrics`` under the fixed dimensions (and, per set, ``extra_dimensions``).

        Args:
            metrics: The values.
            extra_dimensions: Dimensions of this line only.
            dimension_sets: The sets to publish under (default: the fixed dimensions alone).
            properties: Extra members, not metrics.
        """
        dimensions = {**self.dimensions, **(extra_dimensions or {})}
        sets = dimension_sets if dimension_sets is not None else [list(self.dimensions)]
        self._write(emf_line(self.namespace, dimensions, sets, metrics, properties))

    def emit_error_counts(self, counts: Mapping[str, int]) -> None:
        """Write one ``Errors`` line per error code, under the fixed dimensions plus ``ErrorCode``."""
        for code, count in sorted(counts.items()):
            self.emit(
                [Metric("Errors", "Count", count)],
                extra_dimensions={"ErrorCode": code},
                dimension_sets=[[*self.dimensions, "ErrorCode"]],
            )


def writer_from_env(
    environ: Mapping[str, str],
    prefix: str,
    dimension: tuple[str, str],
    namespace: str,
    write: Callable[[str], None] = stdout_writer,
) -> EmfWriter | None:
    """The writer ``{prefix}_METRICS`` asks for: ``emf`` (lines through ``write``) or unset/``off`` (None).

    ``{prefix}_METRICS_NAMESPACE`` overrides ``namespace``; ``{prefix}_METRICS_{NAME}`` overrides the value
    of the one fixed dimension ``(Name, default value)``.

    Raises:
        ConfigurationError: ``{prefix}_METRICS`` names something else.
    """
    variable = f"{prefix}_METRICS"
    mode = environ.get(variable, "off").strip().lower()
    if mode in ("", "off", "none"):
        return None
    if mode != "emf":
        raise ConfigurationError(f"{variable} must be 'emf' or 'off', not {mode!r}")
    name, default = dimension
    value = environ.get(f"{variable}_{name.upper()}") or default
    return EmfWriter(environ.get(f"{variable}_NAMESPACE") or namespace, {name: value}, write)
