"""Where the agent's answer is, and every transition, in one table (state x input -> state; the session
core's and the turn detector's style).

An answer is asked for (pending: the model is thinking, nothing is heard yet), then heard (speaking). The
caller's first sound over it holds it (paused) while the core decides: a barge-in ends it, a backchannel
or a noise lets it go on. A caller who speaks over a pending answer drops it: their words join the next
turn.

An answer may also be asked for before the turn is over (held: a speculation on the words at a pause that
look finished). The model writes it, nothing of it goes out; the turn's end with the same words releases it
(then it is pending, as if asked for then), the caller going on (or other words) withdraws it in silence.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["TRANSITIONS", "Move", "Phase", "next_phase"]


class Phase(enum.Enum):
    """Where the agent's answer is."""

    IDLE = "idle"  # no answer
    PENDING = "pending"  # asked for, not heard yet
    SPEAKING = "speaking"
    PAUSED = "paused"  # held: the caller may be barging in
    HELD = "held"  # asked for before the turn ended: written, nothing of it out (a speculation)


class Move(enum.Enum):
    """What moves the answer (each is decided from one or more of the core's inputs)."""

    ASK = "ask"  # a turn to answer (a final transcript with words, a typed turn)
    HEARD = "heard"  # the answer's first audio went out
    ONSET = "onset"  # the caller made a sound over the answer
    GO_ON = "go on"  # it was a backchannel, a noise, or nothing
    STOP = "stop"  # a barge-in (real words, long speech, the Stop button)
    CALLER_SPEAKS = "caller speaks"  # a turn began before the answer was heard
    ENDED = "ended"  # the answer ended
    SPECULATE = "speculate"  # the words at a pause look finished: ask for an answer, held
    RELEASE = "release"  # the turn ended with the held answer's words
    WITHDRAW = "withdraw"  # the caller went on (or said other words): the held answer is not theirs


_P, _M = Phase, Move

#: Every transition; a move a phase has no row for leaves it where it is.
TRANSITIONS: Final[dict[tuple[Phase, Move], Phase]] = {
    (_P.IDLE, _M.ASK): _P.PENDING,
    (_P.PENDING, _M.ASK): _P.PENDING,
    (_P.PENDING, _M.HEARD): _P.SPEAKING,
    (_P.PENDING, _M.STOP): _P.IDLE,
    (_P.PENDING, _M.CALLER_SPEAKS): _P.IDLE,
    (_P.SPEAKING, _M.ASK): _P.PENDING,
    (_P.SPEAKING, _M.ONSET): _P.PAUSED,
    (_P.SPEAKING, _M.STOP): _P.IDLE,
    (_P.PAUSED, _M.ASK): _P.PENDING,
    (_P.PAUSED, _M.GO_ON): _P.SPEAKING,
    (_P.PAUSED, _M.STOP): _P.IDLE,
    (_P.IDLE, _M.SPECULATE): _P.HELD,
    (_P.HELD, _M.RELEASE): _P.PENDING,
    (_P.HELD, _M.WITHDRAW): _P.IDLE,
    (_P.HELD, _M.ASK): _P.PENDING,
    (_P.HELD, _M.STOP): _P.IDLE,
    (_P.HELD, _M.CALLER_SPEAKS): _P.IDLE,
    **{(phase, _M.ENDED): _P.IDLE for phase in (_P.PENDING, _P.SPEAKING, _P.PAUSED, _P.HELD)},
}


def next_phase(phase: Phase, move: Move) -> Phase | None:
    """The phase after ``move`` (None: the table has no row for it; nothing happens)."""
    return TRANSITIONS.get((phase, move))
