"""The payload's ``normalize`` and ``timestamps`` options."""

from __future__ import annotations

import pytest
from agentcore_app.payload import PayloadError, parse_payload


def test_normalize_and_timestamps_default_to_on_and_off() -> None:
    request = parse_payload({"prompt": "Hi"})
    assert request.options.normalize is True and request.options.timestamps is False
    request = parse_payload({"prompt": "Hi", "normalize": None, "timestamps": None})
    assert request.options.normalize is True and request.options.timestamps is False


def test_normalize_and_timestamps_are_read() -> None:
    request = parse_payload({"prompt": "Hi", "normalize": False, "timestamps": True})
    assert request.options.normalize is False and request.options.timestamps is True


@pytest.mark.parametrize("field", ["normalize", "timestamps"])
def test_a_flag_that_is_not_a_boolean_names_the_field(field: str) -> None:
    with pytest.raises(PayloadError, match=field):
        parse_payload({"prompt": "Hi", field: "yes"})
