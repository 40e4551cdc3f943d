"""Raw HTTP for the tests that a real client library would not send: the head of a huge body."""

from __future__ import annotations

import socket

__all__ = ["SIXTY_FOUR_MB", "refusal_of_a_huge_body"]

SIXTY_FOUR_MB = 64 * 1024 * 1024
#: How long a read waits for the server (a bound, never the thing measured).
GUARD_S = 60.0


def refusal_of_a_huge_body(port: int, path: str, *, chunked: bool) -> tuple[str, bool]:
    """Send the head of a 64 MB POST and 512 kB of its body (past the endpoint's and the app's bounds),
    then read: the status line, and whether the server closed the connection without waiting for the
    other 63.5 MB."""
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {SIXTY_FOUR_MB}"
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{length}\r\n\r\n"
    piece = b"x" * 65_536
    if chunked:
        piece = b"%x\r\n" % len(piece) + piece + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=GUARD_S) as sock:
        received = b""
        try:
            sock.sendall(head.encode())
            for _ in range(8):
                sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused on its head alone: the server has answered and closed already
        try:
            while chunk := sock.recv(65_536):
                received += chunk
        except TimeoutError:
            return received.split(b"\r\n", 1)[0].decode(), False
        except ConnectionResetError:
            pass  # closed with the body unread: a reset may follow the answer
    return received.split(b"\r\n", 1)[0].decode(), True
