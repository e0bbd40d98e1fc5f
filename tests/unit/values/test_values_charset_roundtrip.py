"""Every character set round-trips sample text with characters outside ASCII.

The sample of each set is derived from the set itself (its byte table, or the Python codec
it uses), so each test encodes real non-ASCII characters into that set's bytes and checks
that our decoder gives the same text back.
"""

from __future__ import annotations

import hashlib
import struct

import pytest

from replicator.values.charset import CHARSET_NAMES, get_charset

SAMPLE_SIZE = 16
UNICODE_TEXT = "zażółć gęślą jaźń € ¥ Ωμέγα Привет 日本語 한국어 😀"
# Candidate characters for the multi-byte sets decoded through a Python codec.
CANDIDATES = (
    "€£¥§°±×÷ΑΩαωАЯая"
    + "".join(map(chr, range(0x3041, 0x3097, 7)))
    + "".join(map(chr, range(0x30A1, 0x30F7, 7)))
    + "".join(map(chr, range(0x4E00, 0x9FA5, 331)))
    + "".join(map(chr, range(0xAC00, 0xD7A3, 997)))
    + "".join(map(chr, range(0xFF01, 0xFF5E, 9)))
)


def _spread(items: list, count: int = SAMPLE_SIZE) -> list:
    step = max(1, len(items) // count)
    return items[::step][:count]


def _cesu8(text: str) -> bytes:
    units = struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be"))
    return "".join(map(chr, units)).encode("utf-8", "surrogatepass")


def sample(name: str) -> tuple[str, bytes]:
    """(text, its bytes in character set ``name``) with non-ASCII characters of that set."""
    if name == "AL32UTF8":
        return UNICODE_TEXT, UNICODE_TEXT.encode("utf-8")
    if name == "UTF8":
        return UNICODE_TEXT, _cesu8(UNICODE_TEXT)
    if name == "AL16UTF16":
        return UNICODE_TEXT, UNICODE_TEXT.encode("utf-16-be")
    codec = get_charset(name)
    table = getattr(codec, "table", None)
    if isinstance(table, str):  # single-byte: byte -> character
        size = 128 if table[:128] == table[128:] else 256  # a 7-bit set repeats itself above 0x80
        cells = [(bytes([b]), ch) for b, ch in enumerate(table[:size]) if ord(ch) > 0x7F and ch != "\ufffd"]
    elif isinstance(table, dict):  # multi-byte: the cell's bytes (big-endian) -> character
        counts: dict[str, int] = {}
        for ch in table.values():
            counts[ch] = counts.get(ch, 0) + 1
        cells = [
            (cell.to_bytes(4 if cell > 0xFFFF else 2, "big"), ch)
            for cell, ch in sorted(table.items())
            if ch != "\ufffd" and counts[ch] == 1
        ]
    else:  # a Python codec: the candidates it can encode and decode back
        python_codec = codec.codec  # type: ignore[attr-defined]
        cells = []
        for ch in CANDIDATES:
            try:
                data = ch.encode(python_codec)
            except UnicodeEncodeError:
                continue
            if data.decode(python_codec) == ch:
                cells.append((data, ch))
    chosen = _spread(cells)
    text = "Az09 " + "".join(ch for _, ch in chosen)
    return text, b"Az09 " + b"".join(data for data, _ in chosen)


@pytest.mark.parametrize("name", sorted(CHARSET_NAMES.values()))
def test_round_trip(name: str) -> None:
    text, data = sample(name)
    non_ascii = [ch for ch in text if ord(ch) > 0x7F]
    if name == "US7ASCII":
        assert not non_ascii  # the one set with no character outside ASCII
    else:
        assert len(non_ascii) >= 3, f"{name}: sample has too few non-ASCII characters"
    codec = get_charset(name)
    assert codec.to_utf8(data).decode("utf-8") == text
    if data.isascii():  # a 7-bit national set: its letters sit on ASCII bytes; OLR ignores bit 8
        high = bytes(b | 0x80 for b in data)
        assert codec.to_utf8(high).decode("utf-8") == text


def test_every_listed_set_is_covered() -> None:
    assert len(CHARSET_NAMES) == 138


def test_ja16vms_follows_olr_table() -> None:
    vms = get_charset("JA16VMS")
    assert vms.to_utf8("日本語テキスト".encode("euc_jp")) == "日本語テキスト".encode()
    assert vms.to_utf8(b"\xa1\xb1") == "\u203e".encode()  # OLR's overline where EUC-JP has a macron
    assert vms.to_utf8(b"a\xa1") == b"a\xef\xbf\xbd"  # a lead byte at the end
    assert vms.to_utf8(b"\x8e\xb1") == b"\xef\xbf\xbd"  # half-width kana is not in JA16VMS


def _cells(name: str) -> list[bytes]:
    """Every byte sequence inside the ranges OLR's table for ``name`` covers, in table order."""
    if name == "ZHT16CCDC":
        return [bytes([b1, b2]) for b1 in range(0xA1, 0xFC) for b2 in range(0x21, 0xFF)]
    if name == "ZHT32EUC":
        return [bytes([b1, b2]) for b1 in range(0xA1, 0xFE) for b2 in range(0xA1, 0xFF)] + [
            bytes([0x8E, p, r, c]) for p in range(0xA2, 0xAF) for r in range(0xA1, 0xF3) for c in range(0xA1, 0xFF)
        ]
    return [bytes([0x8E, p, r, c]) for p in range(0xA1, 0xAF) for r in range(0xA1, 0xFF) for c in range(0xA1, 0xFF)]


# SHA-256 of the UTF-8 text every cell decodes to (U+FFFD where OLR's table has none), and
# how many cells are defined: a fingerprint of OLR's tables for these sets.
@pytest.mark.parametrize(
    ("name", "digest", "defined"),
    [
        ("ZHT32EUC", "93c6014918f7a8e23c07e737268284d6662586569e89e94b12ba08d0185622a4", 17715),
        ("ZHT32TRIS", "2e9d040e894c9bc1fe54f5572a5368906701f2fb5ed73774f128a75e42540d84", 17715),
        ("ZHT16CCDC", "b497a762bf79d4a8884f3fdb79b1a398c335fd5aa30c172f36b393d6975dadca", 12468),
    ],
)
def test_cns_tables_follow_olr(name: str, digest: str, defined: int) -> None:
    cells = _cells(name)
    text = get_charset(name).to_utf8(b"".join(cells)).decode("utf-8")
    assert len(text) == len(cells)
    assert sum(ch != "\ufffd" for ch in text) == defined
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest


def test_cns_sets_decode_like_olr() -> None:
    euc, tris, ccdc = get_charset("ZHT32EUC"), get_charset("ZHT32TRIS"), get_charset("ZHT16CCDC")
    assert euc.to_utf8(b"\xc4\xa1\xc4\xa2 \x8e\xa2\xa1\xa1 \x8e\xae\xa1\xa1") == "一乙 乂 丨".encode()
    assert tris.to_utf8(b"\x8e\xa1\xc4\xa1\x8e\xa2\xa1\xa1") == "一乂".encode()
    assert euc.to_utf8(b"\xa1\xb7\xa1\xb9") == "\u2014\u2013".encode()
    assert tris.to_utf8(b"\x8e\xa1\xa1\xb7\x8e\xa1\xa1\xb9") == "\u2013\u2014".encode()  # ZHT32TRIS's own cells
    assert ccdc.to_utf8(b"\xc1\x21\xc1\x22") == "欘欗".encode()
    bad = "\ufffd".encode()
    assert euc.to_utf8(b"a\xc4") == b"a" + bad  # a lead byte at the end
    assert euc.to_utf8(b"\x8e\xa1\xc4\xa1") == bad + "一".encode()  # plane 1 has no 4-byte form: 2 bytes taken
    assert euc.to_utf8(b"\x8e\xa2\xf3A") == bad + b"A"  # row out of range: 3 bytes taken
    assert euc.to_utf8(b"\x8e\xa2\xa1") == bad  # cut short
    assert euc.to_utf8(b"\xfeA") == bad + b"A"  # not a lead byte: 1 byte taken
    assert euc.to_utf8(b"\xc4A") == bad  # a bad trail byte is taken with its lead
    assert tris.to_utf8(b"\xc4\xa1") == bad + bad  # ZHT32TRIS has only the 4-byte form
    assert ccdc.to_utf8(b"\xfc\x21") == bad
