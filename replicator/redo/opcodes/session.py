"""Opcodes 5.19 / 5.20 (session and transaction attributes) and 24.1 (DDL) payloads."""

from __future__ import annotations

import struct

from replicator.redo.vectors import ChangeVector

# Flag-word bits -> attribute names (olr-interfaces.md §2.2, redo-format.md §5.5).
FLAGS1 = {
    0x0001: "ddl transaction",
    0x0002: "space management transaction",
    0x0004: "recursive transaction",
    0x0008: "logminer internal transaction",
    0x0010: "db open in migrate mode",
    0x0020: "lsby ignore",
    0x0040: "logminer no transaction chunking",
    0x0080: "logminer stealth transaction",
    0x0100: "lsby preserve",
    0x0200: "logminer marker transaction",
    0x0400: "transaction in pragma'ed plsql",
    0x0800: "disabled logical replication transaction",
    0x1000: "datapump import transaction",
    0x8000: "transaction audit CV flags undefined",
}
FLAGS2 = {
    0x0001: "federation pdb replay",
    0x0002: "pdb ddl replay",
    0x0004: "logminer skip transaction",
    0x0008: "seq$ update transaction",
}

# Field number -> attribute name, for the string fields of each opcode.
STRINGS_0513 = {
    2: "current user name",
    3: "login username",
    4: "client info",
    5: "os username",
    6: "machine name",
    7: "os terminal",
    8: "os process id",
    9: "os program name",
    10: "transaction name",
    14: "client id",
}
STRINGS_0514 = {2: "transaction name", 7: "client id", 8: "login username"}


def _text(b: bytes) -> str:
    return bytes(b).decode("utf-8", "replace")


def session_attributes(cv: ChangeVector, version: int) -> dict[str, str]:
    """Decode the attributes a 5.19 or 5.20 vector carries."""
    e = cv.endian
    attrs: dict[str, str] = {}
    f1 = cv.field(1)
    if len(f1) >= 4:
        serial = struct.unpack_from(e + "H", f1, 2)[0]
        if version >= 0x13000000 and len(f1) >= 8:
            session = struct.unpack_from(e + "I", f1, 4)[0]
        else:
            session = struct.unpack_from(e + "H", f1, 0)[0]
        attrs["session number"] = str(session)
        attrs["serial number"] = str(serial)
    strings = STRINGS_0513 if cv.code == 19 else STRINGS_0514
    for num, name in strings.items():
        if cv.flen(num):
            attrs[name] = _text(cv.field(num))
    flags_at, version_at, audit_at = (11, 12, 13) if cv.code == 19 else (3, 4, 5)
    f = cv.field(flags_at)
    if len(f) >= 2:
        w1 = struct.unpack_from(e + "H", f, 0)[0]
        w2 = struct.unpack_from(e + "H", f, 4)[0] if len(f) >= 6 else 0
        for bit, name in FLAGS1.items():
            if w1 & bit:
                attrs[name] = "true"
        for bit, name in FLAGS2.items():
            if w2 & bit:
                attrs[name] = "true"
    if cv.flen(version_at) >= 4:
        attrs["version"] = str(struct.unpack_from(e + "I", cv.field(version_at), 0)[0])
    if cv.flen(audit_at) >= 4:
        attrs["audit session id"] = str(struct.unpack_from(e + "I", cv.field(audit_at), 0)[0])
    return attrs


def ddl_header(cv: ChangeVector) -> tuple[int, int, int, int, int] | None:
    """Parse 24.1 field 1: (xid, statement type, piece, piece count, obj) or None if too short."""
    f1 = cv.field(1)
    if len(f1) < 22:
        return None
    e = cv.endian
    usn, slot, sqn, stype = struct.unpack_from(e + "HHIH", f1, 4)
    piece, count = struct.unpack_from(e + "HH", f1, 18)
    obj = struct.unpack_from(e + "I", cv.field(12), 0)[0] if cv.flen(12) >= 4 else 0
    return (usn << 48) | (slot << 32) | sqn, stype, piece, count, obj


def ddl_text(vectors: list[ChangeVector]) -> tuple[str, str]:
    """Concatenate the DDL text of a chain of 24.1 pieces: (owner, sql)."""
    first = vectors[0]
    owner = _text(first.field(2)).rstrip("\x00") if first.flen(2) else ""
    parts = []
    for cv in vectors:
        text = bytes(cv.field(8))
        parts.append(text[:-1] if text.endswith(b"\x00") else text)
    return owner, b"".join(parts).decode("utf-8", "replace")
