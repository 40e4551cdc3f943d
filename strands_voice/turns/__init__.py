"""Taking turns: who speaks when in a spoken conversation, one sans-I/O core for every front end.

:class:`TurnTaking` holds the rules (the caller's turns answered once they end; the caller's first sound
over an answer holds it, then real words barge in and a backchannel or a noise lets it go on; a turn that
begins before the last one's answer is heard joins it). Its inputs are the listener's events
(:mod:`strands_voice.listen`), the answer's progress (:class:`AnswerSpeaking`, :class:`AnswerEnded`),
typed turns, the Stop button and :class:`Tick`; its outputs are actions (:class:`StartAnswer`,
:class:`ReleaseAnswer` (a speculation held until the turn ends), :class:`PauseAnswer`,
:class:`ResumeAnswer`, :class:`InterruptAnswer`, :class:`DropAnswer`, :class:`ShowTranscript`, ...).
``VoiceCascade`` and the example app's ``/ws`` call are its two adapters.

:class:`TurnLoop` (``_loop``) is the one asyncio adapter: inputs from any task, the core woken when it
asks, each action handed to the front end in order.

Inside: ``_core`` (the rules), ``_state`` (the answer's phases and every transition in one table),
``_overlap`` (what words over an answer mean: :func:`is_backchannel`, :func:`interrupts`,
:func:`barges_in`), ``_speculation`` (which words at a pause to answer early),
``_inputs``, ``_actions``, ``_settings``.
"""

from __future__ import annotations

from strands_voice.turns._actions import (
    DropAnswer,
    InterruptAnswer,
    PauseAnswer,
    ReleaseAnswer,
    ReportError,
    ResumeAnswer,
    ShowSpeechStart,
    ShowTranscript,
    StartAnswer,
    TurnAction,
)
from strands_voice.turns._core import NOT_RECOGNIZED, TOO_LONG, TurnTaking
from strands_voice.turns._inputs import AnswerEnded, AnswerSpeaking, StopPressed, Tick, TurnInput, Typed
from strands_voice.turns._loop import TurnLoop
from strands_voice.turns._overlap import barges_in, interrupts, is_backchannel
from strands_voice.turns._settings import TurnSettings
from strands_voice.turns._state import Phase

__all__ = [
    "NOT_RECOGNIZED",
    "TOO_LONG",
    "AnswerEnded",
    "AnswerSpeaking",
    "DropAnswer",
    "InterruptAnswer",
    "PauseAnswer",
    "Phase",
    "ReleaseAnswer",
    "ReportError",
    "ResumeAnswer",
    "ShowSpeechStart",
    "ShowTranscript",
    "StartAnswer",
    "StopPressed",
    "Tick",
    "TurnAction",
    "TurnInput",
    "TurnLoop",
    "TurnSettings",
    "TurnTaking",
    "Typed",
    "barges_in",
    "interrupts",
    "is_backchannel",
]
