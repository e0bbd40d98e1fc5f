"""The event model shared by the parser, the formats, the writers and the redo generator.

The parser turns redo into committed :class:`Transaction` objects whose row changes hold
*raw* Oracle column bytes, indexed by table column position. Values are decoded only
when a format renders them (and only for tables that passed the filter), so the hot path
never pays for columns nobody reads.

A format turns one transaction into :class:`Message` objects; a writer delivers them and
confirms their positions back to the checkpoint manager.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

# Row operation codes, as they appear in OpenLogReplicator JSON.
OP_INSERT: Final = "c"
OP_UPDATE: Final = "u"
OP_DELETE: Final = "d"

# SYS.COL$.TYPE# values the decoders know (redo-format.md §8).
TYPE_VARCHAR2: Final = 1
TYPE_NUMBER: Final = 2
TYPE_LONG: Final = 8
TYPE_DATE: Final = 12
TYPE_RAW: Final = 23
TYPE_LONG_RAW: Final = 24
TYPE_XMLTYPE: Final = 58
TYPE_CHAR: Final = 96
TYPE_BINARY_FLOAT: Final = 100
TYPE_BINARY_DOUBLE: Final = 101
TYPE_CLOB: Final = 112
TYPE_BLOB: Final = 113
TYPE_JSON: Final = 119
TYPE_TIMESTAMP: Final = 180
TYPE_TIMESTAMP_TZ: Final = 181
TYPE_INTERVAL_YM: Final = 182
TYPE_INTERVAL_DS: Final = 183
TYPE_UROWID: Final = 208
TYPE_TIMESTAMP_LTZ: Final = 231
TYPE_BOOLEAN: Final = 252

# SYS.COL$.PROPERTY bits that decide visibility (olr-interfaces.md §5.2).
COL_PROPERTY_HIDDEN: Final = 0x20
COL_PROPERTY_STORED_AS_LOB: Final = 0x80
COL_PROPERTY_NESTED: Final = 0x400
COL_PROPERTY_UNUSED: Final = 0x8000
COL_PROPERTY_GUARD: Final = 1 << 39


# The transaction attributes (5.19/5.20 session records) in the order of OLR's attribute enum,
# which is the order its `attrs` prints them; filter conditions may name any of them.
ATTRIBUTE_ORDER: Final = (
    "version",
    "audit session id",
    "session number",
    "serial number",
    "current user name",
    "login username",
    "client info",
    "os username",
    "machine name",
    "os terminal",
    "os process id",
    "os program name",
    "transaction name",
    "client id",
    "ddl transaction",
    "space management transaction",
    "recursive transaction",
    "logminer internal transaction",
    "db open in migrate mode",
    "lsby ignore",
    "logminer no transaction chunking",
    "logminer stealth transaction",
    "lsby preserve",
    "logminer marker transaction",
    "transaction in pragma'ed plsql",
    "disabled logical replication transaction",
    "datapump import transaction",
    "transaction audit CV flags undefined",
    "federation pdb replay",
    "pdb ddl replay",
    "logminer skip transaction",
    "seq$ update transaction",
)


@dataclass(slots=True)
class Column:
    """One table column from the dictionary (SYS.COL$), in segment-column order."""

    name: str
    type_code: int  # SYS.COL$.TYPE#
    length: int
    precision: int  # -1 when unspecified
    scale: int  # -1 when unspecified
    charset_form: int  # 1 database charset, 2 national charset
    charset_id: int
    nullable: bool
    segcol: int  # 1-based SYS.COL$.SEGCOL#
    property: int = 0
    key: bool = False  # part of the primary key (or the configured `key` list)
    guard: bool = False
    hidden: bool = False
    nested: bool = False
    unused: bool = False
    # OLR's xmlType: a system-generated column holding the data of a virtual (SEGCOL# 0)
    # column with the same COL#, e.g. the hidden CLOB/BLOB of an XMLTYPE; it takes that
    # column's name, and source flag 0x10000 un-hides it.
    xml_type: bool = False


@dataclass(frozen=True, slots=True)
class TableLob:
    """Where one LOB column of a table is stored (SYS.LOB$, redo-format.md §11.2).

    ``segments`` maps the DATAOBJ# of the LOB segment (and of each LOB partition) to its
    page size; ``indexes`` are the DATAOBJ#s of the LOB index (SYS_IL...), whose leaf
    changes give the page order of BasicFile LOBs.
    """

    column: int  # index into Table.columns
    segments: dict[int, int]
    indexes: tuple[int, ...] = ()


@dataclass(slots=True)
class Table:
    """A replicated table: dictionary identity plus its columns.

    ``columns[i]`` is the column whose SEGCOL# is ``i + 1``; row images in
    :class:`RowChange` use the same index.
    """

    obj: int
    data_obj: int
    owner: str
    name: str
    columns: list[Column]
    key_columns: tuple[int, ...] = ()  # indexes into ``columns``
    system: bool = False  # a SYS dictionary table tracked internally
    tag_columns: tuple[int, ...] = ()  # filter `tag`: columns rendered as the Kafka key
    tag_mode: str = ""  # "", "pk", "all" or "list"
    charset: str = "AL32UTF8"  # NLS_CHARACTERSET of the database
    ncharset: str = "AL16UTF16"  # NLS_NCHAR_CHARACTERSET
    clu_cols: int = 0  # SYS.TAB$.CLUCOLS: cluster key columns in front of each row piece
    condition: str = ""  # filter `condition` of the rule that claimed the table
    lobs: tuple[TableLob, ...] = ()  # LOB columns with their segments (from SYS.LOB$)


# A row image: table column index -> raw Oracle bytes, or None for SQL NULL.
RowImage = dict[int, "bytes | None"]


@dataclass(slots=True)
class RowChange:
    """One logical row change (after chained pieces were merged).

    ``table`` is None in schemaless mode or when the dictionary does not know ``obj``;
    formats then name the table ``OBJ_<obj>`` and columns ``COL_<n>`` with hex values.
    """

    op: str  # OP_INSERT / OP_UPDATE / OP_DELETE
    obj: int
    data_obj: int
    table: Table | None
    before: RowImage | None
    after: RowImage | None
    scn: int  # SCN of the redo record holding the change
    time: int  # epoch seconds of the record (LWN timestamp)
    bdba: int  # block of the row (ROWID), 0 if unknown
    slot: int  # row slot in that block (ROWID)
    offset: int = 0  # byte offset of the redo record in its file
    compressed: bytes | None = None  # an undecodable compressed row piece, output raw


@dataclass(slots=True)
class DdlChange:
    """A DDL statement (opcode 24.1), emitted when source flag 0x20 asks for it."""

    obj: int
    owner: str
    table: Table | None
    sql: str
    statement_type: int
    scn: int
    time: int
    offset: int = 0
    # With no ``table`` (not replicated, or created by this very transaction): the object's
    # name in SYS.OBJ$ as the transaction has written it so far, ``owner`` then being its
    # USER$ name (OLR's uncommitted-dictionary lookup); "" when OBJ$ has no such row.
    name: str = ""


Change = RowChange | DdlChange


@dataclass(slots=True)
class Transaction:
    """A committed transaction, ready to be formatted.

    ``xid`` is packed as ``usn << 48 | slot << 32 | sqn``.
    """

    xid: int
    begin_scn: int
    begin_time: int  # epoch seconds
    commit_scn: int
    commit_time: int  # epoch seconds
    # A list, or, for a transaction too big to hold (see Parser.stream_bytes), a one-pass
    # iterator that must be consumed before the parser moves on.
    changes: Iterable[Change] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    thread: int = 1
    begin_seq: int = 0
    begin_offset: int = 0
    system: bool = False  # touched SYS dictionary tables
    con_name: str = ""  # container (PDB) name, output as `db`
    logon_user: int = -1  # logon user# (SYS.USER$.USER#) from the begin undo record; -1 unknown
    # Where the commit record was analysed: (sequence, byte offset of its LWN, rank of the
    # record in the LWN's analysis order). Unlike c_scn (the begin SCN), this orders the
    # output stream totally, so restarts can skip exactly what was confirmed.
    commit_pos: tuple[int, int, int] = (0, 0, 0)

    @property
    def usn(self) -> int:
        return self.xid >> 48

    @property
    def slot(self) -> int:
        return (self.xid >> 32) & 0xFFFF

    @property
    def sqn(self) -> int:
        return self.xid & 0xFFFFFFFF


@dataclass(slots=True)
class Checkpoint:
    """A position in the redo stream where no change is half-processed (after an LWN)."""

    scn: int
    time: int  # epoch seconds
    seq: int
    offset: int  # byte offset of the next block to read in the file
    redo_switch: bool = False  # set on a log switch
    thread: int = 1
    lwn_block: int = 0  # first block of the LWN this checkpoint follows


@dataclass(slots=True)
class Message:
    """One output message and its stream position.

    ``scn``/``idx`` are the position (c_scn and the *internal* index; JSON prints
    idx + 1). ``tag`` is the Kafka key (filter `tag`), or None. ``checkpoint`` marks
    chkpt messages, which are confirmed internally unless source flag 0x1000 is set.
    ``headers`` are Kafka record headers for formats that define them (None: no headers).
    ``tombstone`` marks a Kafka tombstone (key, null value; ``data`` is empty): only sinks
    with keys (Kafka) write it, the others confirm it unwritten. ``topic`` overrides the
    writer's topic (Debezium heartbeats go to their own topic).
    """

    data: bytes
    scn: int
    idx: int
    tag: bytes | None = None
    checkpoint: bool = False
    seq: int = 0  # redo sequence the message came from (file writer `%s`)
    xid: int = 0
    table: Table | None = None
    headers: list[tuple[str, bytes]] | None = None
    tombstone: bool = False
    topic: str | None = None
