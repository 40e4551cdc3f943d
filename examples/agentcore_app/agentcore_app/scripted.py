"""A scripted stand-in LLM: a real Strands ``Model`` that streams a fixed answer with realistic pacing.

This is NOT a language model. It exists so the demo, the benchmarks and the tests can run offline and
repeatably: every call streams the same multi-paragraph answer as ``contentBlockDelta`` text events,
word by word, with sleeps between them. With ``remember``, in a conversation (an earlier question in the
messages) the answer opens with ``Earlier you asked: <that question>``, so a follow-up turn shows the
memory. By
default the first sentence is complete after about 0.6 s and the whole answer after about 5 s, which is
roughly what a fast hosted model does.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, Final, TypedDict, TypeVar

from pydantic import BaseModel
from strands.models.model import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.sentences import sentence_ends

__all__ = [
    "SCRIPTED_ANSWER",
    "SCRIPTED_ANSWERS",
    "ScriptedModel",
    "ScriptedModelConfig",
    "caller_language",
    "split_tokens",
]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

#: The fixed answer: several sentences, a numbered list, a price and abbreviations, in Markdown.
SCRIPTED_ANSWER: Final = (
    "Here's a quick overview of the Premium plan, which suits most households well. "
    "It costs **$24.99 per month**, and you can cancel at any time without a fee.\n"
    "\n"
    "The plan includes three main features:\n"
    "\n"
    "1. Unlimited cloud storage for your photos and videos.\n"
    "2. Priority support from our team, available 24/7.\n"
    "3. Offline access on up to five devices.\n"
    "\n"
    "Most customers upgrade in their first week, e.g. when the free storage runs out. "
    "Dr. Lee's team reviews every account within approx. two business days. "
    "If you like, I can start a 14-day free trial for you right now. "
    "Just tell me which e-mail address to use."
)

#: The same answer in Japanese (``scripted?lang=ja``, or a question in Japanese).
SCRIPTED_ANSWER_JA: Final = (
    "プレミアムプランの概要を簡単にご説明します。ほとんどのご家庭に合うプランです。"
    "料金は月額二十四ドル九十九セントで、いつでも無料で解約できます。\n"
    "\n"
    "主な特長は三つあります。\n"
    "\n"
    "1. 写真と動画のための無制限のクラウドストレージ。\n"
    "2. サポートチームによる優先対応。\n"
    "3. 最大五台の端末でのオフライン利用。\n"
    "\n"
    "よろしければ、今すぐ十四日間の無料体験を始めることもできます。"
    "どのメールアドレスを使うか教えてください。"
)
#: The same answer in Spanish.
SCRIPTED_ANSWER_ES: Final = (
    "Le cuento brevemente el plan Premium, que se adapta bien a la mayoría de los hogares. "
    "Cuesta veinticuatro dólares con noventa y nueve al mes, y puede cancelarlo cuando quiera.\n"
    "\n"
    "El plan incluye tres ventajas principales:\n"
    "\n"
    "1. Almacenamiento ilimitado en la nube para sus fotos y videos.\n"
    "2. Atención prioritaria de nuestro equipo.\n"
    "3. Acceso sin conexión en hasta cinco dispositivos.\n"
    "\n"
    "Si quiere, puedo empezar ahora mismo una prueba gratuita de catorce días. "
    "Dígame qué correo electrónico usamos."
)
#: The same answer in Mandarin.
SCRIPTED_ANSWER_ZH: Final = (
    "我简单介绍一下高级套餐，它适合大多数家庭。"
    "每月二十四点九九美元，可以随时免费取消。\n"
    "\n"
    "套餐包括三项主要功能：\n"
    "\n"
    "1. 照片和视频的无限云存储。\n"
    "2. 我们团队的优先支持。\n"
    "3. 最多五台设备的离线使用。\n"
    "\n"
    "如果您愿意，我现在就可以为您开始十四天的免费试用。请告诉我用哪个电子邮箱。"
)
#: The scripted answers by language (the ``lang`` option of ``scripted``).
SCRIPTED_ANSWERS: Final[dict[str, str]] = {
    "en": SCRIPTED_ANSWER,
    "ja": SCRIPTED_ANSWER_JA,
    "es": SCRIPTED_ANSWER_ES,
    "zh": SCRIPTED_ANSWER_ZH,
}
_KANA: Final = re.compile(r"[\u3040-\u30ff]")
_HAN: Final = re.compile(r"[\u4e00-\u9fff]")
_SPANISH: Final = re.compile(r"[¿¡ñÑ]")


def caller_language(text: str) -> str:
    """The language of the caller's words, as far as their writing tells (kana: Japanese; Chinese
    characters without kana: Mandarin; ``¿``, ``¡``, ``ñ``: Spanish); English otherwise."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "es" if _SPANISH.search(text) else "en"


# Japanese punctuation, kana, kanji and full-width forms: written without spaces between words.
_CJK: Final = "\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef"
# A word and its trailing whitespace, or one CJK character (a model streams those a few at a time).
_TOKEN = re.compile(rf"[{_CJK}]\s*|[^\s{_CJK}]+\s*|\s+")


def _questions(messages: Messages) -> list[str]:
    return [
        str(block["text"]).strip()
        for message in messages
        if message["role"] == "user"
        for block in message["content"]
        if "text" in block
    ]


def _remembering(messages: Messages) -> str:
    """``Earlier you asked: <the previous question>`` when there was one, else nothing."""
    questions = _questions(messages)
    if len(questions) < 2:
        return ""
    earlier = questions[-2].rstrip(".?! ")
    return f"Earlier you asked: {earlier}. "


class ScriptedModelConfig(TypedDict, total=False):
    """Configuration of :class:`ScriptedModel`.

    Attributes:
        text: The answer to stream.
        first_sentence_s: Seconds until the first sentence has been streamed completely.
        total_s: Seconds until the whole answer has been streamed.
        model_id: A name for logs and traces.
        remember: Open the answer with the previous question, when there is one.
    """

    text: str
    first_sentence_s: float
    total_s: float
    model_id: str
    remember: bool


def split_tokens(text: str) -> list[str]:
    """Split text into word-sized tokens (each keeps its trailing whitespace); ``"".join`` restores it."""
    return _TOKEN.findall(text)


def _first_sentence_tokens(tokens: list[str]) -> int:
    """How many tokens make up the first sentence, where the chunker ends it (all of them when the text
    has no sentence end)."""
    ends = sentence_ends("".join(tokens))
    if not ends:
        return len(tokens)
    consumed = 0
    for index, token in enumerate(tokens):
        consumed += len(token)
        if consumed >= ends[0]:
            return index + 1
    return len(tokens)


class ScriptedModel(Model):
    """Offline stand-in LLM streaming a fixed answer (:data:`SCRIPTED_ANSWER` by default) with sleeps.

    It ignores the prompt and tools. The first sentence's tokens are spread evenly over
    ``first_sentence_s`` seconds (the first token arrives after one interval, like a time to first token),
    and the remaining tokens over ``total_s - first_sentence_s``.

    Example:
        ```python
        agent = Agent(model=ScriptedModel(first_sentence_s=0.2, total_s=1.0), callback_handler=None)
        ```
    """

    def __init__(
        self,
        text: str | None = None,
        first_sentence_s: float = 0.6,
        total_s: float = 5.0,
        remember: bool = False,
    ) -> None:
        """Create the model.

        Args:
            text: The answer to stream; when None, :data:`SCRIPTED_ANSWER` in the caller's language (as
                far as the writing of their last question tells: :func:`caller_language`).
            first_sentence_s: Seconds until the first sentence is complete.
            total_s: Seconds until the whole answer is complete (at least ``first_sentence_s``).
            remember: Open the answer with the previous question, when there is one (shows memory).
        """
        self.config: ScriptedModelConfig = {
            "text": SCRIPTED_ANSWER if text is None else text,
            "first_sentence_s": first_sentence_s,
            "total_s": max(total_s, first_sentence_s),
            "model_id": "scripted",
            "remember": remember,
        }
        self._follows_caller = text is None

    def update_config(self, **model_config: Any) -> None:
        """Update the configuration (``text``, ``first_sentence_s``, ``total_s``, ``model_id``)."""
        self.config.update(model_config)  # type: ignore[typeddict-item]
        self._follows_caller = self._follows_caller and "text" not in model_config

    def get_config(self) -> ScriptedModelConfig:
        """Return the configuration."""
        return self.config

    def script_for(self, messages: Messages) -> ScriptedModelConfig:
        """The script of the turn that ``messages`` ask for: its ``text`` and pacing (:attr:`config`).

        A stand-in whose answer depends on what was said overrides this (not :meth:`stream`), e.g. to
        answer a barge-in with a short "Okay.".
        """
        questions = _questions(messages)
        if not self._follows_caller or not questions:
            return self.config
        script = self.config.copy()
        script["text"] = SCRIPTED_ANSWERS[caller_language(questions[-1])]
        return script

    @staticmethod
    def _delays(tokens: list[str], script: ScriptedModelConfig) -> list[float]:
        """Seconds to sleep before each token."""
        first = _first_sentence_tokens(tokens)
        rest = len(tokens) - first
        first_s = float(script["first_sentence_s"])
        rest_s = max(float(script["total_s"]) - first_s, 0.0)
        delays = [first_s / first] * first if first else []
        delays += [rest_s / rest] * rest if rest else []
        return delays

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        """Stream the scripted answer as Strands stream events (text deltas with sleeps between them).

        Args:
            messages: Only for an earlier question (the answer is fixed otherwise).
            tool_specs: Ignored.
            system_prompt: Ignored.
            **kwargs: ``cancel_signal`` (a ``threading.Event``) stops the stream early; the rest is ignored.

        Yields:
            ``messageStart``, ``contentBlockStart``, ``contentBlockDelta`` per token, ``contentBlockStop``,
            ``messageStop`` and ``metadata`` events.
        """
        cancel_signal = kwargs.get("cancel_signal")
        script = self.script_for(messages)
        opening = _remembering(messages) if script.get("remember") else ""
        tokens = split_tokens(opening + str(script["text"]))
        started = time.monotonic()
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        # Sleep to absolute deadlines so the pacing does not drift on a busy machine.
        deadline = started
        for token, delay in zip(tokens, self._delays(tokens, script), strict=True):
            deadline += delay
            await asyncio.sleep(max(deadline - time.monotonic(), 0.0))
            if cancel_signal is not None and cancel_signal.is_set():
                logger.debug("scripted model | cancelled")
                break
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        latency_ms = int((time.monotonic() - started) * 1000)
        yield {
            "metadata": {
                "usage": {"inputTokens": 0, "outputTokens": len(tokens), "totalTokens": len(tokens)},
                "metrics": {"latencyMs": latency_ms},
            }
        }

    async def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Not supported: a scripted answer cannot fill an arbitrary schema.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("ScriptedModel streams a fixed text answer; it has no structured output")
        yield {}  # pragma: no cover - makes this an async generator
