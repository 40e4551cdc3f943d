"""What the turn-taking core asks its adapter to do."""

from __future__ import annotations

from dataclasses import dataclass

from strands_voice.listen import EndOfTurn

__all__ = [
    "DropAnswer",
    "InterruptAnswer",
    "PauseAnswer",
    "ReleaseAnswer",
    "ReportError",
    "ResumeAnswer",
    "ShowSpeechStart",
    "ShowTranscript",
    "StartAnswer",
    "TurnAction",
]


@dataclass(frozen=True)
class StartAnswer:
    """Answer ``prompt`` as the answer ``answer_id``.

    Attributes:
        answer_id: The core's id for it (its progress is reported with this id).
        prompt: What the caller said (or typed).
        spoken: Whether the caller said it.
        joined: Whether it joins an earlier turn whose answer was dropped before it was heard (the caller
            paused mid-thought and went on): one question, not two.
        held: A speculation (the caller's turn is not over): the answer is written but nothing of it goes
            out and nothing of it is remembered until :class:`ReleaseAnswer`; a :class:`DropAnswer`
            ends it in silence (its model request cancelled, no event, no trace).
    """

    answer_id: str
    prompt: str
    spoken: bool
    joined: bool = False
    held: bool = False


@dataclass(frozen=True)
class ReleaseAnswer:
    """The turn ended with the held answer's words: ``answer_id`` goes out now (what it holds first)."""

    answer_id: str


@dataclass(frozen=True)
class DropAnswer:
    """Stop the answer ``answer_id`` before anything of it is heard (cancel its model; nothing to keep: no
    turn of it in the conversation, its question included, since the next turn asks it again)."""

    answer_id: str


@dataclass(frozen=True)
class PauseAnswer:
    """Hold the answer ``answer_id`` where it is: no more audio out, the heard count stopped."""

    answer_id: str


@dataclass(frozen=True)
class ResumeAnswer:
    """Go on with the held answer ``answer_id`` from where it stopped (nothing repeated, nothing lost)."""

    answer_id: str


@dataclass(frozen=True)
class InterruptAnswer:
    """Barge in on the answer ``answer_id``: stop it, and keep what was heard of it as the agent's answer."""

    answer_id: str


@dataclass(frozen=True)
class ShowSpeechStart:
    """The caller started a turn at ``at_s`` (seconds of audio)."""

    at_s: float


@dataclass(frozen=True)
class ShowTranscript:
    """What the caller said so far (``final``: the turn's words, with why it ended).

    ``counts`` is False for words said over an answer that let it go on (a backchannel, a noise): they
    are no turn of the conversation.
    """

    text: str
    final: bool
    end_of_turn: EndOfTurn | None = None
    counts: bool = True


@dataclass(frozen=True)
class ReportError:
    """Tell the caller that something of their turn went wrong (the call goes on)."""

    code: str
    message: str


TurnAction = (
    StartAnswer
    | ReleaseAnswer
    | DropAnswer
    | PauseAnswer
    | ResumeAnswer
    | InterruptAnswer
    | ShowSpeechStart
    | ShowTranscript
    | ReportError
)
