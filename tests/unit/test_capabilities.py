"""Writers and formats declare the optional abilities they have (writers/ and formats/capabilities.py).

The drivers look the abilities up once with ``isinstance``; a class that has the methods of one
without listing its Protocol among its bases would still be found (the Protocols are runtime
checkable), but silently: the declaration is what a reader and a type checker see. So every
writer and format class that has an ability's members must name its Protocol as a base.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import replicator.formats
import replicator.writers
from replicator.formats import capabilities as format_caps
from replicator.writers import capabilities as writer_caps

WRITER_CAPS = [
    writer_caps.RunWriter,
    writer_caps.WholeRunWriter,
    writer_caps.ResumableOutput,
    writer_caps.Syncable,
    writer_caps.DeliveryShortfall,
]
FORMAT_CAPS = [format_caps.StreamingFormat, format_caps.SilentCheckpoints, format_caps.NativeRowFormat]


def _classes(package: object) -> list[type]:
    found = []
    for info in pkgutil.iter_modules(package.__path__):  # type: ignore[attr-defined]
        if info.name == "capabilities":
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")  # type: ignore[attr-defined]
        except ImportError:  # an optional dependency (protobuf runtime, confluent-kafka) is absent
            continue
        found += [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    return found


def _methods(cap: type) -> set[str]:
    return {n for n, v in vars(cap).items() if callable(v) and not n.startswith("_")}


@pytest.mark.parametrize(
    ("package", "caps"),
    [(replicator.writers, WRITER_CAPS), (replicator.formats, FORMAT_CAPS)],
    ids=["writers", "formats"],
)
def test_classes_with_an_ability_declare_it(package: object, caps: list[type]) -> None:
    classes = _classes(package)
    assert len(classes) > 5
    undeclared = [
        f"{cls.__name__} has {sorted(_methods(cap))} but does not list {cap.__name__}"
        for cls in classes
        for cap in caps
        if _methods(cap) and all(callable(getattr(cls, n, None)) for n in _methods(cap)) and cap not in cls.__mro__
    ]
    assert not undeclared, "; ".join(undeclared)


def test_the_writers_and_formats_have_the_abilities_the_drivers_use() -> None:
    from replicator.formats.avro import AvroFormat
    from replicator.formats.debezium import DebeziumFormat
    from replicator.formats.olr_json import OlrJsonFormat
    from replicator.writers.discard import DiscardWriter
    from replicator.writers.file import FileWriter
    from replicator.writers.kafka import KafkaWriter

    assert {writer_caps.WholeRunWriter, writer_caps.ResumableOutput, writer_caps.Syncable} <= set(FileWriter.__mro__)
    assert writer_caps.WholeRunWriter in DiscardWriter.__mro__
    assert writer_caps.DeliveryShortfall in KafkaWriter.__mro__
    assert writer_caps.ResumableOutput not in KafkaWriter.__mro__
    assert {format_caps.StreamingFormat, format_caps.SilentCheckpoints} <= set(OlrJsonFormat.__mro__)
    assert format_caps.NativeRowFormat in AvroFormat.__mro__
    assert format_caps.NativeRowFormat not in DebeziumFormat.__mro__  # it has its own native committer
