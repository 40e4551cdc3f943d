"""The session's one state, and every transition between states, in one table (sans-I/O).

A session is new until its first connection is up; then up or down (an outage being resumed), each
either taking requests or finishing (no more requests: it ends once nothing is owed); it ends failed
(resume gave up) or closed (by its caller). What is owed, the retry budget and the timers are data
beside the state (:class:`~strands_voice.session._core.SessionCore`); whether something may happen is
read from the state alone.
"""

from __future__ import annotations

import enum
from typing import Final


class State(enum.Enum):
    """Where a session is."""

    NEW = "new"  # not open yet
    NEW_FINISHING = "new, finishing"  # finish() came before the first connection
    UP = "up"
    DOWN = "down"  # the connection is lost; the next request or the owed ones resume it
    UP_FINISHING = "up, finishing"
    DOWN_FINISHING = "down, finishing"
    FAILED = "failed"  # resume gave up: nothing more is sent
    CLOSED = "closed"  # the caller closed it: owed audio is abandoned


class Input(enum.Enum):
    """What moves a session from one state to another."""

    OPENED = "opened"  # the first connection is up
    LOST = "lost"  # the connection is lost (a drop, a normal close in use, busy, a failed send)
    CONNECTED = "connected"  # a reconnect attempt succeeded
    FINISH = "finish"  # the caller sends no more requests
    GIVE_UP = "give up"  # the retry budget is spent
    CLOSE = "close"  # the caller closed the session


_S, _I = State, Input

#: Every transition. An input a state has no row for leaves it where it is (a late input, e.g. a drop
#: noticed after the caller closed the session).
TRANSITIONS: Final[dict[tuple[State, Input], State]] = {
    (_S.NEW, _I.OPENED): _S.UP,
    (_S.NEW, _I.FINISH): _S.NEW_FINISHING,
    (_S.NEW_FINISHING, _I.OPENED): _S.UP_FINISHING,
    (_S.UP, _I.LOST): _S.DOWN,
    (_S.UP, _I.FINISH): _S.UP_FINISHING,
    (_S.DOWN, _I.CONNECTED): _S.UP,
    (_S.DOWN, _I.FINISH): _S.DOWN_FINISHING,
    (_S.UP_FINISHING, _I.LOST): _S.DOWN_FINISHING,
    (_S.DOWN_FINISHING, _I.CONNECTED): _S.UP_FINISHING,
    **{(state, _I.GIVE_UP): _S.FAILED for state in (_S.UP, _S.DOWN, _S.UP_FINISHING, _S.DOWN_FINISHING)},
    **{(state, _I.CLOSE): _S.CLOSED for state in State if state is not _S.CLOSED},
}

#: The states with a connection up.
UP_STATES: Final = frozenset({State.UP, State.UP_FINISHING})
#: The states of an outage being resumed.
DOWN_STATES: Final = frozenset({State.DOWN, State.DOWN_FINISHING})
#: The states that take no more requests.
FINISHING_STATES: Final = frozenset(
    {State.NEW_FINISHING, State.UP_FINISHING, State.DOWN_FINISHING, State.CLOSED}
)
#: The states before the first connection.
NEW_STATES: Final = frozenset({State.NEW, State.NEW_FINISHING})


def next_state(state: State, event: Input) -> State:
    """The state after ``event`` (the same one when the table has no row for it)."""
    return TRANSITIONS.get((state, event), state)
