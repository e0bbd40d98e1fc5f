"""Character sets: id map, OLR's handling of malformed Unicode, single-byte tables."""

from __future__ import annotations

import pytest

from replicator.values.charset import (
    CHARSET_IDS,
    CHARSET_NAMES,
    CharsetError,
    charset_by_id,
    column_charset_name,
    get_charset,
    is_supported,
)

REPLACEMENT = "\ufffd".encode()


def test_id_map_follows_olr() -> None:
    assert CHARSET_NAMES[1] == "US7ASCII"
    assert CHARSET_NAMES[31] == "WE8ISO8859P1"
    assert CHARSET_NAMES[178] == "WE8MSWIN1252"
    assert CHARSET_NAMES[871] == "UTF8"
    assert CHARSET_NAMES[873] == "AL32UTF8"
    assert CHARSET_NAMES[2000] == "AL16UTF16"
    assert CHARSET_IDS["AL32UTF8"] == 873
    assert len(CHARSET_NAMES) == 138


def test_al32utf8() -> None:
    codec = get_charset("AL32UTF8")
    text = "zażółć € 😀".encode()
    assert codec.to_utf8(text) is text  # valid input passes through untouched
    # A lone lead byte at the end, a bad continuation, an overlong "/" and a surrogate.
    assert codec.to_utf8(b"a\xc3") == b"a" + REPLACEMENT
    assert codec.to_utf8(b"\xc3(") == REPLACEMENT  # OLR swallows the second byte too
    assert codec.to_utf8(b"\xc0\xaf") == b"/"
    assert codec.to_utf8(b"\xed\xa0\x80") == b"\xed\xa0\x80"
    assert codec.to_utf8(b"\xf8\x88\x80\x80x") == REPLACEMENT + b"x"


def test_utf8_is_cesu8() -> None:
    codec = get_charset("UTF8")
    assert codec.to_utf8("żółw".encode()) == "żółw".encode()
    # U+1F600 as a CESU-8 surrogate pair becomes 4-byte UTF-8.
    assert codec.to_utf8(b"\xed\xa0\xbd\xed\xb8\x80") == "😀".encode()
    # A real 4-byte UTF-8 sequence is not CESU-8: OLR reads a 3-byte form, then garbage.
    assert codec.to_utf8("😀".encode()) == "\u07d8".encode() + REPLACEMENT


def test_al16utf16() -> None:
    codec = get_charset("AL16UTF16")
    assert codec.to_utf8("unicode text".encode("utf-16-be")) == b"unicode text"
    assert codec.to_utf8("😀ż".encode("utf-16-be")) == "😀ż".encode()
    assert codec.to_utf8(b"\x00a\x00") == b"a" + REPLACEMENT  # odd length
    assert codec.to_utf8(b"\xdc\x00\x00a") == REPLACEMENT + b"a"  # lone low surrogate
    assert codec.to_utf8(b"\xd8\x3d\x00a") == REPLACEMENT  # high surrogate + non-surrogate


def test_single_byte_sets() -> None:
    assert get_charset("US7ASCII").to_utf8(b"abc\xe1") == b"abca"  # top bit masked
    assert get_charset("WE8ISO8859P1").to_utf8(b"caf\xe9") == "café".encode()
    cp1252 = get_charset("WE8MSWIN1252")
    assert cp1252.to_utf8(b"\x80\x81") == "€\x81".encode()  # undefined 0x81 kept as U+0081
    assert get_charset("D7DEC").to_utf8(b"[\\]") == "ÄÖÜ".encode()
    assert get_charset("CL8KOI8R").to_utf8(b"\x94") == "\u220e".encode()
    assert charset_by_id(170).name == "EE8MSWIN1250"
    assert get_charset("ZHS16GBK").exact is False


def test_unsupported() -> None:
    assert is_supported("ZHT32EUC") and not is_supported("NOSUCHSET")
    with pytest.raises(CharsetError) as error:
        get_charset("NOSUCHSET")
    assert error.value.code == 50010
    with pytest.raises(CharsetError):
        charset_by_id(9999)


def test_column_charset_rule() -> None:
    assert column_charset_name(1, 873, False, "AL32UTF8", "AL16UTF16") == "AL32UTF8"
    assert column_charset_name(1, 873, True, "AL32UTF8", "AL16UTF16") == "AL16UTF16"
    assert column_charset_name(2, 2000, False, "AL32UTF8", "AL16UTF16") == "AL16UTF16"
    assert column_charset_name(0, 31, False, "AL32UTF8", "AL16UTF16") == "WE8ISO8859P1"
