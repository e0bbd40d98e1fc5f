"""Corrupt field data inside well-formed vectors: a coded error or garbage values, never a crash.

Block checksums and vector framing catch most corruption (40006, 40009). What they cannot
catch is a wrong byte *inside* a field (a row value, a column count, a LOB locator...).
Such redo must still end in a :class:`ReplicatorError` with a code, or decode to some value:
never a ``struct.error``/``IndexError`` traceback. Seeded, bounded and fast.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from dataclasses import replace
from pathlib import Path

import pytest

from replicator.config import load_config
from replicator.errors import ReplicatorError
from replicator.formats.registry import create_format, format_names
from replicator.redo.parser import Parser
from replicator.redo.reader import read_lwns
from replicator.redo.records import Lwn
from replicator.redo.vectors import iter_vectors
from replicator.redogen import workloads
from replicator.redogen.generate import generate
from replicator.runner.assembly import source_facts


def _corrupt(lwn: Lwn, rng: random.Random, rate: float, vector_header: int, endian: str) -> Lwn:
    """``lwn`` with a few bytes changed inside the fields of some of its records."""
    records = []
    for rec in lwn.records:
        if rng.random() < rate:
            spans = [
                (o, o + n)
                for cv in iter_vectors(rec.data, rec.header_size, vector_header, endian)
                for o, n in zip(cv.offsets, cv.lengths)
                if n
            ]
            if spans:
                data = bytearray(rec.data)
                for _ in range(rng.randint(1, 3)):
                    start, end = rng.choice(spans)
                    data[rng.randrange(start, end)] = rng.randrange(256)
                rec = dataclasses.replace(rec, data=bytes(data))
        records.append(rec)
    return dataclasses.replace(lwn, records=records)


@pytest.mark.parametrize("seed", range(3))
def test_corrupt_fields_end_in_a_coded_error_or_values(tmp_path: Path, seed: int) -> None:
    logging.disable(logging.CRITICAL)  # corrupt values warn a lot; only exceptions matter here
    try:
        result = generate(workloads.mixed(seed=seed, events=40), tmp_path, with_expected=False)
        config = load_config(str(result.config))
        parser_opts, fmt_opts, _, _ = source_facts(config, config.source[0])
        formats = [create_format(replace(fmt_opts, type=name)) for name in format_names()]
        files = []
        for log in result.logs:
            headers: list = []
            lwns = list(read_lwns(str(log.path), header_out=headers))
            files.append((headers[0], lwns))
        rng = random.Random(seed)
        for _ in range(20):
            parser = Parser(parser_opts, lambda t: [f.transaction(t) for f in formats])
            try:
                for header, lwns in files:
                    parser.start_file(header)
                    for lwn in lwns:
                        parser.process_lwn(_corrupt(lwn, rng, 0.1, header.vector_header_size, header.endian))
                    parser.end_file()
            except ReplicatorError as exc:
                assert exc.code  # a coded, explained stop is fine
    finally:
        logging.disable(logging.NOTSET)
