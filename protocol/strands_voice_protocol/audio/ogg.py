"""An Ogg page writer (RFC 3533) for one logical stream: whole pages per call, every page ending on a
packet boundary.

Written here rather than by FFmpeg's Ogg muxer because that muxer always holds back the newest page (to
mark end-of-stream on it later) and PyAV cannot flush it, which would delay every chunk's last packet.
"""

from __future__ import annotations

import struct
from typing import Final

from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["OggWriter", "ogg_crc"]


def _ogg_crc_table() -> list[int]:
    table = []
    for i in range(256):
        r = i << 24
        for _ in range(8):
            r = ((r << 1) ^ 0x04C11DB7) if r & 0x80000000 else (r << 1)
        table.append(r & 0xFFFFFFFF)
    return table


_OGG_CRC: Final = _ogg_crc_table()


def ogg_crc(data: bytes) -> int:
    """The Ogg page checksum (CRC-32, polynomial 0x04C11DB7, no reflection, initial value 0)."""
    crc = 0
    table = _OGG_CRC
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ table[((crc >> 24) & 0xFF) ^ byte]
    return crc


class OggWriter:
    """Writes one logical Ogg stream, one packet list per call, as whole pages.

    Args:
        serial: The stream's serial number (random per stream).
    """

    def __init__(self, serial: int) -> None:
        self._serial = serial
        self._sequence = 0
        self._first = True

    def pages(self, packets: list[tuple[bytes, int]], eos: bool = False) -> bytes:
        """Whole pages for ``(packet, granule after it)`` pairs; every page ends on a packet boundary.

        Raises:
            AudioEncodingError: a packet needs more than one page's 255 lacing values.
        """
        out = []
        page: list[bytes] = []
        granule = 0
        segments = 0
        for packet, after in packets:
            lacing = len(packet) // 255 + 1
            if lacing > 255:
                raise AudioEncodingError("an Opus packet is too large for one Ogg page")
            if segments + lacing > 255:
                out.append(self._page(page, granule, False))
                page, segments = [], 0
            page.append(packet)
            granule = after
            segments += lacing
        if page or eos:
            out.append(self._page(page, granule, eos))
        return b"".join(out)

    def _page(self, packets: list[bytes], granule: int, eos: bool) -> bytes:
        lacing = bytearray()
        for packet in packets:
            lacing += b"\xff" * (len(packet) // 255) + bytes([len(packet) % 255])
        flags = (0x02 if self._first else 0) | (0x04 if eos else 0)
        self._first = False
        header = struct.pack(
            "<4sBBqIIIB", b"OggS", 0, flags, granule, self._serial, self._sequence, 0, len(lacing)
        )
        self._sequence += 1
        page = bytearray(header + lacing + b"".join(packets))
        struct.pack_into("<I", page, 22, ogg_crc(bytes(page)))
        return bytes(page)
