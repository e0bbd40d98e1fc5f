"""Oracle character sets: id/name maps and codecs that turn stored bytes into UTF-8.

The id -> name map follows OpenLogReplicator's locales list. Codecs:

* AL32UTF8, UTF8 (CESU-8) and AL16UTF16 (big-endian): valid input goes through Python's C
  codecs (and valid UTF-8 is passed through untouched); anything malformed is re-decoded by
  :mod:`replicator.values.unicode`, which reproduces OLR's byte-for-byte handling.
* Single-byte and 7-bit sets: a 256-entry table built from a Python codec plus Oracle's
  differences (:mod:`replicator.values.charset_tables`), decoded with ``charmap_decode``.
* Multi-byte Asian sets: Python's nearest codec with U+FFFD for bad bytes. These are close
  to, not guaranteed identical with, OLR's own tables (``exact`` is False). JA16VMS uses a
  lead/trail table equal to OLR's (Python's EUC-JP plus OLR's differences).
* ZHT32EUC, ZHT32TRIS (CNS 11643 in EUC form) and ZHT16CCDC: Python has no codec for them,
  so OLR's tables ship as compact data files (``replicator/values/data/``, see
  :func:`_load_cells`), read the first time such a set is used.

Undecodable characters become U+FFFD and are reported once per value as warning 60008.
"""

from __future__ import annotations

import codecs
import itertools
import struct
import sys
import zlib
from array import array
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
    1: "US7ASCII",
    2: "WE8DEC",
    3: "WE8HP",
    4: "US8PC437",
    10: "WE8PC850",
    11: "D7DEC",
    13: "S7DEC",
    14: "E7DEC",
    15: "SF7ASCII",
    16: "NDK7DEC",
    17: "I7DEC",
    21: "SF7DEC",
    25: "IN8ISCII",
    28: "WE8PC858",
    31: "WE8ISO8859P1",
    32: "EE8ISO8859P2",
    33: "SE8ISO8859P3",
    34: "NEE8ISO8859P4",
    35: "CL8ISO8859P5",
    36: "AR8ISO8859P6",
    37: "EL8ISO8859P7",
    38: "IW8ISO8859P8",
    39: "WE8ISO8859P9",
    40: "NE8ISO8859P10",
    41: "TH8TISASCII",
    43: "BN8BSCII",
    44: "VN8VN3",
    45: "VN8MSWIN1258",
    46: "WE8ISO8859P15",
    47: "BLT8ISO8859P13",
    48: "CEL8ISO8859P14",
    49: "CL8ISOIR111",
    50: "WE8NEXTSTEP",
    51: "CL8KOI8U",
    52: "AZ8ISO8859P9E",
    61: "AR8ASMO708PLUS",
    81: "EL8DEC",
    82: "TR8DEC",
    110: "EEC8EUROASCI",
    113: "EEC8EUROPA3",
    114: "LA8PASSPORT",
    140: "BG8PC437S",
    150: "EE8PC852",
    152: "RU8PC866",
    153: "RU8BESTA",
    154: "IW8PC1507",
    155: "RU8PC855",
    156: "TR8PC857",
    159: "CL8MACCYRILLICS",
    160: "WE8PC860",
    161: "IS8PC861",
    162: "EE8MACCES",
    163: "EE8MACCROATIANS",
    164: "TR8MACTURKISHS",
    165: "IS8MACICELANDICS",
    166: "EL8MACGREEKS",
    167: "IW8MACHEBREWS",
    170: "EE8MSWIN1250",
    171: "CL8MSWIN1251",
    172: "ET8MSWIN923",
    173: "BG8MSWIN",
    174: "EL8MSWIN1253",
    175: "IW8MSWIN1255",
    176: "LT8MSWIN921",
    177: "TR8MSWIN1254",
    178: "WE8MSWIN1252",
    179: "BLT8MSWIN1257",
    190: "N8PC865",
    191: "BLT8CP921",
    192: "LV8PC1117",
    193: "LV8PC8LR",
    195: "LV8RST104090",
    196: "CL8KOI8R",
    197: "BLT8PC775",
    202: "E7SIEMENS9780X",
    203: "S7SIEMENS9780X",
    204: "DK7SIEMENS9780X",
    205: "N7SIEMENS9780X",
    206: "I7SIEMENS9780X",
    207: "D7SIEMENS9780X",
    241: "WE8DG",
    251: "WE8NCR4970",
    261: "WE8ROMAN8",
    352: "WE8MACROMAN8S",
    354: "TH8MACTHAIS",
    368: "HU8CWI2",
    380: "EL8PC437S",
    382: "EL8PC737",
    383: "LT8PC772",
    384: "LT8PC774",
    385: "EL8PC869",
    386: "EL8PC851",
    390: "CDN8PC863",
    401: "HU8ABMOD",
    500: "AR8ASMO8X",
    504: "AR8NAFITHA711T",
    505: "AR8SAKHR707T",
    506: "AR8MUSSAD768T",
    507: "AR8ADOS710T",
    508: "AR8ADOS720T",
    509: "AR8APTEC715T",
    511: "AR8NAFITHA721T",
    514: "AR8HPARABIC8T",
    554: "AR8NAFITHA711",
    555: "AR8SAKHR707",
    556: "AR8MUSSAD768",
    557: "AR8ADOS710",
    558: "AR8ADOS720",
    559: "AR8APTEC715",
    560: "AR8MSWIN1256",
    561: "AR8NAFITHA721",
    563: "AR8SAKHR706",
    566: "AR8ARABICMACS",
    590: "LA8ISO6937",
    829: "JA16VMS",
    830: "JA16EUC",
    831: "JA16EUCYEN",
    832: "JA16SJIS",
    834: "JA16SJISYEN",
    837: "JA16EUCTILDE",
    838: "JA16SJISTILDE",
    840: "KO16KSC5601",
    845: "KO16KSCCS",
    846: "KO16MSWIN949",
    850: "ZHS16CGB231280",
    852: "ZHS16GBK",
    854: "ZHS32GB18030",
    860: "ZHT32EUC",
    863: "ZHT32TRIS",
    865: "ZHT16BIG5",
    866: "ZHT16CCDC",
    867: "ZHT16MSWIN950",
    868: "ZHT16HKSCS",
    871: "UTF8",
    873: "AL32UTF8",
    992: "ZHT16HKSCS31",
    1002: "TIMESTEN8",
    2000: "AL16UTF16",
}
CHARSET_IDS: Final[dict[str, int]] = {name: cid for cid, name in CHARSET_NAMES.items()}

# Multi-byte sets approximated by Python codecs (OLR ships its own tables for these).
_APPROXIMATE: Final[dict[str, str]] = {
    "JA16EUC": "euc_jp",
    "JA16EUCYEN": "euc_jp",
    "JA16EUCTILDE": "euc_jp",
    "JA16SJIS": "cp932",
    "JA16SJISYEN": "shift_jis",
    "JA16SJISTILDE": "cp932",
    "KO16KSC5601": "euc_kr",
    "KO16KSCCS": "johab",
    "KO16MSWIN949": "cp949",
    "ZHS16CGB231280": "gb2312",
    "ZHS16GBK": "gbk",
    "ZHS32GB18030": "gb18030",
    "ZHT16BIG5": "big5",
    "ZHT16MSWIN950": "cp950",
    "ZHT16HKSCS": "big5hkscs",
    "ZHT16HKSCS31": "big5hkscs",
}


# Double-byte sets decoded with a table: (Python codec the table starts from, lead byte
# range, trail byte range, cells where OpenLogReplicator's table differs: ``bbbb=cccc``
# maps bytes bbbb to code point cccc, ``+n`` the next n cells to the next code points).
# JA16VMS is JIS X 0208 in EUC form; OLR's last row (F4) holds bytes that are not JIS
# characters (some spell ASCII text) - kept, since the output must match OLR's.
_DOUBLE_BYTE: Final[dict[str, tuple[str, tuple[int, int], tuple[int, int], str]]] = {
    "JA16VMS": (
        "euc_jp",
        (0xA1, 0xF4),
        (0xA1, 0xFE),
        (
            "a1b1=203e a1be=ad a1c1=ff5e a1c2=2225 a1dd=ff0d a1e5=2264+1 a1ef=a5 a2de=2040 a2e6=224c "
            "a2fe=20dd f4a7=ea f4a8=534a f4a9=4953 f4aa=2054 f4ab=4f20 f4ac=5554 f4ad=4632 f4b3=8089 "
            "f4b6=5a5a f4b8=110 f4bc=8083 f4bd=800f f4be=6c78 f4bf=6775 f4c0=7332 f4eb=8000 f4ec=8000 "
            "f4ed=8000 f4ee=8000 f4ef=800f f4f0=ea f4f1=ea f4f2=ea f4f3=ea f4f4=ea f4f5=ea f4f6=ea "
            "f4f7=ea f4f8=ea f4f9=ea f4fa=ea f4fb=ea f4fc=ea f4fd=ea f4fe=ea"
        ),
    ),
}


# Tables shipped as data files: (file, lead byte range, trail byte range) of the 16-bit sets.
_DOUBLE_BYTE_DATA: Final[dict[str, tuple[str, tuple[int, int], tuple[int, int]]]] = {
    "ZHT16CCDC": ("zht16ccdc.bin", (0xA1, 0xFB), (0x21, 0xFE)),
}

# CNS 11643 in EUC form. ``cns11643.bin`` holds OLR's planes 1 (rows A1-FD), 2 and 14 (rows
# A1-F2), 94 columns (A1-FE) each; its other planes are empty. ZHT32EUC: plane 1 as two bytes
# (row, column), planes 2-14 as 8E, A0 + plane, row (A1-F2), column. ZHT32TRIS: only the four
# byte form, planes 1-14, rows A1-FE, with a few cells of its own (``cell=code point``).
_CNS_PLANES: Final = ((1, 0xFD), (2, 0xF2), (14, 0xF2))  # (plane, last row) in file order
_EUC_TW: Final[dict[str, tuple[bool, tuple[int, int], tuple[int, int], str]]] = {
    # name: (plane 1 as two bytes, plane byte range, row byte range of the 4-byte form, overrides)
    "ZHT32EUC": (True, (0xA2, 0xAE), (0xA1, 0xF2), ""),
    "ZHT32TRIS": (False, (0xA1, 0xAE), (0xA1, 0xFE), "8ea1a1b6=fffd 8ea1a1b7=2013 8ea1a1b8=fe31 8ea1a1b9=2014"),
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

    @property
    def table(self) -> str:
        """The character of every byte value (U+FFFD where undefined)."""
        return self._table

    def to_utf8(self, data: bytes) -> bytes:
        if self._ascii_identity and data.isascii():
            return data
        return codecs.charmap_decode(data, "strict", self._table)[0].encode("utf-8")


class _PythonCodec(Charset):
    exact = False

    def __init__(self, name: str, codec: str):
        super().__init__(name)
        self._codec = codec

    @property
    def codec(self) -> str:
        """The Python codec used for this set."""
        return self._codec

    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        return data.decode(self._codec, "replace").encode("utf-8")


class _DoubleByte(Charset):
    """A lead/trail byte table (OLR's 16-bit sets): ASCII below 0x80, two bytes otherwise.

    A lead byte at the end of the data, or a pair outside the ranges, is one U+FFFD.
    """

    def __init__(self, name: str, lead: tuple[int, int], trail: tuple[int, int], table: dict[int, str]):
        super().__init__(name)
        self.lead, self.trail = lead, trail
        self.table = table  # lead << 8 | trail -> character (U+FFFD where undefined)

    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        out: list[str] = []
        bad, i, n = 0, 0, len(data)
        while i < n:
            b1 = data[i]
            if b1 < 0x80:
                out.append(chr(b1))
                i += 1
                continue
            if i + 1 >= n:
                out.append("\ufffd")
                bad += 1
                break
            b2 = data[i + 1]
            i += 2
            if self.lead[0] <= b1 <= self.lead[1] and self.trail[0] <= b2 <= self.trail[1]:
                out.append(self.table[b1 << 8 | b2])
            else:
                out.append("\ufffd")
                bad += 1
        self._report(bad, data)
        return "".join(out).encode("utf-8")


class _EucTw(Charset):
    """CNS 11643 in EUC form, following OLR: ASCII below 0x80; 8E, plane, row, column; and
    (ZHT32EUC) plane 1 as row, column.

    A byte outside every form is one U+FFFD; so is a sequence cut short by the end of the data
    or by a byte out of range, which takes that byte with it (as OLR consumes it).
    """

    def __init__(self, name: str, two_byte: bool, planes: tuple[int, int], rows: tuple[int, int], overrides: str):
        super().__init__(name)
        self.two_byte, self.planes, self.rows = two_byte, planes, rows
        self.table: dict[int, str] = {}  # cell (its bytes big-endian) -> character; only defined cells
        cells = iter(_load_cells("cns11643.bin"))
        for plane, last_row in _CNS_PLANES:
            for row in range(0xA1, last_row + 1):
                for column in range(0xA1, 0xFF):
                    point = next(cells)
                    if point == 0xFFFD:
                        continue
                    if plane == 1 and two_byte:
                        self.table[row << 8 | column] = chr(point)
                    elif planes[0] <= 0xA0 + plane <= planes[1] and row <= rows[1]:
                        self.table[0x8E << 24 | (0xA0 + plane) << 16 | row << 8 | column] = chr(point)
        for item in overrides.split():
            cell, _, value = item.partition("=")
            if int(value, 16) == 0xFFFD:
                self.table.pop(int(cell, 16), None)
            else:
                self.table[int(cell, 16)] = chr(int(value, 16))

    def to_utf8(self, data: bytes) -> bytes:
        if data.isascii():
            return data
        out: list[str] = []
        table, (p_min, p_max), (r_min, r_max) = self.table, self.planes, self.rows
        bad, i, n = 0, 0, len(data)
        while i < n:
            b1 = data[i]
            if b1 < 0x80:
                out.append(chr(b1))
                i += 1
                continue
            if b1 == 0x8E and i + 1 < n:
                b2 = data[i + 1]
                if not p_min <= b2 <= p_max or i + 2 >= n:
                    i += 2
                elif not r_min <= data[i + 2] <= r_max or i + 3 >= n:
                    i += 3
                else:
                    b3, b4 = data[i + 2], data[i + 3]
                    i += 4
                    if 0xA1 <= b4 <= 0xFE:
                        out.append(table.get(0x8E << 24 | b2 << 16 | b3 << 8 | b4, "\ufffd"))
                        continue
            elif self.two_byte and 0xA1 <= b1 <= 0xFD and i + 1 < n:
                b2 = data[i + 1]
                i += 2
                if 0xA1 <= b2 <= 0xFE:
                    out.append(table.get(b1 << 8 | b2, "\ufffd"))
                    continue
            else:
                i += 1
            out.append("\ufffd")
            bad += 1
        self._report(bad, data)
        return "".join(out).encode("utf-8")


def _codec_cells(codec: str, lead: tuple[int, int], trail: tuple[int, int], overrides: str) -> dict[int, str]:
    """A lead/trail table from a Python codec plus OLR's differences (see ``_DOUBLE_BYTE``)."""
    table: dict[int, str] = {}
    for b1 in range(lead[0], lead[1] + 1):
        for b2 in range(trail[0], trail[1] + 1):
            try:
                char = bytes([b1, b2]).decode(codec)
            except UnicodeDecodeError:
                char = "\ufffd"
            table[b1 << 8 | b2] = char if len(char) == 1 else "\ufffd"
    for item in overrides.split():
        cell, _, value = item.partition("=")
        point, _, run = value.partition("+")
        for i in range(int(run or 0) + 1):
            table[int(cell, 16) + i] = chr(int(point, 16) + i)
    return table


def _data_cells(file: str, lead: tuple[int, int], trail: tuple[int, int]) -> dict[int, str]:
    """A lead/trail table from a data file (cells in lead, then trail order)."""
    cells = iter(_load_cells(file))
    return {
        b1 << 8 | b2: chr(next(cells)) for b1 in range(lead[0], lead[1] + 1) for b2 in range(trail[0], trail[1] + 1)
    }


def _load_cells(file: str) -> list[int]:
    """Code points of a table in ``replicator/values/data`` (U+FFFD where undefined).

    The file is zlib-compressed: the cell count (uint32), a bitmap of the defined cells (bit
    ``i & 7`` of byte ``i >> 3``), then each defined cell's code point minus the previous
    defined one's, modulo 2**16 (uint16); all little-endian.
    """
    from importlib.resources import files

    raw = zlib.decompress(files(__package__).joinpath("data", file).read_bytes())
    (count,) = struct.unpack_from("<I", raw)
    bitmap = raw[4 : 4 + (count + 7) // 8]
    deltas = array("H")
    deltas.frombytes(raw[4 + len(bitmap) :])
    if sys.byteorder == "big":
        deltas.byteswap()
    points = itertools.accumulate(deltas, lambda point, delta: (point + delta) & 0xFFFF)
    cells = [next(points) if bitmap[i >> 3] >> (i & 7) & 1 else 0xFFFD for i in range(count)]
    if next(points, None) is not None:
        raise ValueError(f"character set data {file} is corrupt")
    return cells


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
    if name in _DOUBLE_BYTE:
        codec, lead, trail, overrides = _DOUBLE_BYTE[name]
        return _DoubleByte(name, lead, trail, _codec_cells(codec, lead, trail, overrides))
    if name in _DOUBLE_BYTE_DATA:
        file, lead, trail = _DOUBLE_BYTE_DATA[name]
        return _DoubleByte(name, lead, trail, _data_cells(file, lead, trail))
    if name in _EUC_TW:
        return _EucTw(name, *_EUC_TW[name])
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


def column_charset_name(charset_form: int, charset_id: int, is_clob: bool, db_charset: str, nchar_charset: str) -> str:
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
