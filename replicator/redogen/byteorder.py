"""The byte order of the platform the generator imitates: little (Linux x86, default) or big.

AIX, Solaris SPARC and HP-UX write every multi-byte field of the file and block headers,
record and vector headers, KTB/KTU/KDO structures and the checksums in big-endian order;
column data (NUMBER, DATE, strings, IEEE floats) is the same on every platform. The packers
of the generator write platform fields with a ``"<"`` format through :func:`pack`,
:func:`pack_into` and :class:`Struct` here, which turn ``"<"`` into ``">"`` while
:func:`big_endian` is active; formats that are big-endian everywhere keep ``">"``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, Literal

_big = [False]


def is_big() -> bool:
    """True while generating big-endian redo."""
    return _big[0]


def byteorder() -> Literal["little", "big"]:
    """``"little"`` or ``"big"`` for ``int.to_bytes``."""
    return "big" if _big[0] else "little"


@contextmanager
def big_endian(on: bool = True) -> Iterator[None]:
    """Generate big-endian redo inside the block (``redogen --endian big``)."""
    old = _big[0]
    _big[0] = on
    try:
        yield
    finally:
        _big[0] = old


@cache
def _compiled(fmt: str, big: bool) -> struct.Struct:
    return struct.Struct(">" + fmt[1:] if big and fmt.startswith("<") else fmt)


def pack(fmt: str, *values: Any) -> bytes:
    """``struct.pack`` in the platform byte order."""
    return _compiled(fmt, _big[0]).pack(*values)


def pack_into(fmt: str, buf: Any, offset: int, *values: Any) -> None:
    """``struct.pack_into`` in the platform byte order."""
    _compiled(fmt, _big[0]).pack_into(buf, offset, *values)


def unpack_from(fmt: str, buf: Any, offset: int = 0) -> tuple[Any, ...]:
    """``struct.unpack_from`` in the platform byte order."""
    return _compiled(fmt, _big[0]).unpack_from(buf, offset)


def unpack(fmt: str, buf: Any) -> tuple[Any, ...]:
    """``struct.unpack`` in the platform byte order."""
    return _compiled(fmt, _big[0]).unpack(buf)


def calcsize(fmt: str) -> int:
    """``struct.calcsize`` (the same in both orders)."""
    return struct.calcsize(fmt)


class Struct:
    """A ``struct.Struct`` whose ``"<"`` follows the platform byte order at each call."""

    def __init__(self, fmt: str):
        self.format = fmt
        self.size = struct.calcsize(fmt)

    def pack(self, *values: Any) -> bytes:
        return _compiled(self.format, _big[0]).pack(*values)

    def pack_into(self, buf: Any, offset: int, *values: Any) -> None:
        _compiled(self.format, _big[0]).pack_into(buf, offset, *values)

    def unpack(self, buf: Any) -> tuple[Any, ...]:
        return _compiled(self.format, _big[0]).unpack(buf)

    def unpack_from(self, buf: Any, offset: int = 0) -> tuple[Any, ...]:
        return _compiled(self.format, _big[0]).unpack_from(buf, offset)
