"""The speakers' bounded buffer (sans-I/O): order, silence after the audio, the bound, barge-in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_voice.devices._playback import PlaybackBuffer


def test_audio_comes_out_in_order_then_silence() -> None:
    buffer = PlaybackBuffer(capacity=100)
    assert buffer.push(b"\x01\x02\x03\x04") and buffer.push(b"\x05\x06")
    first = buffer.pull(4)
    assert first.data == b"\x01\x02\x03\x04" and first.audio_bytes == 4
    rest = buffer.pull(6)
    assert rest.data == b"\x05\x06" + bytes(4) and rest.audio_bytes == 2
    assert buffer.queued == 0 and buffer.pull(2).audio_bytes == 0


def test_the_bound_refuses_a_push_that_does_not_fit_whole() -> None:
    buffer = PlaybackBuffer(capacity=8)
    assert buffer.push(bytes(6))
    assert not buffer.room_for(4) and not buffer.push(b"\x01" * 4)
    assert buffer.queued == 6
    buffer.pull(4)
    assert buffer.push(b"\x01" * 4) and buffer.queued == 6


def test_a_push_larger_than_the_bound_fits_only_into_an_empty_buffer() -> None:
    buffer = PlaybackBuffer(capacity=4)
    assert buffer.push(bytes(10)) and buffer.queued == 10
    assert not buffer.push(bytes(2))


def test_clear_drops_everything_at_once() -> None:
    buffer = PlaybackBuffer(capacity=100)
    buffer.push(b"\x01" * 10)
    buffer.pull(3 * 2)
    assert buffer.clear() == 4
    assert buffer.queued == 0 and buffer.pull(4).data == bytes(4)


def test_frames_stay_whole_when_a_chunk_ends_mid_sample() -> None:
    buffer = PlaybackBuffer(capacity=100, frame_bytes=2)
    assert buffer.push(b"\x01\x02\x03") and buffer.queued == 2
    assert buffer.push(b"\x04") and buffer.queued == 4
    assert buffer.pull(4).data == b"\x01\x02\x03\x04"


def test_a_buffer_smaller_than_a_frame_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one frame"):
        PlaybackBuffer(capacity=1)


@given(
    chunks=st.lists(st.binary(min_size=0, max_size=50).map(lambda b: b[: len(b) // 2 * 2]), max_size=20),
    pulls=st.lists(st.integers(min_value=0, max_value=40).map(lambda n: n * 2), max_size=30),
)
def test_what_is_pulled_is_what_was_pushed_in_order(chunks: list[bytes], pulls: list[int]) -> None:
    buffer = PlaybackBuffer(capacity=10_000)
    for chunk in chunks:
        assert buffer.push(chunk)
    played = b""
    for size in pulls:
        pulled = buffer.pull(size)
        assert len(pulled.data) == size and pulled.data[pulled.audio_bytes :] == bytes(
            size - pulled.audio_bytes
        )
        played += pulled.data[: pulled.audio_bytes]
    pushed = b"".join(chunks)
    assert pushed.startswith(played)
    assert buffer.queued == len(pushed) - len(played)
