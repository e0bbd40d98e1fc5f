"""``source[0].filter``: which tables are replicated and which transactions are skipped (§9)."""

import string
from typing import Annotated, Literal

from pydantic import Field, model_validator

from replicator.config.fields import After, OlrModel, bad_value, empty_list, max_len, olr_message

_HEX = frozenset(string.hexdigits)

# XID text layouts OLR accepts: total length -> (start, usn/slot/sqn widths, dot positions).
_XID_LAYOUTS: dict[int, tuple[int, tuple[int, int, int], tuple[int, ...]]] = {
    16: (0, (4, 4, 8), ()),
    17: (0, (4, 3, 8), (4, 8)),
    18: (0, (4, 4, 8), (4, 9)),
    19: (2, (4, 3, 8), (6, 10)),
    20: (2, (4, 4, 8), (6, 11)),
}


def parse_xid(text: str) -> int:
    """Parse an XID string of §9.1 into ``usn << 48 | slot << 32 | sqn``.

    Accepted (hex, any case): ``UUUUSSSSQQQQQQQQ``, ``UUUU.SSS.QQQQQQQQ``,
    ``UUUU.SSSS.QQQQQQQQ`` and the last two with a ``0x`` prefix. Raises ValueError.
    """
    layout = _XID_LAYOUTS.get(len(text))
    if layout is None:
        raise ValueError(f"bad XID value: {text}")
    start, widths, dots = layout
    if start and not text.startswith("0x"):
        raise ValueError(f"bad XID value: {text}")
    if any(text[i] != "." for i in dots):
        raise ValueError(f"bad XID value: {text}")
    digits = "".join(ch for i, ch in enumerate(text[start:], start) if i not in dots)
    if not set(digits) <= _HEX:
        raise ValueError(f"bad XID value: {text}")
    usn, slot, sqn = digits[: widths[0]], digits[widths[0] : widths[0] + widths[1]], digits[-widths[2] :]
    return int(usn, 16) << 48 | int(slot, 16) << 32 | int(sqn, 16)


def _xid_text(value: str) -> str:
    try:
        parse_xid(value)
    except ValueError as exc:
        raise olr_message(20002, str(exc)) from None
    return value


XidText = Annotated[str, max_len(32), After(_xid_text)]
TagMode = Literal["", "pk", "all", "list"]


class TableRule(OlrModel):
    """One ``filter.table`` element: owner/table regexes (full match) and options (§9.2).

    The patterns are ECMAScript regexes in OLR; they are compiled by the schema layer,
    not here, so a pattern Python's ``re`` reads differently is not rejected at load.
    """

    owner: Annotated[str, max_len(128)]
    table: Annotated[str, max_len(128)]
    key: Annotated[str | None, max_len(4096)] = None
    condition: Annotated[str | None, max_len(16384)] = None
    tag: Annotated[str | None, max_len(4096)] = None

    def key_columns(self, separator: str) -> list[str]:
        """The ``key`` column names, split by the filter separator ([] when absent)."""
        return [] if self.key is None else self.key.split(separator)

    def tag_spec(self, separator: str) -> tuple[TagMode, list[str]]:
        """The ``tag`` as (mode, columns): ``pk``, ``all``, a column ``list`` or ``""``."""
        if self.tag is None:
            return "", []
        if self.tag == "[pk]":
            return "pk", []
        if self.tag == "[all]":
            return "all", []
        return "list", self.tag.split(separator)


class FilterConfig(OlrModel):
    """``filter``: table rules (ignored when schemaless), separator and XID lists."""

    separator: Annotated[str, max_len(128)] = ","
    table: list[TableRule] = Field(default_factory=empty_list)
    skip_xid: list[XidText] = Field(default_factory=empty_list)
    dump_xid: list[XidText] = Field(default_factory=empty_list)

    @model_validator(mode="after")
    def _separator_usable(self) -> "FilterConfig":
        # OLR loops forever splitting on an empty separator; refuse it when it is used.
        if self.separator == "" and any(r.key is not None or r.tag is not None for r in self.table):
            raise bad_value("separator", "", 'a non-empty string when a table rule has "key" or "tag"')
        return self

    def skip_xid_values(self) -> frozenset[int]:
        """``skip-xid`` as packed XIDs (``usn << 48 | slot << 32 | sqn``)."""
        return frozenset(parse_xid(x) for x in self.skip_xid)

    def dump_xid_values(self) -> frozenset[int]:
        """``dump-xid`` as packed XIDs."""
        return frozenset(parse_xid(x) for x in self.dump_xid)
