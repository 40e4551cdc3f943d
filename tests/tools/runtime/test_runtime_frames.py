"""The pieces under the runtime clients: frames within AgentCore's 32 KB, and the close a relay passes on."""

from __future__ import annotations

from strands_voice_tools.runtime.connect import FRAME_LIMIT
from strands_voice_tools.runtime.relay import relayed_close
from strands_voice_tools.talk.remote import split_frames


def test_audio_is_cut_into_frames_within_32_kb_whole_samples_in_order() -> None:
    audio = bytes(range(256)) * 300  # 76,800 bytes
    frames = split_frames(audio)
    assert FRAME_LIMIT == 32 * 1024
    assert all(len(frame) <= FRAME_LIMIT and len(frame) % 2 == 0 for frame in frames)
    assert b"".join(frames) == audio and len(frames) == 3
    assert split_frames(b"\x01\x00" * 320) == [b"\x01\x00" * 320]  # a 20 ms frame goes as it is


def test_a_close_is_passed_on_with_its_code_or_one_that_can_be_sent() -> None:
    assert relayed_close(4000, "the agent hung up", clean=True) == (4000, "the agent hung up")
    assert relayed_close(1008, "bad frame", clean=True) == (1008, "bad frame")
    assert relayed_close(1005, "", clean=True) == (1000, "")  # a close frame without a code
    assert relayed_close(None, None, clean=False) == (1011, "the other side of the relay went away")
    assert relayed_close(1006, "", clean=False)[0] == 1011
