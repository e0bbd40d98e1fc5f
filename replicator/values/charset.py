"""Oracle character sets: id/name maps and codecs that turn stored bytes into UTF-8.

The id -> name map follows OpenLogReplicator's locales list. Codecs:

* AL32UTF8, UTF8 (CESU-8) and AL16UTF16 (big-endian): valid input goes through Python's C
  codecs (and valid UTF-8 is passed through untouched); anything malformed is re-decoded by
  :mod:`replicator.values.unicode`, which reproduces OLR's byte-for-byte handling.
* Single-byte and 7-bit sets: a 256-entry table built from a Python codec plus Oracle's
  differences (:mod:`replicator.values.charset_tables`), decoded with ``charmap_decode``.
* Multi-byte Asian sets: Python's nearest codec with U+FFFD for bad bytes. These are close
  to, not guaranteed identical with, OLR's own tables (``exact`` is False).

Undecodable characters become U+FFFD and are reported once per value as warning 60008.
"""

from __future__ import annotations

import codecs
from functools import cache
from typing import Final

from replicator import log
from replicator.errors import InternalError
from replicator.values.charset_tables import parse_tables
from replicator.values.unicode import (
    al16utf16_code_points,
    al32utf8_code_points,
    cesu8_code_points,
    encode_utf8,
)


CHARSET_NAMES: Final[dict[int, str]] = {
    1: "US7ASCII", 2: "WE8DEC", 3: "WE8HP", 4: "US8PC437", 10: "WE8PC850", 11: "D7DEC",
    13: "S7DEC", 14: "E7DEC", 15: "SF7ASCII", 16: "NDK7DEC", 17: "I7DEC", 21: "SF7DEC",
    25: "IN8ISCII", 28: "WE8PC858", 31: "WE8ISO8859P1", 32: "EE8ISO8859P2", 33: "SE8ISO8859P3",
    34: "NEE8ISO8859P4", 35: "CL8ISO8859P5", 36: "AR8ISO8859P6", 37: "EL8ISO8859P7",
    38: "IW8ISO8859P8", 39: "WE8ISO8859P9", 40: "NE8ISO8859P10", 41: "TH8TISASCII",
    43: "BN8BSCII", 44: "VN8VN3", 45: "VN8MSWIN1258", 46: "WE8ISO8859P15", 47: "BLT8ISO8859P13",
    48: "CEL8ISO8859P14", 49: "CL8ISOIR111", 50: "WE8NEXTSTEP", 51: "CL8KOI8U",
    52: "AZ8ISO8859P9E", 61: "AR8ASMO708PLUS", 81: "EL8DEC", 82: "TR8DEC", 110: "EEC8EUROASCI",
    113: "EEC8EUROPA3", 114: "LA8PASSPORT", 140: "BG8PC437S", 150: "EE8PC852", 152: "RU8PC866",
    153: "RU8BESTA", 154: "IW8PC1507", 155: "RU8PC855", 156: "TR8PC857", 159: "CL8MACCYRILLICS",
    160: "WE8PC860", 161: "IS8PC861", 162: "EE8MACCES", 163: "EE8MACCROATIANS",
    164: "TR8MACTURKISHS", 165: "IS8MACICELANDICS", 166: "EL8MACGREEKS", 167: "IW8MACHEBREWS",
    170: "EE8MSWIN1250", 171: "CL8MSWIN1251", 172: "ET8MSWIN923", 173: "BG8MSWIN",
    174: "EL8MSWIN1253", 175: "IW8MSWIN1255", 176: "LT8MSWIN921", 177: "TR8MSWIN1254",
    178: "WE8MSWIN1252", 179: "BLT8MSWIN1257", 190: "N8PC865", 191: "BLT8CP921", 192: "LV8PC1117",
    193: "LV8PC8LR", 195: "LV8RST104090", 196: "CL8KOI8R", 197: "BLT8PC775",
    202: "E7SIEMENS9780X", 203: "S7SIEMENS9780X", 204: "DK7SIEMENS9780X", 205: "N7SIEMENS9780X",
    206: "I7SIEMENS9780X", 207: "D7SIEMENS9780X", 241: "WE8DG", 251: "WE8NCR4970",
    261: "WE8ROMAN8", 352: "WE8MACROMAN8S", 354: "TH8MACTHAIS", 368: "HU8CWI2", 380: "EL8PC437S",
    382: "EL8PC737", 383: "LT8PC772", 384: "LT8PC774", 385: "EL8PC869", 386: "EL8PC851",
    390: "CDN8PC863", 401: "HU8ABMOD", 500: "AR8ASMO8X", 504: "AR8NAFITHA711T",
    505: "AR8SAKHR707T", 506: "AR8MUSSAD768T", 507: "AR8ADOS710T", 508: "AR8ADOS720T",
    509: "AR8APTEC715T", 511: "AR8NAFITHA721T", 514: "AR8HPARABIC8T", 554: "AR8NAFITHA711",
    555: "AR8SAKHR707", 556: "AR8MUSSAD768", 557: "AR8ADOS710", 558: "AR8ADOS720",
    559: "AR8APTEC715", 560: "AR8MSWIN1256", 561: "AR8NAFITHA721", 563: "AR8SAKHR706",
    566: "AR8ARABICMACS", 590: "LA8ISO6937", 829: "JA16VMS", 830: "JA16EUC", 831: "JA16EUCYEN",
    832: "JA16SJIS", 834: "JA16SJISYEN", 837: "JA16EUCTILDE", 838: "JA16SJISTILDE",
    840: "KO16KSC5601", 845: "KO16KSCCS", 846: "KO16MSWIN949", 850: "ZHS16CGB231280",
    852: "ZHS16GBK", 854: "ZHS32GB18030", 860: "ZHT32EUC", 863: "ZHT32TRIS", 865: "ZHT16BIG5",
    866: "ZHT16CCDC", 867: "ZHT16MSWIN950", 868: "ZHT16HKSCS", 871: "UTF8", 873: "AL32UTF8",
    992: "ZHT16HKSCS31", 1002: "TIMESTEN8", 2000: "AL16UTF16",
}
CHARSET_IDS: Final[dict[str, int]] = {name: cid for cid, name in CHARSET_NAMES.items()}

# Multi-byte sets approximated by Python codecs (OLR ships its own tables for these).
_APPROXIMATE: Final[dict[str, str]] = {
    "JA16EUC": "euc_jp", "JA16EUCYEN": "euc_jp", "JA16EUCTILDE": "euc_jp",
    "JA16SJIS": "cp932", "JA16SJISYEN": "shift_jis", "JA16SJISTILDE": "cp932",
    "KO16KSC5601": "euc_kr", "KO16KSCCS": "johab", "KO16MSWIN949": "cp949",
    "ZHS16CGB231280": "gb2312", "ZHS16GBK": "gbk", "ZHS32GB18030": "gb18030",
    "ZHT16BIG5": "big5", "ZHT16MSWIN950": "cp950", "ZHT16HKSCS": "big5hkscs",
    "ZHT16HKSCS31": "big5hkscs",
}


class CharsetError(InternalError):
    """No character set mapping for an id or name (OLR error 50010)."""

    code = 50010


class Charset:
    """A codec from one Oracle character set to UTF-8 bytes."""

    exact = True  # False when only approximating OLR's tables

    def __init__(self, name: str):
        self.name = name

    def to_utf8(self, data: bytes) -> bytes:
        """Return the UTF-8 bytes OLR produces for ``data`` stored in this character set."""
        raise NotImplementedError

    def _report(self, bad: int, data: bytes) -> None:
        if bad:
            log.warning(60008, f"can't decode {bad} character(s) using character set {self.name}: {data.hex()}")


class _Al32Utf8(Charset):
    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        try:
            data.decode("utf-8")
            return data  # valid UTF-8 round-trips unchanged through OLR's decoder
        except UnicodeDecodeError:
            points, bad = al32utf8_code_points(data)
            self._report(bad, data)
            return encode_utf8(points)


class _Cesu8(Charset):
    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        try:
            if max(data.decode("utf-8")) <= "\uffff":
                return data  # BMP-only UTF-8 is identical in CESU-8
        except UnicodeDecodeError:
            pass
        points, bad = cesu8_code_points(data)
        self._report(bad, data)
        return encode_utf8(points)


class _Al16Utf16(Charset):
    def to_utf8(self, data: bytes) -> bytes:
        if not len(data) & 1:
            try:
                return data.decode("utf-16-be").encode("utf-8")
            except UnicodeDecodeError:
                pass
        points, bad = al16utf16_code_points(data)
        self._report(bad, data)
        return encode_utf8(points)


class _SingleByte(Charset):
    def __init__(self, name: str, base: str, overrides: dict[int, int]):
        super().__init__(name)
        seven_bit = base == "7bit"
        reference = _byte_table("ascii" if seven_bit else base)
        table = [overrides.get(b, reference[b]) for b in range(128 if seven_bit else 256)]
        if seven_bit:
            table = table * 2  # OLR masks the top bit of 7-bit sets
        self._table = "".join(map(chr, table))
        self._ascii_identity = self._table[:128] == "".join(map(chr, range(128)))

    def to_utf8(self, data: bytes) -> bytes:
        if self._ascii_identity and data.isascii():
            return data
        return codecs.charmap_decode(data, "strict", self._table)[0].encode("utf-8")


class _PythonCodec(Charset):
    exact = False

    def __init__(self, name: str, codec: str):
        super().__init__(name)
        self._codec = codec

    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        return data.decode(self._codec, "replace").encode("utf-8")


def _byte_table(codec: str) -> list[int]:
    """Code point of every byte in a Python single-byte codec (U+FFFD where undefined)."""
    table = []
    for byte in range(256):
        try:
            table.append(ord(bytes([byte]).decode(codec)))
        except UnicodeDecodeError:
            table.append(0xFFFD)
    return table


@cache
def _single_byte_tables() -> dict[str, tuple[str, dict[int, int]]]:
    return parse_tables()


@cache
def get_charset(name: str) -> Charset:
    """Return the codec for an Oracle character set name; raises :class:`CharsetError`."""
    if name == "AL32UTF8":
        return _Al32Utf8(name)
    if name == "UTF8":
        return _Cesu8(name)
    if name == "AL16UTF16":
        return _Al16Utf16(name)
    if name in _APPROXIMATE:
        return _PythonCodec(name, _APPROXIMATE[name])
    record = _single_byte_tables().get(name)
    if record is None:
        raise CharsetError(f"can't find character set map for {name}")
    return _SingleByte(name, *record)


def charset_by_id(charset_id: int) -> Charset:
    """Return the codec for a numeric character set id (SYS.COL$.CHARSETID)."""
    name = CHARSET_NAMES.get(charset_id)
    if name is None:
        raise CharsetError(f"can't find character set map for id = {charset_id}")
    return get_charset(name)


def column_charset_name(charset_form: int, charset_id: int, is_clob: bool, db_charset: str,
                        nchar_charset: str) -> str:
    """Name of the character set a column's bytes are stored in (OLR's rule).

    Form 1 uses the database set, except CLOB which OLR decodes with the national set (CLOB
    data of a multi-byte database is stored as AL16UTF16); form 2 uses the national set; any
    other form uses the column's own CHARSETID.
    """
    if charset_form == 1:
        return nchar_charset if is_clob else db_charset
    if charset_form == 2:
        return nchar_charset
    name = CHARSET_NAMES.get(charset_id)
    if name is None:
        raise CharsetError(f"can't find character set map for id = {charset_id}")
    return name


def is_supported(name: str) -> bool:
    """True when :func:`get_charset` can decode the named character set."""
    try:
        get_charset(name)
    except CharsetError:
        return False
    return True
