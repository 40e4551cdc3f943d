"""What a Japanese caller heard of an answer cut mid-sentence: the played sentences and the words of the
cut one whose end was played, joined without spaces (Japanese is written without them)."""

from __future__ import annotations

from strands_voice_protocol.events import EventBuilder
from strands_voice_protocol.frames import WordTiming

from strands_voice.speech._heard import DeliveryLog, heard_text

CHUNK = 24_000  # 0.5 s of pcm16 a chunk
FIRST = "プレミアムプランの概要をご説明します。"
# The endpoint's word timestamps for the second sentence (one per word OpenJTalk found).
WORDS = [
    ("料金", 0.05, 0.3),
    ("は", 0.3, 0.4),
    ("毎月", 0.4, 0.7),
    ("お支払い", 0.7, 1.2),
    ("です", 1.2, 1.4),
]


def test_a_cut_japanese_sentence_is_heard_up_to_a_word() -> None:
    now = [0.0]
    log = DeliveryLog(lambda seq: CHUNK, clock=lambda: now[0])
    builder = EventBuilder()
    log.delivered(builder.audio_chunk(seq=0, sentence=0, data=b"x"))
    log.delivered(builder.sentence_complete(sentence=0, text=FIRST, duration_s=0.5))
    words = [WordTiming(word, start, end, 0, len(word)) for word, start, end in WORDS]
    log.delivered(builder.words(sentence=1, words=words))
    for seq in (1, 2, 3):
        log.delivered(builder.audio_chunk(seq=seq, sentence=1, data=b"x"))
    now[0] = 0.5 + 0.75  # 0.75 s into the second sentence: 料金, は and 毎月 were played to their end
    fields = log.interrupted_fields()
    assert fields["heard_text"] == FIRST + "料金は毎月"
    assert (fields["sentences_done"], fields["sentence_cut"]) == ([0], 1)


def test_pieces_join_with_spaces_only_where_the_script_has_them() -> None:
    assert heard_text(["はい。", "OK."], ["料金", "は"]) == "はい。 OK. 料金は"
    assert heard_text(["Hello there."], ["the", "price"]) == "Hello there. the price"
