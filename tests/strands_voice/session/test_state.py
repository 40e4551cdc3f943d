"""The session's one state and its one table of transitions (``strands_voice.session._state``)."""

from __future__ import annotations

import itertools

from strands_voice.session._core import SessionCore
from strands_voice.session._retry import RetryPolicy
from strands_voice.session._state import DOWN_STATES, TRANSITIONS, UP_STATES, Input, State, next_state


def test_closed_is_final_and_reached_from_every_other_state() -> None:
    for state in State:
        assert next_state(state, Input.CLOSE) is State.CLOSED
    assert all(next_state(State.CLOSED, event) is State.CLOSED for event in Input)


def test_a_session_finishing_never_takes_requests_again() -> None:
    finishing = {State.NEW_FINISHING, State.UP_FINISHING, State.DOWN_FINISHING}
    for state, event in itertools.product(finishing, Input):
        assert next_state(state, event) in finishing | {State.FAILED, State.CLOSED}


def test_only_an_outage_is_given_up_and_only_a_reconnect_ends_one() -> None:
    gives_up = {state for (state, event), after in TRANSITIONS.items() if after is State.FAILED}
    assert gives_up == UP_STATES | DOWN_STATES  # a failed send or a drop may spend the budget at once
    reconnects = {(state, after) for (state, event), after in TRANSITIONS.items() if event is Input.CONNECTED}
    assert reconnects == {(State.DOWN, State.UP), (State.DOWN_FINISHING, State.UP_FINISHING)}


def test_the_core_walks_the_table() -> None:
    core = SessionCore(retry=RetryPolicy(), silence_timeout=30.0, keepalive_s=None)
    assert core.state is State.NEW and not core.opened
    core.opened_ok(0.0)
    assert core.state is State.UP and core.up
    core.finish()
    assert core.state is State.UP_FINISHING and core.finished and core.done
    core.close()
    assert core.state is State.CLOSED and core.closed and not core.up
