"""The native (Cython) decode core and the choice of engine.

Two engines produce the same bytes: ``python``, the readable reference, and ``native``,
which runs the hot parts in the compiled :mod:`replicator.native._core` and falls back to the
python code for anything it does not handle (see that module's docstring). The compiled
modules split off the core (:data:`MODULES`: the Kafka producer, the run framing, Debezium's
transaction metadata, the output tally, the renderers of the other formats, the record
dispatch and batch record loop, the daemon's record loops, stage 2's workers and the block
checks) are built with it: the native engine is available when the core imports and all of
them are present, and each is imported when first used. The engine is chosen by ``--engine``
on ``run`` and ``bench``, else by the ``REPLICATOR_ENGINE`` environment variable, else
``native`` when the extension is built. When ``native`` is wanted but the extension is
missing, warning 60190 says why and the python engine runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

from replicator import log
from replicator.errors import ConfigError
from replicator.ops.cores import usable_cores

ENGINES = ("python", "native")
ENV_VAR = "REPLICATOR_ENGINE"
WORKERS_VAR = "REPLICATOR_DECODE_WORKERS"
# Default decode/format worker threads (0: one thread does both stages): one worker where a
# second core is there for it. On 2 cores it measured 11-16 % less wall time at the same CPU
# (105 MB OLTP, file and Kafka writers); on one core it would only add thread switches
# (docs/native-engine.md "Two stages in parallel").
DEFAULT_DECODE_WORKERS = 1 if usable_cores() >= 2 else 0
_BUILD_ERROR = os.path.join(os.path.dirname(__file__), "_build_error.txt")

#: The compiled modules of the engine besides _core, by full name (docs/native-engine.md "Native
#: modules"). Most are the engine itself and live here; a module with a python twin lives beside it
#: (the Kafka producer in replicator.writers, Debezium's transaction metadata, the typed row images
#: and the Avro encoders in replicator.formats, the value decoders in replicator.values, the block
#: checks in replicator.redo), where its layer may import what it cimports. _kafka, _runframes and
#: the engine's commits for the other formats (_debezium, _rows, _protobuf) cimport _core (those
#: python reaches have accessors below); _core cimports _values and _tally, _debezium cimports
#: _dbztxn, _rows and _avro cimport _rowvalues; _dispatch (the record dispatch and batch record
#: loop) cimports _core and _framing, _daemon_loop subclasses its record loop, _stage2 drives the
#: core's JsonCommitter (the wiring hands it over).
CORE = "replicator.native._core"
MODULES = (
    "replicator.values._values",
    "replicator.writers._kafka",
    "replicator.native._runframes",
    "replicator.formats._dbztxn",
    "replicator.native._tally",
    "replicator.redo._framing",
    "replicator.native._debezium",
    "replicator.formats._rowvalues",
    "replicator.native._rows",
    "replicator.formats._avro",
    "replicator.native._protobuf",
    "replicator.native._dispatch",
    "replicator.native._daemon_loop",
    "replicator.native._stage2",
)
#: Compiled modules of their own, not part of the engine (loaded alone, by their accessor):
#: replicator.spark._parse, the Spark job's OLR JSON parse (:func:`spark_events`).
STANDALONE = ("replicator.spark._parse",)

_module: ModuleType | None = None
_siblings: dict[str, ModuleType] = {}
_workers: int | None = None  # --decode-workers
_reason = ""
_warned = False


def _load() -> ModuleType | None:
    global _module, _reason
    if _module is not None or _reason:
        return _module
    try:
        import replicator.native._core as compiled

        # The siblings are found here but imported when first asked for: a JSON run to a file
        # never loads the renderers of the other formats (their imports are ~20 ms of start-up).
        for name in MODULES:
            if importlib.util.find_spec(name) is None:
                raise ModuleNotFoundError(f"No module named '{name}'", name=name)
    except ImportError as exc:
        name = exc.name if exc.name in (CORE, *MODULES) else CORE
        _reason = f"the extension {name} is not built ({exc})"
        try:
            with open(_BUILD_ERROR, encoding="utf-8") as f:
                detail = f.read().strip()
            if detail:
                _reason += f": {detail}"
        except OSError:
            pass
        return None
    _module = compiled
    return compiled


def available() -> bool:
    """Whether the compiled core (and the modules beside it) can be imported."""
    return _load() is not None


def unavailable_reason() -> str:
    """Why the compiled core cannot be used ("" when it can)."""
    _load()
    return _reason


def core() -> ModuleType:
    """The compiled core module (call :func:`available` first)."""
    module = _load()
    if module is None:
        raise ConfigError(f"native engine unavailable: {_reason}", 10190)
    return module


def _sibling(name: str) -> ModuleType:
    core()  # 10190 when the native modules are not built
    module = _siblings.get(name)
    if module is None:
        try:
            module = _siblings[name] = importlib.import_module(name)
        except ImportError as exc:  # present but not loadable (a build of another Python, say)
            raise ConfigError(f"native engine unavailable: the extension {name} ({exc})", 10190) from exc
    return module


def load_all() -> list[ModuleType]:
    """Import the core and every module beside it (10190 naming the first that does not load)."""
    return [core(), *(_sibling(name) for name in MODULES)]


def values() -> ModuleType:
    """The value decoders and the renderers' value texts (:mod:`replicator.values._values`: python
    reaches only ``float_repr``, for the tests; call :func:`available` first)."""
    return _sibling("replicator.values._values")


def kafka() -> ModuleType:
    """The native Kafka producer (:mod:`replicator.writers._kafka`; call :func:`available` first)."""
    return _sibling("replicator.writers._kafka")


def runframes() -> ModuleType:
    """Stream framing and positions of MessageRuns (:mod:`replicator.native._runframes`; call
    :func:`available` first)."""
    return _sibling("replicator.native._runframes")


def debezium() -> ModuleType:
    """The native Debezium renderer (:mod:`replicator.native._debezium`; call :func:`available` first)."""
    return _sibling("replicator.native._debezium")


def rows() -> ModuleType:
    """EventCommitter, the commit for the typed row images (:mod:`replicator.native._rows`; the images
    are :mod:`replicator.formats._rowvalues`'s RowImages; call :func:`available` first)."""
    return _sibling("replicator.native._rows")


def protobuf() -> ModuleType:
    """The native protobuf renderer (:mod:`replicator.native._protobuf`; call :func:`available` first)."""
    return _sibling("replicator.native._protobuf")


def dispatch() -> ModuleType:
    """The record dispatch and batch record loop (:mod:`replicator.native._dispatch`: ``RecordDispatcher``,
    ``RecordLoop``, ``vector_passes``; call :func:`available` first)."""
    return _sibling("replicator.native._dispatch")


def daemon_loop() -> ModuleType:
    """The daemon's record loops BlockLoop, ThreadLoop and RacMerge (:mod:`replicator.native._daemon_loop`;
    call :func:`available` first)."""
    return _sibling("replicator.native._daemon_loop")


def framing() -> ModuleType:
    """The block checks of a buffer (:mod:`replicator.redo._framing`: ``check_chunk``, ``raise_chunk``;
    call :func:`available` first)."""
    return _sibling("replicator.redo._framing")


def stage2() -> ModuleType:
    """Stage 2's decode/format workers (:mod:`replicator.native._stage2`, its ``Stage2`` class is
    given to the core's JsonCommitter; call :func:`available` first)."""
    return _sibling("replicator.native._stage2")


def spark_events() -> ModuleType | None:
    """The Spark job's compiled OLR JSON parse (:mod:`replicator.spark._parse`), or None
    when it is not built (the job then parses in python). Not part of the engine: loaded alone."""
    try:
        return importlib.import_module("replicator.spark._parse")
    except ImportError:
        return None


def resolve_engine(requested: str | None = None) -> str:
    """The engine to run: ``requested`` (CLI), else ``$REPLICATOR_ENGINE``, else native if built.

    An unknown name is error 10190; native asked for (or defaulted to) without the extension
    logs warning 60190 once and returns ``python``.
    """
    global _warned
    name = (requested or os.environ.get(ENV_VAR, "") or "native").strip().lower()
    if name not in ENGINES:
        raise ConfigError(f"unknown engine {name!r} (--engine or {ENV_VAR}): use python or native", 10190)
    if name == "python":
        return name
    if available():
        return "native"
    if not _warned:
        _warned = True
        log.warning(60190, f"native engine unavailable, using the python engine: {_reason}")
    return "python"


def set_decode_workers(count: int | None) -> None:
    """The ``--decode-workers`` value (None: ``$REPLICATOR_DECODE_WORKERS``, else the default)."""
    global _workers
    _workers = count


def decode_workers() -> int:
    """Worker threads for the native decode/format stage of a batch run (0: none).

    ``--decode-workers``, else ``$REPLICATOR_DECODE_WORKERS``, else DEFAULT_DECODE_WORKERS;
    a value that is not a non-negative integer is error 10360.
    """
    if _workers is not None:
        return _workers
    text = os.environ.get(WORKERS_VAR, "").strip()
    if not text:
        return DEFAULT_DECODE_WORKERS
    if not text.isdigit() or int(text) > 16:
        raise ConfigError(f"invalid {WORKERS_VAR} value {text!r}: use a whole number from 0 to 16", 10360)
    return int(text)
