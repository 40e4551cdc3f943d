"""The EMF writer against the specification's rules (tests/support/emf.py checks every line)."""

from __future__ import annotations

import pytest
from strands_voice_protocol.emf import EMF_UNITS, EmfWriter, Metric, emf_line
from support.emf import SPEC_UNITS, check_emf, dimension_sets, metrics_of


def test_units_are_the_specifications() -> None:
    assert EMF_UNITS == SPEC_UNITS


def test_line_carries_namespace_dimensions_units_and_values() -> None:
    line = emf_line(
        "StrandsVoice/Endpoint",
        {"Endpoint": "kokoro", "Route": "bidi"},
        [["Endpoint"], ["Endpoint", "Route"]],
        [Metric("FirstChunkLatency", "Milliseconds", 212.5), Metric("RealTimeFactor", "None", 0.25)],
        properties={"RequestId": "r1"},
        timestamp_ms=1_764_600_000_000,
    )
    root = check_emf(line)
    assert "\n" not in line
    assert root["_aws"]["Timestamp"] == 1_764_600_000_000
    assert root["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "StrandsVoice/Endpoint"
    assert dimension_sets(root) == [["Endpoint"], ["Endpoint", "Route"]]
    assert metrics_of(root) == {"FirstChunkLatency": "Milliseconds", "RealTimeFactor": "None"}
    assert (root["Endpoint"], root["Route"], root["RequestId"]) == ("kokoro", "bidi", "r1")
    assert (root["FirstChunkLatency"], root["RealTimeFactor"]) == (212.5, 0.25)


@pytest.mark.parametrize(
    ("dimensions", "sets", "metrics", "properties"),
    [
        ({"A": "x"}, [["B"]], [Metric("M", "Count", 1)], None),  # a dimension with no value
        ({"A": "x"}, [["A"]], [], None),  # no metric
        ({"A": "x"}, [["A"]], [Metric("M", "Count", 1), Metric("M", "Count", 2)], None),  # repeated
        ({"A": "x"}, [["A"]], [Metric("M", "Count", 1)], {"M": 3}),  # a property hides a metric
        ({"A": "x"}, [["A"]], [Metric("M", "Count", float("nan"))], None),  # not a number JSON allows
    ],
)
def test_invalid_lines_are_refused(
    dimensions: dict[str, str],
    sets: list[list[str]],
    metrics: list[Metric],
    properties: dict[str, int] | None,
) -> None:
    with pytest.raises(ValueError):
        emf_line("N", dimensions, sets, metrics, properties)


def test_unknown_unit_is_refused() -> None:
    with pytest.raises(ValueError):
        Metric("M", "ms", 1.0)


def test_writer_adds_its_fixed_dimensions() -> None:
    lines: list[str] = []
    writer = EmfWriter("StrandsVoice/App", {"Service": "voice"}, lines.append)
    writer.emit([Metric("Answers", "Count", 1)])
    writer.emit(
        [Metric("Errors", "Count", 2)],
        extra_dimensions={"ErrorCode": "busy"},
        dimension_sets=[["Service", "ErrorCode"]],
    )
    first, second = (check_emf(line) for line in lines)
    assert dimension_sets(first) == [["Service"]] and first["Answers"] == 1
    assert dimension_sets(second) == [["Service", "ErrorCode"]] and second["ErrorCode"] == "busy"
