"""Building blocks of the config models: OLR's JSON field types and its key checking.

OpenLogReplicator reads each field with a typed getter (unsigned 64-bit, unsigned, string
with a maximum length, object, array) and rejects a bad type with 20003, then checks the
range with 30001. The validators below (``max_len``, ``in_range``, ``U64``...) do the same as
pydantic before-validators and
raise :class:`PydanticCustomError` of type ``"olr"`` whose context carries a ``kind``;
:mod:`replicator.config.loader` turns those into OLR's messages, adding the field name
from the error location. Nothing here knows file names or paths.

Error kinds: ``not_u64``, ``not_uint``, ``too_big``, ``not_string``, ``too_long``,
``not_object``, ``not_array``, ``not_found``, ``range`` (value + expected), ``message``
(a complete message + code) and ``unexpected`` (unknown keys). An optional ``field`` in
the context names the key printed in the message and ``at`` the key path below the
error location (for checks made on a whole object).

The model modules do without ``from __future__ import annotations``: pydantic would compile
each string annotation (some 250, on every start) to evaluate it; a method returning its own
class quotes that one name.
"""

from collections.abc import Callable, Iterable
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationInfo, model_validator
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from replicator.config.dialect import DEFAULT_DIALECT, DIALECT, WRONG_DIALECT_KEY, DialectKey, wrong_dialect_message
from replicator.config.plugins import skip_plugin_lookup_if_none

skip_plugin_lookup_if_none()  # before a validator is built: see replicator.config.plugins

# Keys of the schema checkpoint's XDB tables that OLR accepts in every object.
ALWAYS_ACCEPTED_PREFIXES = ("xdb-xnm", "xdb-xpt", "xdb-xqn")

# Validation context key: "strict" (check), "relaxable" (reader.disable-checks bit 8 set:
# only always-strict sections are checked) or "off" (check-config's value-only pass).
KEYS = "keys"

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1


def olr_error(kind: str, **ctx: Any) -> PydanticCustomError:
    """An error the loader turns into an OLR message (see the module docstring)."""
    return PydanticCustomError("olr", "{kind}", {"kind": kind, **ctx})


def olr_message(code: int, message: str, at: str | None = None) -> PydanticCustomError:
    """An error with a complete OLR message; ``at`` is the key path below the location."""
    ctx: dict[str, Any] = {"code": code, "message": message}
    if at is not None:
        ctx["at"] = at
    return olr_error("message", **ctx)


def bad_value(field: str, value: object, expected: str, at: str | None = None) -> PydanticCustomError:
    """30001 ``bad JSON, invalid "<field>" value: <v>, expected: <expected>``.

    ``at`` is the key path below the error location when it is not just ``field``.
    """
    return olr_error("range", field=field, value=value, expected=expected, at=at or field)


def check_u64(value: object) -> int:
    """OLR's getJsonFieldU64: any JSON integer 0..2^64-1."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
        raise olr_error("not_u64")
    return value


def check_uint(value: object) -> int:
    """OLR's getJsonFieldU: an unsigned integer that fits 32 bits."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32_MAX:
        raise olr_error("not_uint")
    return value


def check_u32(value: object) -> int:
    """OLR's getJsonFieldU32: a 64-bit unsigned number that must not exceed 32 bits."""
    number = check_u64(value)
    if number > U32_MAX:
        raise olr_error("too_big", value=number)
    return number


def string_checker(max_length: int) -> Callable[[object], str]:
    """OLR's getJsonFieldS: a string of at most ``max_length`` bytes."""

    def check(value: object) -> str:
        if not isinstance(value, str):
            raise olr_error("not_string")
        length = len(value.encode("utf-8", "surrogatepass"))
        if length > max_length:
            raise olr_error("too_long", length=length, max=max_length)
        return value

    return check


def ranged(lo: int, hi: int, expected: str | None = None, *, uint: bool = False) -> Callable[[object], int]:
    """A U64 (or 32-bit ``uint``) that must lie in lo..hi, else 30001 with ``expected``."""
    base = check_uint if uint else check_u64
    text = expected if expected is not None else f"one of {{{lo} .. {hi}}}"

    def check(value: object) -> int:
        number = base(value)
        if not lo <= number <= hi:
            raise olr_error("range", value=number, expected=text)
        return number

    return check


def choice(field: str, allowed: Iterable[str], expected: str) -> Callable[[str], str]:
    """An after-check that a string is one of ``allowed`` (30001 with ``expected``)."""
    options = frozenset(allowed)

    def check(value: str) -> str:
        if value not in options:
            # A field-level check: the error location already ends with the key.
            raise olr_error("range", field=field, value=value, expected=expected)
        return value

    return check


class Before:
    """``Annotated`` metadata: ``func(value)`` runs before pydantic's own check of the field, as
    with pydantic's ``BeforeValidator``, whose schema is the same but which reads ``func``'s
    signature (``inspect.signature``, once per annotated field: some 1.5 ms of every start) to
    learn whether it takes a ``ValidationInfo``. Here ``func`` takes the value only."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.func, handler(source))


class After:
    """``Annotated`` metadata: ``func(value)`` runs after pydantic's own check of the field
    (pydantic's ``AfterValidator`` without the signature reading: see :class:`Before`)."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.func, handler(source))


def max_len(max_length: int) -> Before:
    """``Annotated[str, max_len(n)]``: a string checked like OLR's string getter."""
    return Before(string_checker(max_length))


def in_range(lo: int, hi: int, expected: str | None = None, *, uint: bool = False) -> Before:
    """``Annotated[int, in_range(lo, hi)]``: OLR's number getter plus a 30001 range check."""
    return Before(ranged(lo, hi, expected, uint=uint))


U64 = Annotated[int, Before(check_u64)]
OptU64 = Annotated[int | None, Before(check_u64)]
OptU32 = Annotated[int | None, Before(check_u32)]


def kebab(name: str) -> str:
    """Python attribute name -> JSON key (``start_scn`` -> ``start-scn``)."""
    return name.rstrip("_").replace("_", "-")


class OlrModel(BaseModel):
    """Base of every config section: OLR types, kebab-case keys and OLR's key check.

    ``STRICT_KEYS`` marks the sections OLR checks before it reads ``disable-checks``
    (always strict); the others are relaxed by ``reader.disable-checks`` bit 8.
    ``EXTRA_KEYS`` are accepted and ignored. ``DIALECT_KEYS`` are accepted by one config
    dialect only and refused (30150) in the other, whatever the key mode: a setting in a
    place the file's dialect does not read is never ignored. ``CHECK_KEYS = False`` turns the check off
    (``target`` elements). :meth:`prune` drops keys OLR does not read in a given
    situation, so their content cannot fail validation here either.
    """

    # defer_build: the validator is built once, for the model a file is validated with
    # (Config), not for every section class as the module is imported (start-up time).
    model_config = ConfigDict(
        strict=True, extra="ignore", alias_generator=kebab, populate_by_name=False, defer_build=True
    )

    STRICT_KEYS: ClassVar[bool] = False
    CHECK_KEYS: ClassVar[bool] = True
    EXTRA_KEYS: ClassVar[frozenset[str]] = frozenset()
    DIALECT_KEYS: ClassVar[dict[str, DialectKey]] = {}

    @classmethod
    def allowed_keys(cls) -> frozenset[str]:
        """The JSON keys this section accepts."""
        return frozenset(f.alias or name for name, f in cls.model_fields.items()) | cls.EXTRA_KEYS

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Return ``data`` without the keys OLR would not read (hook for subclasses)."""
        return data

    @model_validator(mode="before")
    @classmethod
    def _olr_object(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            raise olr_error("not_object")
        mode = (info.context or {}).get(KEYS, "strict")
        if cls.CHECK_KEYS and (mode == "strict" or (mode == "relaxable" and cls.STRICT_KEYS)):
            allowed = cls.allowed_keys()
            unknown = [k for k in data if k not in allowed and not k.startswith(ALWAYS_ACCEPTED_PREFIXES)]
            if unknown:
                raise olr_error("unexpected", keys=unknown, allowed=sorted(allowed))
        dialect = (info.context or {}).get(DIALECT, DEFAULT_DIALECT)
        for key, item in cls.DIALECT_KEYS.items():
            if key in data and item.dialect != dialect:
                raise olr_message(WRONG_DIALECT_KEY, wrong_dialect_message(item, dialect), key)
        return cls.prune(data)


def empty_list() -> list[Any]:
    """A new empty list: ``Field(default_factory=empty_list)`` instead of ``list``, whose signature
    pydantic would read by parsing the builtin's text signature (tokenize, ~1 ms a field at start-up)."""
    return []


def empty_dict() -> dict[str, Any]:
    """A new empty dict (see :func:`empty_list`)."""
    return {}


def without(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of ``data`` without ``keys`` (the input is never modified)."""
    return {k: v for k, v in data.items() if k not in keys}


def int_or(value: object, default: int) -> int:
    """``value`` when it is a JSON integer, else ``default`` (for pre-validation peeks)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return default


def check_path_mapping(items: list[str]) -> None:
    """A ``path-mapping`` list holds (from, to) prefix pairs: an odd length is OLR's 30001."""
    if len(items) % 2:
        raise olr_message(
            30001,
            f'bad JSON, invalid "path-mapping" value: {len(items)} elements, expected: even number of elements',
            "path-mapping",
        )


def mapping_pairs(items: list[str]) -> list[tuple[str, str]]:
    """A ``path-mapping`` list as (from, to) prefix pairs, in order (the first match wins)."""
    return list(zip(items[0::2], items[1::2], strict=True))
