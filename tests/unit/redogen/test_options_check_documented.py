"""The options check's rule for protobuf outputs that differ only as docs/formats.md §8 says."""

from __future__ import annotations

from replicator.proto import olr_pb2 as pb
from replicator.redogen.options_check import documented_protobuf_difference


def _message(payloads: list[pb.Payload]) -> pb.RedoResponse:
    message = pb.RedoResponse(code=pb.PAYLOAD, scn=100, xid="0x0001.000.00000002", c_scn=100, c_idx=1)
    message.payload.extend(payloads)
    return message


def _output(*messages: bytes) -> bytes:
    return b"".join(m + b"\n" for m in messages)


def _row(**values: bytes | str | None) -> pb.Payload:
    payload = pb.Payload(op=pb.INSERT, schema=pb.Schema(owner="APP", name="T"))
    for name, datum in values.items():
        value = payload.after.add(name=name)
        if isinstance(datum, bytes):
            value.value_bytes = datum
        elif datum is not None:  # None: the name alone
            value.value_string = datum
    return payload


def test_raw_bytes_olr_leaves_empty_are_documented() -> None:
    ours = _message([_row(ID="1", BIN=b"\x00\xff")]).SerializeToString()
    theirs = _message([_row(ID="1", BIN=None)]).SerializeToString()
    assert documented_protobuf_difference(_output(ours), _output(theirs))


def test_non_utf8_char_bytes_in_value_string_are_documented_and_other_strings_are_not() -> None:
    raw = "ナ".encode("utf-16-be")  # 0x30 0xca: not UTF-8
    ours = _message([_row(NNAME=raw)]).SerializeToString()
    # OLR's message: the same bytes as value_string (tag 0x2a instead of 0x32), which protobuf refuses
    theirs = ours.replace(b"\x32\x02" + raw, b"\x2a\x02" + raw)
    assert theirs != ours
    assert documented_protobuf_difference(_output(ours), _output(theirs))
    # UTF-8 text must be in value_string on both sides: value_bytes there is a real difference
    utf8_ours = _message([_row(NAME=b"abc")]).SerializeToString()
    utf8_theirs = _message([_row(NAME="abc")]).SerializeToString()
    assert not documented_protobuf_difference(_output(utf8_ours), _output(utf8_theirs))


def test_ddl_only_transaction_without_payload_in_full_mode_is_documented() -> None:
    ddl = pb.Payload(op=pb.DDL, schema=pb.Schema(owner="APP", name="T"), ddl="TRUNCATE TABLE APP.T")
    ours = _message([ddl]).SerializeToString()
    theirs = _message([]).SerializeToString()
    assert documented_protobuf_difference(_output(ours), _output(theirs))
    # a row change OLR lacks is not
    assert not documented_protobuf_difference(_output(_message([_row(ID="1")]).SerializeToString()), _output(theirs))
