"""The stream client's pure parts: positions from data frames, start modes, frame headers."""

from __future__ import annotations

import pytest

from replicator.errors import RuntimeFailure
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import NO_SCN, _start_fields, is_data, position_of
from replicator.writers.network import frame_header


def test_position_of_json_and_protobuf() -> None:
    frame = b'{"scn":5,"c_scn":2267707,"c_idx":3,"xid":"1.2.3","payload":[{"op":"c","after":{"c_scn":1}}]}'
    assert position_of(frame, "json") == (2267707, 3)
    data = pb.RedoResponse(code=pb.PAYLOAD, c_scn=9, c_idx=4).SerializeToString()
    assert position_of(data, "protobuf") == (9, 4)
    with pytest.raises(RuntimeFailure):
        position_of(b'{"payload":[]}', "json")


def test_is_data_tells_replies_from_messages() -> None:
    assert is_data(b'{"c_scn":1}')
    assert is_data(pb.RedoResponse(code=pb.PAYLOAD).SerializeToString())
    assert not is_data(pb.RedoResponse(code=pb.REPLICATE, scn=5).SerializeToString())
    assert not is_data(b"")  # READY serializes to nothing


@pytest.mark.parametrize(
    ("mode", "fields"),
    [
        ("now", {"scn": NO_SCN}),
        ("now,12", {"scn": NO_SCN, "seq": 12}),
        ("scn:2266634", {"scn": 2266634}),
        ("time:2024-01-02 03:04:05,7", {"tms": "2024-01-02 03:04:05", "seq": 7}),
        ("time_rel:3600", {"tm_rel": 3600}),
    ],
)
def test_start_modes(mode: str, fields: dict[str, object]) -> None:
    assert _start_fields(mode) == fields


@pytest.mark.parametrize("mode", ["scn:x", "later", "next", "time_rel:"])
def test_bad_start_modes(mode: str) -> None:
    with pytest.raises(RuntimeFailure) as info:
        _start_fields(mode)
    assert info.value.code == 30002


def test_frame_header_lengths() -> None:
    assert frame_header(5) == b"\x05\x00\x00\x00"
    assert frame_header(0xFFFFFFFF) == b"\xff\xff\xff\xff" + (0xFFFFFFFF).to_bytes(8, "little")


def test_client_drops_frames_a_restarted_writer_re_sends() -> None:
    """Positions are not unique, so a restarted writer may resume at an earlier message with
    the client's position: the leading run of frames printed before is dropped, then all print."""
    import io

    from replicator.tools.client import _Printer, build_parser

    args = build_parser().parse_args(["network", "127.0.0.1:1", "DB"])
    out = io.BytesIO()
    printer = _Printer(args, out)
    frames = [b'{"c_scn":5,"c_idx":%d,"xid":"%s"}' % (i, x) for x, i in [(b"a", 1), (b"b", 1), (b"b", 2)]]
    for frame in frames:
        printer.take(frame)
    printer.catching_up = True  # reconnected
    for frame in frames[1:] + [b'{"c_scn":6,"c_idx":1}', frames[0]]:
        printer.take(frame)
    assert printer.resent == 2
    assert out.getvalue().splitlines() == frames + [b'{"c_scn":6,"c_idx":1}', frames[0]]  # only the leading run
