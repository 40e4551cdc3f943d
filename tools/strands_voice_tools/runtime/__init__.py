"""A deployed AgentCore runtime's ``/ws``, reached from here: where it is and how a connection is signed
(:mod:`.signing`), the options naming it (:mod:`.options`), a signed connection (:mod:`.connect`), two
sockets relayed (:mod:`.relay`, the phone bridge's core) and the browser page calling it (:mod:`.page`)."""

from __future__ import annotations

__all__: list[str] = []
