"""A LOB column value in a row image: the assembled data standing in for the locator.

Redo holds a LOB column as a *locator* (redo-format.md §11.1); the parser replaces it in
the row images with a :class:`LobValue` holding the whole value (CLOB/NCLOB as stored,
i.e. AL16UTF16 in a multibyte database, BLOB raw), so formats render it like any other
value. Two things differ from plain ``bytes``:

* a LobValue is never "NULL": an empty LOB (``EMPTY_CLOB()``) is truthy, while row images
  use ``None``/``b""`` for SQL NULL;
* equality compares the locators, as OpenLogReplicator compares raw column bytes when it
  decides whether an UPDATE changed a column.

``complete`` is False when the value could not be assembled from this transaction's redo
(pages not logged, e.g. a partial ``DBMS_LOB.WRITE`` or an old out-of-row value in a before
image). OpenLogReplicator then prints nothing for the column, and so do our formats.
"""

from __future__ import annotations


class LobValue(bytes):
    """Assembled LOB bytes plus the locator they came from (see the module docstring)."""

    locator: bytes
    complete: bool

    def __new__(cls, data: bytes, locator: bytes, complete: bool = True) -> LobValue:
        value = super().__new__(cls, data)
        value.locator = locator
        value.complete = complete
        return value

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        # Also when compared with plain bytes (a NULL's b"" or a raw locator): never by content.
        if isinstance(other, LobValue):
            return self.locator == other.locator
        if isinstance(other, (bytes, bytearray, memoryview)):
            return self.locator == bytes(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self.locator)

    def __repr__(self) -> str:
        state = "" if self.complete else ", incomplete"
        return f"LobValue({len(self)} bytes{state})"

    def __reduce__(self) -> tuple:  # keep the extra attributes through pickling
        return (LobValue, (bytes(self), self.locator, self.complete))


def unavailable(value: bytes | None) -> bool:
    """True for a LOB whose data is not known: formats print nothing for it."""
    return isinstance(value, LobValue) and not value.complete
