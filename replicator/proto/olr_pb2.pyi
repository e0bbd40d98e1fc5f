# Generated from olr.proto by replicator/proto/regenerate.py: do not edit.
# Generator: grpcio-tools 1.85.1 (its bundled protoc); protobuf runtime 7.36.2 installed.
# Needs a protobuf runtime at least as new as the 'Protobuf Python Version' below.
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Op(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BEGIN: _ClassVar[Op]
    COMMIT: _ClassVar[Op]
    INSERT: _ClassVar[Op]
    UPDATE: _ClassVar[Op]
    DELETE: _ClassVar[Op]
    DDL: _ClassVar[Op]
    CHKPT: _ClassVar[Op]

class ColumnType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNKNOWN: _ClassVar[ColumnType]
    VARCHAR2: _ClassVar[ColumnType]
    NUMBER: _ClassVar[ColumnType]
    LONG: _ClassVar[ColumnType]
    DATE: _ClassVar[ColumnType]
    RAW: _ClassVar[ColumnType]
    LONG_RAW: _ClassVar[ColumnType]
    CHAR: _ClassVar[ColumnType]
    BINARY_FLOAT: _ClassVar[ColumnType]
    BINARY_DOUBLE: _ClassVar[ColumnType]
    CLOB: _ClassVar[ColumnType]
    BLOB: _ClassVar[ColumnType]
    TIMESTAMP: _ClassVar[ColumnType]
    TIMESTAMP_WITH_TZ: _ClassVar[ColumnType]
    INTERVAL_YEAR_TO_MONTH: _ClassVar[ColumnType]
    INTERVAL_DAY_TO_SECOND: _ClassVar[ColumnType]
    UROWID: _ClassVar[ColumnType]
    TIMESTAMP_WITH_LOCAL_TZ: _ClassVar[ColumnType]

class RequestCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INFO: _ClassVar[RequestCode]
    START: _ClassVar[RequestCode]
    CONTINUE: _ClassVar[RequestCode]
    CONFIRM: _ClassVar[RequestCode]

class ResponseCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    READY: _ClassVar[ResponseCode]
    FAILED_START: _ClassVar[ResponseCode]
    STARTING: _ClassVar[ResponseCode]
    ALREADY_STARTED: _ClassVar[ResponseCode]
    REPLICATE: _ClassVar[ResponseCode]
    PAYLOAD: _ClassVar[ResponseCode]
    INVALID_DATABASE: _ClassVar[ResponseCode]
    INVALID_COMMAND: _ClassVar[ResponseCode]
BEGIN: Op
COMMIT: Op
INSERT: Op
UPDATE: Op
DELETE: Op
DDL: Op
CHKPT: Op
UNKNOWN: ColumnType
VARCHAR2: ColumnType
NUMBER: ColumnType
LONG: ColumnType
DATE: ColumnType
RAW: ColumnType
LONG_RAW: ColumnType
CHAR: ColumnType
BINARY_FLOAT: ColumnType
BINARY_DOUBLE: ColumnType
CLOB: ColumnType
BLOB: ColumnType
TIMESTAMP: ColumnType
TIMESTAMP_WITH_TZ: ColumnType
INTERVAL_YEAR_TO_MONTH: ColumnType
INTERVAL_DAY_TO_SECOND: ColumnType
UROWID: ColumnType
TIMESTAMP_WITH_LOCAL_TZ: ColumnType
INFO: RequestCode
START: RequestCode
CONTINUE: RequestCode
CONFIRM: RequestCode
READY: ResponseCode
FAILED_START: ResponseCode
STARTING: ResponseCode
ALREADY_STARTED: ResponseCode
REPLICATE: ResponseCode
PAYLOAD: ResponseCode
INVALID_DATABASE: ResponseCode
INVALID_COMMAND: ResponseCode

class Value(_message.Message):
    __slots__ = ("name", "value_int", "value_float", "value_double", "value_string", "value_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_INT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FLOAT_FIELD_NUMBER: _ClassVar[int]
    VALUE_DOUBLE_FIELD_NUMBER: _ClassVar[int]
    VALUE_STRING_FIELD_NUMBER: _ClassVar[int]
    VALUE_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    value_int: int
    value_float: float
    value_double: float
    value_string: str
    value_bytes: bytes
    def __init__(self, name: _Optional[str] = ..., value_int: _Optional[int] = ..., value_float: _Optional[float] = ..., value_double: _Optional[float] = ..., value_string: _Optional[str] = ..., value_bytes: _Optional[bytes] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("name", "type", "length", "precision", "scale", "nullable")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ColumnType
    length: int
    precision: int
    scale: int
    nullable: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ColumnType, str]] = ..., length: _Optional[int] = ..., precision: _Optional[int] = ..., scale: _Optional[int] = ..., nullable: _Optional[bool] = ...) -> None: ...

class Schema(_message.Message):
    __slots__ = ("owner", "name", "obj", "tm", "tms", "column")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OBJ_FIELD_NUMBER: _ClassVar[int]
    TM_FIELD_NUMBER: _ClassVar[int]
    TMS_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    owner: str
    name: str
    obj: int
    tm: int
    tms: str
    column: _containers.RepeatedCompositeFieldContainer[Column]
    def __init__(self, owner: _Optional[str] = ..., name: _Optional[str] = ..., obj: _Optional[int] = ..., tm: _Optional[int] = ..., tms: _Optional[str] = ..., column: _Optional[_Iterable[_Union[Column, _Mapping]]] = ...) -> None: ...

class Payload(_message.Message):
    __slots__ = ("op", "schema", "rid", "before", "after", "ddl", "seq", "offset", "redo", "num")
    OP_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    RID_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    DDL_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    REDO_FIELD_NUMBER: _ClassVar[int]
    NUM_FIELD_NUMBER: _ClassVar[int]
    op: Op
    schema: Schema
    rid: str
    before: _containers.RepeatedCompositeFieldContainer[Value]
    after: _containers.RepeatedCompositeFieldContainer[Value]
    ddl: str
    seq: int
    offset: int
    redo: bool
    num: int
    def __init__(self, op: _Optional[_Union[Op, str]] = ..., schema: _Optional[_Union[Schema, _Mapping]] = ..., rid: _Optional[str] = ..., before: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., after: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., ddl: _Optional[str] = ..., seq: _Optional[int] = ..., offset: _Optional[int] = ..., redo: _Optional[bool] = ..., num: _Optional[int] = ...) -> None: ...

class SchemaRequest(_message.Message):
    __slots__ = ("mask", "filter")
    MASK_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    mask: str
    filter: str
    def __init__(self, mask: _Optional[str] = ..., filter: _Optional[str] = ...) -> None: ...

class RedoRequest(_message.Message):
    __slots__ = ("code", "database_name", "scn", "tms", "tm_rel", "seq", "schema", "c_scn", "c_idx")
    CODE_FIELD_NUMBER: _ClassVar[int]
    DATABASE_NAME_FIELD_NUMBER: _ClassVar[int]
    SCN_FIELD_NUMBER: _ClassVar[int]
    TMS_FIELD_NUMBER: _ClassVar[int]
    TM_REL_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    C_SCN_FIELD_NUMBER: _ClassVar[int]
    C_IDX_FIELD_NUMBER: _ClassVar[int]
    code: RequestCode
    database_name: str
    scn: int
    tms: str
    tm_rel: int
    seq: int
    schema: _containers.RepeatedCompositeFieldContainer[SchemaRequest]
    c_scn: int
    c_idx: int
    def __init__(self, code: _Optional[_Union[RequestCode, str]] = ..., database_name: _Optional[str] = ..., scn: _Optional[int] = ..., tms: _Optional[str] = ..., tm_rel: _Optional[int] = ..., seq: _Optional[int] = ..., schema: _Optional[_Iterable[_Union[SchemaRequest, _Mapping]]] = ..., c_scn: _Optional[int] = ..., c_idx: _Optional[int] = ...) -> None: ...

class RedoResponse(_message.Message):
    __slots__ = ("code", "scn", "scns", "tm", "tms", "xid", "xidn", "db", "payload", "c_scn", "c_idx", "attributes")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    SCN_FIELD_NUMBER: _ClassVar[int]
    SCNS_FIELD_NUMBER: _ClassVar[int]
    TM_FIELD_NUMBER: _ClassVar[int]
    TMS_FIELD_NUMBER: _ClassVar[int]
    XID_FIELD_NUMBER: _ClassVar[int]
    XIDN_FIELD_NUMBER: _ClassVar[int]
    DB_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    C_SCN_FIELD_NUMBER: _ClassVar[int]
    C_IDX_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    code: ResponseCode
    scn: int
    scns: str
    tm: int
    tms: str
    xid: str
    xidn: int
    db: str
    payload: _containers.RepeatedCompositeFieldContainer[Payload]
    c_scn: int
    c_idx: int
    attributes: _containers.ScalarMap[str, str]
    def __init__(self, code: _Optional[_Union[ResponseCode, str]] = ..., scn: _Optional[int] = ..., scns: _Optional[str] = ..., tm: _Optional[int] = ..., tms: _Optional[str] = ..., xid: _Optional[str] = ..., xidn: _Optional[int] = ..., db: _Optional[str] = ..., payload: _Optional[_Iterable[_Union[Payload, _Mapping]]] = ..., c_scn: _Optional[int] = ..., c_idx: _Optional[int] = ..., attributes: _Optional[_Mapping[str, str]] = ...) -> None: ...
