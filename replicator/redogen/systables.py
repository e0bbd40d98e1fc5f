"""Oracle's own dictionary tables (SYS.OBJ$, COL$, TAB$...) as a 23ai database defines them.

A real schema checkpoint holds, besides the user tables, the OBJ$, TAB$ and COL$ rows of
the dictionary tables OpenLogReplicator mirrors: that is how it decodes their redo DML.
These are their definitions (23ai; Oracle's ``sql.bsq``): object and data object numbers,
cluster key column count (COL$, TAB$ and LOB$ live in cluster C_OBJ#, data object 2),
TAB$ flags/property, OBJ$ flags and every column in COL# order as
``NAME TYPE# LENGTH SEGCOL# [NN] [cs=CHARSETID] [cf=FORM] [p=PRECISION] [s=SCALE] [prop=PROPERTY]``
(NN: NOT NULL). Columns of a clustered table list the cluster key first in SEGCOL# order;
LONG columns are stored last, so SEGCOL# differs from COL# for some of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final


@dataclass(frozen=True, slots=True)
class SysColumn:
    """One COL$ row of a dictionary table."""

    name: str
    col: int
    segcol: int
    type_code: int
    length: int
    nullable: bool
    charset_id: int = 0
    charset_form: int = 0
    precision: int = -1
    scale: int = -1
    property: int = 0


@dataclass(frozen=True, slots=True)
class SysTable:
    """A dictionary table: identity, storage and columns (``columns`` in SEGCOL# order)."""

    name: str
    obj: int
    data_obj: int
    clu_cols: int
    tab_flags: int
    tab_property: int
    obj_flags: int
    columns: tuple[SysColumn, ...]

    def column(self, name: str) -> SysColumn:
        """A column by name (KeyError if unknown)."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"SYS.{self.name} has no column {name}")


_RAW: Final = (
    (
        "CDEF$",
        31,
        29,
        1,
        529,
        1024,
        4259840,
        """
        CON# 2 22 2 NN
        OBJ# 2 22 1 NN
        COLS 2 22 3
        TYPE# 2 22 4 NN
        ROBJ# 2 22 5
        RCON# 2 22 6
        RRULES 1 3 7 cs=873
        MATCH# 2 22 8
        REFACT 2 22 9
        ENABLED 2 22 10
        CONDLENGTH 2 22 11
        CONDITION 8 0 21 cs=873
        INTCOLS 2 22 13
        MTIME 12 7 14
        DEFER 2 22 15
        SPARE1 2 22 16
        SPARE2 2 22 17
        SPARE3 2 22 18
        SPARE4 1 1000 19 cs=873
        SPARE5 1 1000 20 cs=873
        SPARE6 12 7 12
    """,
    ),
    (
        "CCOL$",
        32,
        29,
        1,
        529,
        1024,
        4259840,
        """
        CON# 2 22 2 NN
        OBJ# 2 22 1 NN
        COL# 2 22 3 NN
        POS# 2 22 4
        INTCOL# 2 22 5 NN
        SPARE1 2 22 6
        SPARE2 2 22 7
        SPARE3 2 22 8
        SPARE4 1 1000 9 cs=873
        SPARE5 1 1000 10 cs=873
        SPARE6 12 7 11
    """,
    ),
    (
        "COL$",
        21,
        2,
        1,
        529,
        1024,
        4259840,
        """
        OBJ# 2 22 1 NN
        COL# 2 22 2 NN
        SEGCOL# 2 22 3 NN
        SEGCOLLENGTH 2 22 4 NN
        OFFSET 2 22 5 NN
        NAME 1 128 6 NN cs=873
        TYPE# 2 22 7 NN
        LENGTH 2 22 8 NN
        FIXEDSTORAGE 2 22 9 NN
        PRECISION# 2 22 10
        SCALE 2 22 11
        NULL$ 2 22 12 NN
        DEFLENGTH 2 22 13
        DEFAULT$ 8 0 37 cs=873
        INTCOL# 2 22 15 NN
        PROPERTY 2 22 16 NN
        CHARSETID 2 22 17
        CHARSETFORM 2 22 18
        EVALEDITION# 2 22 19
        UNUSABLEBEFORE# 2 22 20
        UNUSABLEBEGINNING# 2 22 21
        SPARE1 2 22 22
        SPARE2 2 22 23
        SPARE3 2 22 24
        SPARE4 1 1000 25 cs=873
        SPARE5 1 1000 26 cs=873
        SPARE6 12 7 27
        SPARE7 2 22 28
        SPARE8 2 22 29
        COLLID 2 22 30
        COLLINTCOL# 2 22 31
        SPARE9 2 22 32
        SPARE10 2 22 33
        SPARE11 1 1000 34 cs=873
        SPARE12 1 1000 35 cs=873
        SPARE13 180 11 36 s=6
        ACDRRESCOL# 2 22 14
    """,
    ),
    (
        "USER$",
        22,
        10,
        1,
        529,
        618970019642690137449563136,
        4259840,
        """
        USER# 2 22 1 NN
        NAME 1 128 2 NN cs=873
        TYPE# 2 22 3 NN
        PASSWORD 1 4000 4 cs=873 prop=8796093022208
        DATATS# 2 22 5 NN
        TEMPTS# 2 22 6 NN
        CTIME 12 7 7 NN
        PTIME 12 7 8
        EXPTIME 12 7 9
        LTIME 12 7 10
        RESOURCE$ 2 22 11 NN
        AUDIT$ 1 38 12 cs=873
        DEFROLE 2 22 13 NN
        DEFGRP# 2 22 14
        DEFGRP_SEQ# 2 22 15
        ASTATUS 2 22 16 NN
        LCOUNT 2 22 17 NN
        DEFSCHCLASS 1 128 18 cs=873
        EXT_USERNAME 1 4000 19 cs=873
        SPARE1 2 22 20
        SPARE2 2 22 21
        SPARE3 2 22 22
        SPARE4 1 1000 23 cs=873 prop=8796093022208
        SPARE5 1 1000 24 cs=873
        SPARE6 12 7 25
        SPARE7 1 4000 26 cs=873
        SPARE8 1 4000 27 cs=873
        SPARE9 2 22 28
        SPARE10 2 22 29
        SPARE11 180 11 30 s=6
        SPARE12 2 22 31
        SPARE13 2 22 32
        SPARE14 2 22 33
        SPARE15 12 7 34
        SPARE16 1 4000 35 cs=873
    """,
    ),
    (
        "TAB$",
        4,
        2,
        1,
        529,
        1024,
        4259840,
        """
        OBJ# 2 22 1 NN
        DATAOBJ# 2 22 2
        TS# 2 22 3 NN
        FILE# 2 22 4 NN
        BLOCK# 2 22 5 NN
        BOBJ# 2 22 6
        TAB# 2 22 7
        COLS 2 22 8 NN
        CLUCOLS 2 22 9
        PCTFREE$ 2 22 10 NN
        PCTUSED$ 2 22 11 NN
        INITRANS 2 22 12 NN
        MAXTRANS 2 22 13 NN
        FLAGS 2 22 14 NN
        AUDIT$ 1 38 15 NN cs=873
        ROWCNT 2 22 16
        BLKCNT 2 22 17
        EMPCNT 2 22 18
        AVGSPC 2 22 19
        CHNCNT 2 22 20
        AVGRLN 2 22 21
        AVGSPC_FLB 2 22 22
        FLBCNT 2 22 23
        ANALYZETIME 12 7 24
        SAMPLESIZE 2 22 25
        DEGREE 2 22 26
        INSTANCES 2 22 27
        INTCOLS 2 22 28 NN
        KERNELCOLS 2 22 29 NN
        PROPERTY 2 22 30 NN
        TRIGFLAG 2 22 31
        SPARE1 2 22 32
        SPARE2 2 22 33
        SPARE3 2 22 34
        SPARE4 1 1000 35 cs=873
        SPARE5 1 1000 36 cs=873
        SPARE6 12 7 37
        SPARE7 2 22 38
        SPARE8 2 22 39
        SPARE9 1 1000 40 cs=873
        SPARE10 1 1000 41 cs=873
        ACDRFLAGS 2 22 42
        ACDRTSOBJ# 2 22 43
        ACDRDEFAULTTIME 180 11 44 s=6
        ACDRROWTSINTCOL# 2 22 45
    """,
    ),
    (
        "OBJ$",
        18,
        18,
        0,
        529,
        0,
        4259840,
        """
        OBJ# 2 22 1 NN
        DATAOBJ# 2 22 2
        OWNER# 2 22 3 NN
        NAME 1 128 4 NN cs=873
        NAMESPACE 2 22 5 NN
        SUBNAME 1 128 6 cs=873
        TYPE# 2 22 7 NN
        CTIME 12 7 8 NN
        MTIME 12 7 9 NN
        STIME 12 7 10 NN
        STATUS 2 22 11 NN
        REMOTEOWNER 1 128 12 cs=873
        LINKNAME 1 128 13 cs=873
        FLAGS 2 22 14
        OID$ 23 16 15
        SPARE1 2 22 16
        SPARE2 2 22 17
        SPARE3 2 22 18
        SPARE4 1 1000 19 cs=873
        SPARE5 1 1000 20 cs=873
        SPARE6 12 7 21
        SIGNATURE 23 16 22
        SPARE7 2 22 23
        SPARE8 2 22 24
        SPARE9 2 22 25
        DFLCOLLID 2 22 26
        CREAPPID 2 22 27
        CREVERID 2 22 28
        CREPATCHID 2 22 29
        MODAPPID 2 22 30
        MODVERID 2 22 31
        MODPATCHID 2 22 32
        SPARE10 2 22 33
        SPARE11 2 22 34
        SPARE12 1 1000 35 cs=873
        SPARE13 1 1000 36 cs=873
        SPARE14 180 11 37 s=6
    """,
    ),
    (
        "TS$",
        16,
        6,
        1,
        529,
        1024,
        4259840,
        """
        TS# 2 22 1 NN
        NAME 1 30 2 NN cs=873
        OWNER# 2 22 3 NN
        ONLINE$ 2 22 4 NN
        CONTENTS$ 2 22 5 NN
        UNDOFILE# 2 22 6
        UNDOBLOCK# 2 22 7
        BLOCKSIZE 2 22 8 NN
        INC# 2 22 9 NN
        SCNWRP 2 22 10
        SCNBAS 2 22 11
        DFLMINEXT 2 22 12 NN
        DFLMAXEXT 2 22 13 NN
        DFLINIT 2 22 14 NN
        DFLINCR 2 22 15 NN
        DFLMINLEN 2 22 16 NN
        DFLEXTPCT 2 22 17 NN
        DFLOGGING 2 22 18 NN
        AFFSTRENGTH 2 22 19 NN
        BITMAPPED 2 22 20 NN
        PLUGGED 2 22 21 NN
        DIRECTALLOWED 2 22 22 NN
        FLAGS 2 22 23 NN
        PITRSCNWRP 2 22 24
        PITRSCNBAS 2 22 25
        OWNERINSTANCE 1 30 26 cs=873
        BACKUPOWNER 1 30 27 cs=873
        GROUPNAME 1 30 28 cs=873
        SPARE1 2 22 29
        SPARE2 2 22 30
        SPARE3 1 1000 31 cs=873
        SPARE4 12 7 32
    """,
    ),
    (
        "DEFERRED_STG$",
        81,
        81,
        0,
        529,
        536870912,
        4259840,
        """
        OBJ# 2 22 1 NN
        PCTFREE_STG 2 22 2
        PCTUSED_STG 2 22 3
        SIZE_STG 2 22 4
        INITIAL_STG 2 22 5
        NEXT_STG 2 22 6
        MINEXT_STG 2 22 7
        MAXEXT_STG 2 22 8
        MAXSIZ_STG 2 22 9
        LOBRET_STG 2 22 10
        MINTIM_STG 2 22 11
        PCTINC_STG 2 22 12
        INITRA_STG 2 22 13
        MAXTRA_STG 2 22 14
        OPTIMAL_STG 2 22 15
        MAXINS_STG 2 22 16
        FRLINS_STG 2 22 17
        FLAGS_STG 2 22 18
        BFP_STG 2 22 19
        ENC_STG 2 22 20
        CMPFLAG_STG 2 22 21
        CMPLVL_STG 2 22 22
        IMCFLAG_STG 2 22 23
        CCFLAG_STG 2 22 24
        FLAGS2_STG 2 22 25
    """,
    ),
    (
        "LOB$",
        114,
        2,
        1,
        529,
        1024,
        4259840,
        """
        OBJ# 2 22 1 NN
        COL# 2 22 2 NN
        INTCOL# 2 22 3 NN
        LOBJ# 2 22 4 NN
        PART# 2 22 5 NN
        IND# 2 22 6 NN
        TS# 2 22 7 NN
        FILE# 2 22 8 NN
        BLOCK# 2 22 9 NN
        CHUNK 2 22 10 NN
        PCTVERSION$ 2 22 11 NN
        FLAGS 2 22 12 NN
        PROPERTY 2 22 13 NN
        RETENTION 2 22 14 NN
        FREEPOOLS 2 22 15 NN
        SPARE1 2 22 16
        SPARE2 2 22 17
        SPARE3 1 255 18 cs=873
        MAXINL 2 22 19 NN
    """,
    ),
    (
        "ECOL$",
        158,
        158,
        0,
        529,
        537135104,
        4259840,
        """
        TABOBJ# 2 22 1
        COLNUM 2 22 2
        BINARYDEFVAL 113 4000 3 prop=128
        GUARD_ID 2 22 4
    """,
    ),
    (
        "TABPART$",
        947,
        947,
        0,
        529,
        537135104,
        4259840,
        """
        OBJ# 2 22 1 NN
        DATAOBJ# 2 22 2
        BO# 2 22 3 NN
        PART# 2 22 4 NN
        HIBOUNDLEN 2 22 5 NN
        HIBOUNDVAL 8 0 27 cs=873
        TS# 2 22 7
        FILE# 2 22 8
        BLOCK# 2 22 9
        PCTFREE$ 2 22 10 NN
        PCTUSED$ 2 22 11 NN
        INITRANS 2 22 12 NN
        MAXTRANS 2 22 13 NN
        FLAGS 2 22 14 NN
        ANALYZETIME 12 7 15
        SAMPLESIZE 2 22 16
        ROWCNT 2 22 17
        BLKCNT 2 22 18
        EMPCNT 2 22 19
        AVGSPC 2 22 20
        CHNCNT 2 22 21
        AVGRLN 2 22 22
        SPARE1 2 22 23
        SPARE2 2 22 24
        SPARE3 2 22 25
        BHIBOUNDVAL 113 4000 26 prop=128
        CHUNKID 2 22 6
    """,
    ),
    (
        "TABSUBPART$",
        959,
        959,
        0,
        529,
        537135104,
        4259840,
        """
        OBJ# 2 22 1 NN
        DATAOBJ# 2 22 2
        POBJ# 2 22 3 NN
        SUBPART# 2 22 4 NN
        FLAGS 2 22 5 NN
        TS# 2 22 6 NN
        FILE# 2 22 7 NN
        BLOCK# 2 22 8 NN
        PCTFREE$ 2 22 9 NN
        PCTUSED$ 2 22 10 NN
        INITRANS 2 22 11 NN
        MAXTRANS 2 22 12 NN
        ANALYZETIME 12 7 13
        SAMPLESIZE 2 22 14
        ROWCNT 2 22 15
        BLKCNT 2 22 16
        EMPCNT 2 22 17
        AVGSPC 2 22 18
        CHNCNT 2 22 19
        AVGRLN 2 22 20
        SPARE1 2 22 21
        SPARE2 2 22 22
        SPARE3 2 22 23
        HIBOUNDLEN 2 22 24 NN
        HIBOUNDVAL 8 0 26 cs=873
        BHIBOUNDVAL 113 4000 25 prop=128
    """,
    ),
    (
        "TABCOMPART$",
        969,
        969,
        0,
        529,
        537135104,
        4259840,
        """
        OBJ# 2 22 1 NN
        DATAOBJ# 2 22 2
        BO# 2 22 3 NN
        PART# 2 22 4 NN
        HIBOUNDLEN 2 22 5 NN
        HIBOUNDVAL 8 0 36 cs=873
        SUBPARTCNT 2 22 7 NN
        FLAGS 2 22 8 NN
        DEFTS# 2 22 9
        DEFPCTFREE 2 22 10 NN
        DEFPCTUSED 2 22 11 NN
        DEFINITRANS 2 22 12 NN
        DEFMAXTRANS 2 22 13 NN
        DEFINIEXTS 2 22 14
        DEFEXTSIZE 2 22 15
        DEFMINEXTS 2 22 16
        DEFMAXEXTS 2 22 17
        DEFEXTPCT 2 22 18
        DEFLISTS 2 22 19
        DEFGROUPS 2 22 20
        DEFLOGGING 2 22 21
        DEFBUFPOOL 2 22 22
        ANALYZETIME 12 7 23
        SAMPLESIZE 2 22 24
        ROWCNT 2 22 25
        BLKCNT 2 22 26
        EMPCNT 2 22 27
        AVGSPC 2 22 28
        CHNCNT 2 22 29
        AVGRLN 2 22 30
        SPARE1 2 22 31
        SPARE2 2 22 32
        SPARE3 2 22 33
        BHIBOUNDVAL 113 4000 34 prop=128
        DEFMAXSIZE 2 22 35
        CHUNKID 2 22 6
    """,
    ),
    (
        "LOBFRAG$",
        980,
        980,
        0,
        529,
        536870912,
        4259840,
        """
        FRAGOBJ# 2 22 1 NN
        PARENTOBJ# 2 22 2 NN
        TABFRAGOBJ# 2 22 3 NN
        INDFRAGOBJ# 2 22 4 NN
        FRAG# 2 22 5 NN
        FRAGTYPE$ 1 1 6 cs=873
        TS# 2 22 7 NN
        FILE# 2 22 8 NN
        BLOCK# 2 22 9 NN
        CHUNK 2 22 10 NN
        PCTVERSION$ 2 22 11 NN
        FRAGFLAGS 2 22 12 NN
        FRAGPRO 2 22 13 NN
        SPARE1 2 22 14
        SPARE2 2 22 15
        SPARE3 2 22 16
        MAXINL 2 22 17 NN
    """,
    ),
    (
        "LOBCOMPPART$",
        983,
        983,
        0,
        529,
        17716740096,
        4259840,
        """
        PARTOBJ# 2 22 1 NN
        LOBJ# 2 22 2 NN
        TABPARTOBJ# 2 22 3 NN
        INDPARTOBJ# 2 22 4 NN
        PART# 2 22 5 NN
        DEFTS# 2 22 6
        DEFCHUNK 2 22 7 NN
        DEFPCTVER$ 2 22 8 NN
        DEFFLAGS 2 22 9 NN
        DEFPRO 2 22 10 NN
        DEFINIEXTS 2 22 11
        DEFEXTSIZE 2 22 12
        DEFMINEXTS 2 22 13
        DEFMAXEXTS 2 22 14
        DEFEXTPCT 2 22 15
        DEFLISTS 2 22 16
        DEFGROUPS 2 22 17
        DEFBUFPOOL 2 22 18
        SPARE1 2 22 19
        SPARE2 2 22 20
        SPARE3 2 22 21
        DEFMAXSIZE 2 22 22
        DEFRETENTION 2 22 23
        DEFMINTIME 2 22 24
    """,
    ),
)


def _parse(line: str, col: int) -> SysColumn:
    name, type_code, length, segcol, *rest = line.split()
    opts = dict(item.split("=", 1) for item in rest if "=" in item)
    cs = int(opts.get("cs", 0))
    return SysColumn(
        name,
        col,
        int(segcol),
        int(type_code),
        int(length),
        "NN" not in rest,
        cs,
        int(opts.get("cf", 1 if cs else 0)),
        int(opts.get("p", -1)),
        int(opts.get("s", -1)),
        int(opts.get("prop", 0)),
    )


@lru_cache(maxsize=1)
def sys_tables() -> dict[str, SysTable]:
    """Every mirrored dictionary table by name (``COL$``...)."""
    out: dict[str, SysTable] = {}
    for name, obj, data_obj, clu_cols, tab_flags, tab_property, obj_flags, text in _RAW:
        cols = [_parse(line, n) for n, line in enumerate(text.strip().splitlines(), start=1)]
        out[name] = SysTable(
            name,
            obj,
            data_obj,
            clu_cols,
            tab_flags,
            tab_property,
            obj_flags,
            tuple(sorted(cols, key=lambda c: c.segcol)),
        )
    return out
