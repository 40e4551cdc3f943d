"""Where the agent's answer is, and every transition, in one table (state x input -> state; the session
core's and the turn detector's style).

An answer is asked for (pending: the model is thinking, nothing is heard yet), then heard (speaking). The
caller's first sound over it holds it (paused) while the core decides: a barge-in ends it, a backchannel
or a noise lets it go on. A caller who speaks over a pending answer drops it: their words join the next
turn.
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


class Move(enum.Enum):
    """What moves the answer (each is decided from one or more of the core's inputs)."""

    ASK = "ask"  # a turn to answer (a final transcript with words, a typed turn)
    HEARD = "heard"  # the answer's first audio went out
    ONSET = "onset"  # the caller made a sound over the answer
    GO_ON = "go on"  # it was a backchannel, a noise, or nothing
    STOP = "stop"  # a barge-in (real words, long speech, the Stop button)
    CALLER_SPEAKS = "caller speaks"  # a turn began before the answer was heard
    ENDED = "ended"  # the answer ended


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
    **{(phase, _M.ENDED): _P.IDLE for phase in (_P.PENDING, _P.SPEAKING, _P.PAUSED)},
}


def next_phase(phase: Phase, move: Move) -> Phase | None:
    """The phase after ``move`` (None: the table has no row for it; nothing happens)."""
    return TRANSITIONS.get((phase, move))
