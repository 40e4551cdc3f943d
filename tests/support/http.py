"""A huge ``POST`` body sent the way ordinary clients send it: all of it, before reading the answer.

``urllib`` (and ``requests``, ``curl`` without ``Expect``) write the whole body, then read. A server that
answers 413 and closes while they are still writing makes them see a broken pipe instead of the answer;
the server must discard the rest of the body (bounded) before it closes.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

__all__ = ["SIXTY_FOUR_MB", "chunked_huge_post", "urllib_huge_post"]

SIXTY_FOUR_MB = 64 * 1024 * 1024
#: How long a read waits for the server (a bound, never the thing measured).
GUARD_S = 60.0
_PIECE = b"x" * 65_536


def _pieces(total: int) -> Iterator[bytes]:
    """``total`` bytes in 64 KiB pieces, made as they are sent (never held whole)."""
    for start in range(0, total, len(_PIECE)):
        yield _PIECE[: min(len(_PIECE), total - start)]


def urllib_huge_post(url: str, total: int = SIXTY_FOUR_MB) -> tuple[int, dict[str, Any]]:
    """POST ``total`` bytes with a declared ``Content-Length`` through ``urllib``: the status and JSON
    answer it reads (an ``HTTPError`` carries them; a broken pipe or reset raises ``URLError``)."""
    request = urllib.request.Request(
        url,
        data=_pieces(total),
        headers={"Content-Type": "application/json", "Content-Length": str(total)},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=GUARD_S) as answer:
            return int(answer.status), json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def chunked_huge_post(port: int, path: str, total: int = SIXTY_FOUR_MB) -> tuple[str, bytes]:
    """POST ``total`` bytes chunked on a raw socket, all of it, then read: the status line and the body
    part of what came back (the answer must survive the server closing after it)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=GUARD_S) as sock:
        sock.sendall(head.encode())
        for piece in _pieces(total):
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
        received = b""
        while chunk := sock.recv(65_536):
            received += chunk
    status, _, rest = received.partition(b"\r\n")
    return status.decode(), rest.partition(b"\r\n\r\n")[2]
