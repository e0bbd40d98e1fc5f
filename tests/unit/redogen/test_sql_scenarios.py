"""Every SQL script behind an OpenLogReplicator reference output, compiled by redogen, must replicate to it.

``shared/reference/olr-real-outputs/sql/<name>.sql`` (``<name>.rac.sql`` for two-node RAC) is
compiled as is (:mod:`replicator.redogen.sqlscript`) with the schema checkpoint
``schema/<name>/``; the redo redogen writes goes through ``replicator run`` and must equal
``expected/<name>/output.json`` under the normalisation of ``test_reference_scenarios``. The
scripts are discovered, not listed: a new script with an expected output is tested as soon as
it is in the folder.

The hand-written ``tests/scenarios/reference/<name>.yaml`` stay (tests that must run without
the shared folder use them); each compiled scenario must produce the same expected output as
its YAML twin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import pipeline_missing, run_pipeline
from test_reference_scenarios import REFERENCE, SCENARIO_DIR, normalise

from replicator.errors import ReplicatorError
from replicator.redogen import Scenario, generate, load_sql

# name -> why the compiled script cannot reproduce OLR's output; runs as a strict xfail. None today.
KNOWN_DIFFERENCES: dict[str, str] = {}
# Scripts without an expected output that the compiler refuses, and why.
NOT_COMPILED: dict[str, str] = {}


def _scripts() -> dict[str, Path]:
    folder = REFERENCE / "sql"
    if not folder.is_dir():
        return {}
    return {p.name.split(".")[0]: p for p in sorted(folder.glob("*.sql"))}


SCRIPTS = _scripts()
WITH_OUTPUT = [n for n in SCRIPTS if (REFERENCE / "expected" / n / "output.json").is_file()]


def _params(names: list[str]) -> list[Any]:
    if not names:  # keeps the test visible as a skip when the shared folder is absent
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"OLR reference scripts not found at {REFERENCE / 'sql'} (the `shared` folder beside the repository)"
                ),
            )
        ]
    return [
        pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_DIFFERENCES[n], strict=True))
        if n in KNOWN_DIFFERENCES
        else n
        for n in names
    ]


def compiled(name: str) -> Scenario:
    """The scenario of ``sql/<name>[.rac].sql`` with its schema checkpoint when there is one."""
    schema = REFERENCE / "schema" / name
    return load_sql(SCRIPTS[name], schema if schema.is_dir() else None)


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
@pytest.mark.parametrize("name", _params(WITH_OUTPUT))
def test_compiled_sql_replicates_like_olr(tmp_path: Path, name: str) -> None:
    result = generate(compiled(name), tmp_path, with_expected=False)
    assert run_pipeline(result.config) == 0
    got = normalise(result.output.read_text(encoding="utf-8") if result.output.exists() else "")
    want = normalise((REFERENCE / "expected" / name / "output.json").read_text(encoding="utf-8"))
    assert got == want


@pytest.mark.parametrize("name", _params([n for n in WITH_OUTPUT if (SCENARIO_DIR / f"{n}.yaml").is_file()]))
def test_compiled_sql_equals_hand_written_yaml(tmp_path: Path, name: str) -> None:
    ours = generate(compiled(name), tmp_path / "sql")
    yaml = generate(Scenario.from_file(SCENARIO_DIR / f"{name}.yaml"), tmp_path / "yaml")
    assert ours.expected is not None and yaml.expected is not None
    assert normalise(ours.expected.read_text(encoding="utf-8")) == normalise(yaml.expected.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", _params([n for n in SCRIPTS if n not in WITH_OUTPUT]))
def test_scripts_without_output_compile_or_are_refused_with_a_code(name: str) -> None:
    if name in NOT_COMPILED:
        with pytest.raises(ReplicatorError) as err:
            compiled(name)
        assert 30380 <= err.value.code <= 30383 and "line " in err.value.message
    else:
        assert list(compiled(name).timeline)
