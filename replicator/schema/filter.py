"""The ``filter.table`` rules: which tables are replicated, with which key and tag (§9.2).

:func:`build_table_map` evaluates the rules against a :class:`Dictionary` the way OLR does:
first the built-in rules for the SYS/XDB dictionary tables (tracked internally, marked
``system``), then the implicit ``.*``/``.*`` rule of adaptive schema mode (flag 0x4), then
the configured rules in order. A table claimed by an earlier rule is skipped by later ones.

The map is keyed by OBJ#: the table's own and those of its partitions and subpartitions,
because OLR looks a row change up by the ``obj`` of its 5.1 undo vector (ktub), which for
a partitioned table is the partition's OBJ#. DATAOBJ# is only used for LOB segments.

Patterns are Python regular expressions applied with :func:`re.fullmatch`, case-sensitive,
separately to the owner and table names. OLR uses ECMAScript (C++ ``std::regex``); the
patterns people write (``OWNER``, ``TAB.*``, ``A|B``, ``[A-Z_]+\\$``) behave the same.
Differences only show in exotic syntax: ECMAScript's ``(?<name>...)`` is ``(?P<name>...)``
here, Python adds lookbehind and inline flags, and ``\\d``/``\\w`` match non-ASCII digits and
letters in Python (Oracle names rarely contain them).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from replicator.errors import ConfigError, DataError
from replicator.events import Table
from replicator.flags import FLAG_ADAPTIVE_SCHEMA, FLAG_EXPERIMENTAL_XMLTYPE, FLAG_SCHEMALESS
from replicator.schema.condition import compile_condition
from replicator.schema.dictionary import Dictionary

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TableRule:
    """One ``filter.table`` element: owner/table patterns plus optional key, tag, condition."""

    owner: str
    table: str
    key: str | None = None
    tag: str | None = None
    condition: str | None = None


# The dictionary tables OLR mirrors, in the order it adds their rules (Metadata::resetElements).
SYSTEM_RULES: Final[tuple[TableRule, ...]] = tuple(
    [
        TableRule("SYS", name)
        for name in (
            r"CCOL\$",
            r"CDEF\$",
            r"COL\$",
            r"ECOL\$",
            r"DEFERRED_STG\$",
            r"LOB\$",
            r"LOBCOMPPART\$",
            r"LOBFRAG\$",
            r"OBJ\$",
            r"TAB\$",
            r"TABPART\$",
            r"TABCOMPART\$",
            r"TABSUBPART\$",
            r"TS\$",
            r"USER\$",
        )
    ]
    + [TableRule("XDB", name) for name in (r"XDB\$TTSET", r"X\$NM.*", r"X\$PT.*", r"X\$QN.*")]
)


@lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile an owner/table pattern; a bad one is configuration error 30001."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"invalid regular expression {pattern!r}: {exc}", 30001) from exc


def check_patterns(rules: Sequence[TableRule]) -> None:
    """Compile every owner/table pattern of the configured rules; a bad one is 30001, named by its key."""
    for i, rule in enumerate(rules):
        for key in ("owner", "table"):
            pattern = getattr(rule, key)
            try:
                compile_pattern(pattern)
            except ConfigError as exc:
                raise ConfigError(
                    f"source[0].filter.table[{i}].{key}: {exc.message} (a regular expression matched "
                    f"against the whole name; escape a literal $ as \\$)",
                    30001,
                ) from None


def parse_tag(tag: str | None, separator: str = ",") -> tuple[str, list[str]]:
    """``[pk]``/``[all]``/column list -> (Table.tag_mode, column names)."""
    if tag is None:
        return "", []
    if tag in ("[pk]", "[all]"):
        return tag[1:-1], []
    return "list", tag.split(separator)


def build_table_map(
    dictionary: Dictionary,
    rules: Sequence[TableRule],
    separator: str = ",",
    flags: int = 0,
    charset: str = "AL32UTF8",
    ncharset: str = "AL16UTF16",
) -> dict[int, Table]:
    """Every tracked table, keyed by each OBJ# redo can carry for it (table and partitions).

    ``flags`` is ``source.flags``: 0x2 (schemaless) ignores ``rules``, 0x4 (adaptive
    schema) adds a ``.*``/``.*`` rule and names tables of unknown owners ``USER_<obj>``.
    ``charset``/``ncharset`` are the checkpoint's NLS character sets, stored on each
    table. Raises ConfigError 10041 when a ``key`` or ``tag`` column does not exist, and
    DataError 50069 when flag 0x10000 (experimental XMLTYPE) is set but no XDB.XDB$TTSET
    row has flags 0 (OLR checks this whenever it builds its tables).
    """
    if flags & FLAG_EXPERIMENTAL_XMLTYPE:
        check_xml_context(dictionary.rows("xdb-ttset"))
    adaptive = bool(flags & FLAG_ADAPTIVE_SCHEMA)
    plan = [(rule, True) for rule in SYSTEM_RULES]
    if adaptive:
        plan.append((TableRule(".*", ".*"), False))
    if not flags & FLAG_SCHEMALESS:
        plan += [(rule, False) for rule in rules]
    candidates = list(dictionary.tables())
    table_map: dict[int, Table] = {}
    for rule, system in plan:
        owner_re, table_re = compile_pattern(rule.owner), compile_pattern(rule.table)
        for sys_obj in candidates:
            obj = sys_obj["obj"]
            if obj in table_map or not table_re.fullmatch(sys_obj["name"]):
                continue
            owner = dictionary.user_name(sys_obj["owner"])
            if owner is None:
                if not adaptive:
                    continue
                owner = f"USER_{obj}"
            elif not owner_re.fullmatch(owner):
                continue
            reason = dictionary.skip_reason(obj)
            if reason is not None:
                log.debug("%s.%s (obj: %d) - %s (skipped)", owner, sys_obj["name"], obj, reason)
                continue
            table = dictionary.build_table(obj, owner=owner, system=system, charset=charset, ncharset=ncharset)
            _apply_key(table, rule.key, separator)
            _apply_tag(table, rule.tag, separator)
            if rule.condition:
                compile_condition(rule.condition)  # error 50067 now, as OLR builds the table
            table.condition = rule.condition or ""
            for key_obj in (obj, *(part for part, _ in dictionary.partitions(obj))):
                if key_obj in table_map:
                    raise DataError(f"can't add partition element (obj: {key_obj}) of {owner}.{table.name}", 50034)
                table_map[key_obj] = table
    return table_map


def check_xml_context(ttsets: Iterable[Mapping[str, Any]]) -> None:
    """OLR's default XML context: an XDB.XDB$TTSET row (``xdb-ttset``) with flags 0, else
    DataError 50069 (checked only with flag 0x10000)."""
    if not any(row["flags"] == 0 for row in ttsets):
        raise DataError("no active XML context found", 50069)


def _apply_key(table: Table, key: str | None, separator: str) -> None:
    # A configured key replaces the PK, matched on exact (case-sensitive) column names.
    if key is None:
        return
    names = key.split(separator)
    wanted = set(names)
    for column in table.columns:
        column.key = column.name in wanted
    table.key_columns = tuple(i for i, c in enumerate(table.columns) if c.key)
    if len(table.key_columns) != len(names):
        raise ConfigError(f"table {table.owner}.{table.name} - couldn't find all column sets ({key})", 10041)


def _apply_tag(table: Table, tag: str | None, separator: str) -> None:
    table.tag_mode, names = parse_tag(tag, separator)
    if table.tag_mode == "pk":
        table.tag_columns = table.key_columns
    elif table.tag_mode == "all":
        table.tag_columns = tuple(range(len(table.columns)))
    elif table.tag_mode == "list":
        positions = {c.name: i for i, c in enumerate(table.columns)}
        for name in names:
            if name not in positions:
                raise ConfigError(f"table {table.owner}.{table.name} - couldn't find all tag sets ({name})", 10041)
        table.tag_columns = tuple(positions[name] for name in names)


def configured_users(rules: Iterable[TableRule], debug_owner: str | None = None, flags: int = 0) -> set[str]:
    """The owner pattern strings OLR records in a checkpoint's ``users`` (plus the debug owner)."""
    if flags & FLAG_SCHEMALESS:
        return set()  # OLR neither reads the rules nor the debug table in schemaless mode
    users = {rule.owner for rule in rules}
    if debug_owner:
        users.add(debug_owner)
    return users


def check_users(
    checkpoint_users: Iterable[str],
    rules: Iterable[TableRule],
    debug_owner: str | None = None,
    flags: int = 0,
    checkpoint: str = "the schema checkpoint",
) -> None:
    """Require the configured owner set to equal the checkpoint's ``users`` (DataError 20007).

    Skipped in adaptive schema mode (flag 0x4), as in OLR. The message starts as OLR's does
    ("X is missing" / "X is redundant") and goes on to say what to do: it names the
    ``checkpoint`` file, the owners it was made for, the case rule and the nearest owner.
    """
    if flags & FLAG_ADAPTIVE_SCHEMA:
        return
    stored = set(checkpoint_users)
    wanted = configured_users(rules, debug_owner, flags)
    held = ", ".join(sorted(stored)) or "no owner"
    problems, meant = [], set()
    for user in sorted(wanted - stored):
        guess = nearest(user, stored - wanted)
        text = f"{user} is missing from {checkpoint}, made for owner(s) {held}"
        if guess is None:
            text += (
                f": the owners in source[0].filter.table must be those the checkpoint was made for; to "
                f"replicate {user}, write a schema checkpoint that includes it"
            )
        else:
            meant.add(guess)
            same_letters = guess.casefold() == user.casefold()
            case = " (names are case-sensitive: Oracle keeps unquoted names in capitals)" if same_letters else ""
            text += f": did you mean {guess!r}{case}?"
        problems.append(text)
    redundant = sorted(stored - wanted - meant)
    if redundant:
        names = ", ".join(redundant)
        example = ", ".join(f'{{"owner": "{user}", "table": ".*"}}' for user in redundant[:2])
        problems.append(
            f"{names} {'is' if len(redundant) == 1 else 'are'} redundant: {checkpoint} was made for owner(s) {held}, "
            f"and no source[0].filter.table rule names {names}"
            + (" (the config has no filter rules)" if not wanted else "")
            + f"; add {example} to filter.table, or write a schema checkpoint for exactly the owners you replicate"
        )
    if problems:
        raise DataError("; ".join(problems), 20007)


def nearest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name`` ("did you mean"): same letters in another case first."""
    pool = sorted(set(candidates))
    same_case = [c for c in pool if c.casefold() == name.casefold()]
    if same_case:
        return same_case[0]
    folded = {c.casefold(): c for c in pool}
    import difflib  # only for a message: not imported by every run

    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


def unmatched_rules(dictionary: Dictionary, rules: Sequence[TableRule]) -> list[str]:
    """One line per ``filter.table`` rule that selects no table of ``dictionary`` (WARN 60110).

    A run with such a rule replicates nothing for it and would end with "0 messages" and no
    word why; the line names the rule, the nearest table it might have meant, and the case rule.
    """
    tables = []
    for row in dictionary.tables():
        owner = dictionary.user_name(row["owner"])
        if owner is not None and dictionary.skip_reason(row["obj"]) is None:
            tables.append((owner, row["name"]))
    lines = []
    for i, rule in enumerate(rules):
        owner_re, table_re = compile_pattern(rule.owner), compile_pattern(rule.table)
        of_owner = [name for owner, name in tables if owner_re.fullmatch(owner)]
        if any(table_re.fullmatch(name) for name in of_owner):
            continue
        where = f'source[0].filter.table[{i}] {{"owner": "{rule.owner}", "table": "{rule.table}"}}'
        if not of_owner:
            guess = nearest(rule.owner, {owner for owner, _ in tables})
            hint = f"no table of the schema checkpoint has an owner matching {rule.owner!r}"
        else:
            guess = nearest(rule.table, of_owner)
            hint = f"no table of owner {rule.owner!r} matches {rule.table!r}"
        lines.append(
            f"{where} selects no table: {hint} (patterns are case-sensitive regular expressions, matched "
            f"against the whole name)" + (f"; did you mean {guess!r}?" if guess else "")
        )
    return lines
