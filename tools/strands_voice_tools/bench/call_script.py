"""What the caller says in one of ``bench --talk``'s turn-taking calls, and when.

A call has two parts. Over answers: a question whose (long) answer plays 1.5 s, then each backchannel and
noise of the plan said over it, 2.5 s watched after each; the interruption last (its short reply played
out). Whenever an answer has stopped, the next question starts a new one. Then, in silence, each paused
sentence, its answer played out. The stand-in model is told before each utterance what to answer to it
(:func:`run_call` sets its text): the long answer to a question, "Okay." to a backchannel or a noise the
system takes as a turn, a short reply to the interruption and to a paused sentence.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from strands_voice_tools.bench.call_link import CallLink
from strands_voice_tools.bench.turn_set import Kind, Said

__all__ = ["ANSWERS", "LONG_ANSWER", "Answers", "CallPlan", "plan_call", "run_call"]

LONG_ANSWER: Final = (
    "The premium plan costs twenty five dollars a month. You can cancel it at any time without a fee. "
    "It includes unlimited cloud storage for your photos and videos, and priority support from our team. "
    "You can also use it offline on up to five devices at the same time. "
    "Most customers upgrade in their first week, when the free storage runs out. "
    "If you like, I can start a free trial for you right now."
)
ACK: Final = "Okay."
REPLY: Final = "It costs twenty five dollars a month."
PAUSED_REPLY: Final = "Sure, I can help you with that."
LONG_ANSWER_JA: Final = (
    "プレミアムプランは月額二十五ドルです。いつでも無料で解約できます。"
    "写真と動画のための無制限のクラウドストレージと、サポートチームによる優先対応が含まれます。"
    "最大五台の端末で、オフラインでも同時にお使いいただけます。"
    "ほとんどのお客様は、無料のストレージがいっぱいになる最初の週にアップグレードされます。"
    "よろしければ、今すぐ無料体験を始めることもできます。"
)


@dataclass(frozen=True)
class Answers:
    """What the stand-in says, in one language: the long answer, to a backchannel or noise taken as a
    turn, to the interruption, to a paused sentence."""

    long: str
    ack: str
    reply: str
    paused_reply: str


#: The stand-in's answers by Kokoro language letter (the caller's).
ANSWERS: Final[dict[str, Answers]] = {
    "a": Answers(LONG_ANSWER, ACK, REPLY, PAUSED_REPLY),
    "j": Answers(
        LONG_ANSWER_JA, "わかりました。", "月額二十五ドルです。", "かしこまりました。お調べします。"
    ),
}
#: The stand-in's first sentence is ready this long after it is asked.
FIRST_SENTENCE_S: Final = 0.5
#: How long an answer plays before the caller speaks over it.
LEAD_S: Final = 1.5
#: How long the caller waits after speaking over an answer.
WATCH_S: Final = 2.5
#: Silence that means an answer is over.
QUIET_S: Final = 1.0
#: The longest wait for an answer.
ANSWER_WITHIN_S: Final = 30.0
Progress = Callable[[str], None]


@dataclass(frozen=True)
class CallPlan:
    """The utterances of one call.

    Attributes:
        questions: Asked in turn whenever an answer is needed.
        over_answer: Said over answers, in order (backchannels and noises, then interruptions).
        paused: Said in silence after them.
    """

    questions: tuple[Said, ...]
    over_answer: tuple[Said, ...]
    paused: tuple[Said, ...]


def plan_call(spoken: dict[Kind, list[Said]], trial: int, *, quick: bool = False) -> CallPlan:
    """Trial ``trial``'s plan over a spoken set: every backchannel, a noise, the interruption and two paused
    sentences (rotating with the trial); ``quick``: one backchannel, the interruption, one paused sentence."""

    def turn(kind: Kind, count: int) -> tuple[Said, ...]:
        items = spoken[kind]
        return tuple(items[(trial * count + index) % len(items)] for index in range(count))

    if quick:
        over = (*turn("backchannel", 1), *turn("interruption", 1))
        return CallPlan(turn("question", 3), over, turn("paused", 1))
    over = (*turn("backchannel", 3), *turn("noise", 1), *turn("interruption", 1))
    return CallPlan(turn("question", 3), over, turn("paused", 2))


async def _ask(link: CallLink, model: Any, question: Said, progress: Progress, answers: Answers) -> bool:
    """Ask ``question`` in silence; True once its answer has played for :data:`LEAD_S`."""
    await link.quiet(QUIET_S, ANSWER_WITHIN_S)
    model.update_config(text=answers.long, first_sentence_s=FIRST_SENTENCE_S, total_s=3.0)
    said = await link.say(question)
    heard = await link.heard(said.end, ANSWER_WITHIN_S)
    if heard is None:
        progress(f"no answer to {question.text!r} within {ANSWER_WITHIN_S:.0f} s")
        return False
    await asyncio.sleep(max(0.0, heard + LEAD_S - time.perf_counter()))
    return True


def _stopped_since(link: CallLink, start: float) -> bool:
    return any(event.get("type") == "interrupted" and at >= start for at, event in link.log.events)


async def _over_answers(
    link: CallLink, model: Any, plan: CallPlan, progress: Progress, answers: Answers
) -> None:
    questions = itertools.cycle(plan.questions)
    playing = False
    for item in plan.over_answer:
        if not playing and not await _ask(link, model, next(questions), progress, answers):
            continue
        reply = answers.reply if item.kind == "interruption" else answers.ack
        model.update_config(text=reply, total_s=FIRST_SENTENCE_S)
        said = await link.say(item)
        if item.kind == "interruption":
            await link.heard(said.end, ANSWER_WITHIN_S)
            await link.quiet(QUIET_S, ANSWER_WITHIN_S)
            playing = False
            continue
        await asyncio.sleep(max(0.0, said.end + WATCH_S - time.perf_counter()))
        playing = link.playing() and not _stopped_since(link, said.start)


async def run_call(link: CallLink, model: Any, plan: CallPlan, progress: Progress, lang: str = "a") -> None:
    """Say ``plan`` on ``link`` (see the module docstring), scripting the stand-in ``model``'s answers in
    the caller's language ``lang``."""
    answers = ANSWERS[lang]
    await _over_answers(link, model, plan, progress, answers)
    for sentence in plan.paused:
        await link.quiet(QUIET_S, ANSWER_WITHIN_S)
        model.update_config(text=answers.paused_reply, first_sentence_s=FIRST_SENTENCE_S, total_s=1.0)
        said = await link.say(sentence)
        await link.heard(said.end, ANSWER_WITHIN_S)
        await link.quiet(QUIET_S, ANSWER_WITHIN_S)
