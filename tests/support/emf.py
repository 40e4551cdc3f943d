"""A checker of CloudWatch Embedded Metric Format lines, written from the specification
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html),
independent of the writer it checks (``strands_voice_protocol.emf``)."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

#: The specification's list of units.
SPEC_UNITS = {
    *"Seconds Microseconds Milliseconds Bytes Kilobytes Megabytes Gigabytes Terabytes".split(),
    *"Bits Kilobits Megabits Gigabits Terabits Percent Count None Count/Second".split(),
    *(f"{size}/Second" for size in "Bytes Kilobytes Megabytes Gigabytes Terabytes".split()),
    *(f"{size}/Second" for size in "Bits Kilobits Megabits Gigabits Terabits".split()),
}


def check_emf(line: str) -> dict[str, Any]:
    """Parse one line and assert every rule of the specification a writer can break; return the object."""
    root = json.loads(line)
    assert isinstance(root, dict), line
    metadata = root["_aws"]
    assert isinstance(metadata["Timestamp"], int) and metadata["Timestamp"] > 1_600_000_000_000
    directives = metadata["CloudWatchMetrics"]
    assert isinstance(directives, list) and directives
    for directive in directives:
        namespace = directive["Namespace"]
        assert isinstance(namespace, str) and 1 <= len(namespace) <= 255
        assert isinstance(directive["Dimensions"], list)
        for dimension_set in directive["Dimensions"]:
            assert isinstance(dimension_set, list) and len(dimension_set) <= 30
            for name in dimension_set:
                assert isinstance(root.get(name), str), f"dimension {name} must be a string member"
        metrics = directive["Metrics"]
        assert 1 <= len(metrics) <= 100
        names = [m["Name"] for m in metrics]
        assert len(set(names)) == len(names)
        for metric in metrics:
            assert set(metric) <= {"Name", "Unit", "StorageResolution"}
            assert metric.get("Unit", "None") in SPEC_UNITS, metric
            value = root[metric["Name"]]
            values = value if isinstance(value, list) else [value]
            assert 1 <= len(values) <= 100
            for v in values:
                assert isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v), metric
    return root


def metrics_of(root: dict[str, Any]) -> dict[str, str]:
    """``{metric name: unit}`` of a checked line."""
    return {m["Name"]: m["Unit"] for d in root["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}


def dimension_sets(root: dict[str, Any]) -> list[list[str]]:
    """The dimension sets of a checked line."""
    return [s for d in root["_aws"]["CloudWatchMetrics"] for s in d["Dimensions"]]


class EmfLines:
    """A writer's sink for tests: the EMF lines written, each checked against the specification."""

    def __init__(self) -> None:
        self.roots: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        root = check_emf(line)
        with self._lock:
            self.roots.append(root)

    def having(self, metric: str, **members: Any) -> list[dict[str, Any]]:
        """The lines with ``metric`` whose members equal ``members``."""
        with self._lock:
            roots = list(self.roots)
        return [r for r in roots if metric in r and all(r.get(k) == v for k, v in members.items())]

    def wait_for(self, metric: str, limit_s: float = 60.0, **members: Any) -> list[dict[str, Any]]:
        """Wait until at least one such line was written; all of them."""
        deadline = time.monotonic() + limit_s  # a hang guard, not a timing assertion
        while not (found := self.having(metric, **members)):
            assert time.monotonic() < deadline, f"no {metric} line with {members}"
            time.sleep(0.05)
        return found
