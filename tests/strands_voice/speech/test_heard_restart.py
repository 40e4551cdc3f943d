"""What the caller heard when a sentence was restarted: its void audio is neither kept nor counted.

A ``sentence_restart`` tells the player to drop what it holds of the sentence; the sentence's audio then
comes again from its start. The delivery log (the record an ``interrupted`` event and a barge-in's
``audio_end`` are made from) must count the audio the caller keeps, as the speaker does.
"""

from __future__ import annotations

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import EventBuilder

from strands_voice.speech._heard import CONFIRM_GRACE_S, DeliveryLog

CHUNK = 12_000  # 0.25 s of pcm16 a chunk


def restarted_log(now: list[float]) -> DeliveryLog:
    """Sentence 0: one chunk, restarted, then two chunks and its end; sentence 1: one chunk."""
    log = DeliveryLog(lambda seq: CHUNK, clock=lambda: now[0])
    builder = EventBuilder()
    log.delivered(builder.audio_chunk(seq=0, sentence=0, data=b"x"))
    log.delivered(builder.sentence_restart(sentence=0, dropped_s=CHUNK / BYTES_PER_SECOND))
    log.delivered(builder.audio_chunk(seq=1, sentence=0, data=b"x"))
    log.delivered(builder.audio_chunk(seq=2, sentence=0, data=b"x"))
    log.delivered(builder.sentence_complete(sentence=0, text="S0.", duration_s=0.5))
    log.delivered(builder.audio_chunk(seq=3, sentence=1, data=b"x"))
    return log


def test_a_restarted_sentences_void_audio_is_not_counted() -> None:
    log = restarted_log([0.0])
    assert log.chunks == 4  # four chunks reached the caller
    assert log.pcm_bytes == 3 * CHUNK  # the first one was dropped by the player
    assert log.duration_s == 0.75


def test_playback_after_a_restart_hears_the_replay_from_its_start() -> None:
    now = [0.0]
    log = restarted_log(now)
    assert log.interrupted_fields() == {"heard_text": "", "sentences_done": [], "sentence_cut": 0}
    now[0] += 0.4  # the replay of sentence 0 is 0.5 s long
    assert log.interrupted_fields() == {"heard_text": "", "sentences_done": [], "sentence_cut": 0}
    now[0] += 0.2  # 0.6 s: sentence 0 played in full, sentence 1 playing
    assert log.interrupted_fields() == {"heard_text": "S0.", "sentences_done": [0], "sentence_cut": 1}
    now[0] += 5.0  # playback stops at the end of what was delivered: sentence 1 is still the cut one
    assert log.interrupted_fields() == {"heard_text": "S0.", "sentences_done": [0], "sentence_cut": 1}
    assert log.duration_s == 0.75


def test_the_unplayed_audio_shrinks_as_it_plays_and_holds_while_paused() -> None:
    """What a consumer paces itself by: the delivered audio not yet played (the caller's clock)."""
    now = [0.0]
    log = DeliveryLog(lambda seq: CHUNK, clock=lambda: now[0])
    builder = EventBuilder()
    for seq in range(4):  # 1 s delivered at once
        log.delivered(builder.audio_chunk(seq=seq, sentence=0, data=b"x"))
    now[0] = 0.3
    assert round(log.unplayed_s, 3) == 0.7
    log.pause()
    now[0] = 0.8
    assert round(log.unplayed_s, 3) == 0.7  # the paused time is not played
    log.resume()
    now[0] = 1.0
    assert round(log.unplayed_s, 3) == 0.5
    now[0] = 5.0
    assert log.unplayed_s == 0.0  # played out: playback waits for more


def test_a_player_that_confirms_sentences_sets_what_was_heard() -> None:
    """A phone's marks: playback jumps to the end of a confirmed sentence, and runs at real time no further
    than the end of the first sentence not confirmed (the phone fell behind: it has not heard more)."""
    now = [0.0]
    log = DeliveryLog(lambda seq: CHUNK, clock=lambda: now[0])
    builder = EventBuilder()
    for seq, sentence in enumerate([0, 0, 1, 1, 2, 2]):  # three sentences of 0.5 s, delivered at once
        log.delivered(builder.audio_chunk(seq=seq, sentence=sentence, data=b"x"))
        if seq % 2:
            log.delivered(builder.sentence_complete(sentence=sentence, text=f"S{sentence}.", duration_s=0.5))
    now[0] = 1.2  # the clock alone: sentences 0 and 1 heard
    assert log.interrupted_fields()["sentences_done"] == [0, 1]
    log.confirm(0)  # the phone says: sentence 0 ended just now (it started late)
    assert log.played_s == 0.5
    now[0] = 1.5
    assert log.played_s == 0.8 and log.interrupted_fields()["sentence_cut"] == 1
    now[0] = 2.5  # no mark for sentence 1 came back: its end is as far as the phone got
    assert log.played_s == 1.0 and log.interrupted_fields()["sentences_done"] == [0]
    now[0] = 3.0
    assert log.played_s == 1.0 and log.interrupted_fields()["sentences_done"] == [0]
    log.confirm(1)
    now[0] = 3.2
    assert round(log.played_s, 3) == 1.2 and log.interrupted_fields()["heard_text"] == "S0. S1."
    log.confirm(7)  # a sentence it never got: nothing
    assert round(log.played_s, 3) == 1.2


def test_a_player_that_stops_confirming_is_believed_no_longer() -> None:
    """A lost mark must not hold the answer for ever: past the grace, the clock counts on alone."""
    now = [0.0]
    log = DeliveryLog(lambda seq: CHUNK, clock=lambda: now[0])
    builder = EventBuilder()
    for seq in range(4):  # two sentences of 0.5 s
        log.delivered(builder.audio_chunk(seq=seq, sentence=seq // 2, data=b"x"))
        if seq % 2:
            log.delivered(builder.sentence_complete(sentence=seq // 2, text=f"S{seq // 2}.", duration_s=0.5))
    log.confirm(0)
    now[0] = 0.6  # the end of sentence 1: held there, waiting for its mark
    assert log.played_s == 1.0 and log.unplayed_s == 0.0
    log.delivered(builder.audio_chunk(seq=4, sentence=2, data=b"x"))  # more audio came
    now[0] = 0.6 + CONFIRM_GRACE_S
    assert log.played_s == 1.0  # still held: within the grace
    now[0] = 0.7 + CONFIRM_GRACE_S
    assert log.played_s == 1.0  # the grace ran out just now: the clock counts from here
    now[0] = 0.9 + CONFIRM_GRACE_S
    assert round(log.played_s, 3) == 1.2 and log.interrupted_fields()["sentences_done"] == [0, 1]
