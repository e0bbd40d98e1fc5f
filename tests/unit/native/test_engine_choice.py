"""Choosing the engine: --engine, REPLICATOR_ENGINE, and the fallback when the extension is missing."""

from __future__ import annotations

import pytest

import replicator.native as native
from replicator.errors import ConfigError


@pytest.mark.needs_no_native
def test_unknown_engine_is_error_10190(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as err:
        native.resolve_engine("fast")
    assert err.value.code == 10190
    monkeypatch.setenv("REPLICATOR_ENGINE", "turbo")
    with pytest.raises(ConfigError):
        native.resolve_engine(None)


@pytest.mark.needs_no_native
def test_python_is_always_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLICATOR_ENGINE", "python")
    assert native.resolve_engine(None) == "python"
    assert native.resolve_engine("python") == "python"


def test_native_by_default_and_cli_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLICATOR_ENGINE", raising=False)
    assert native.resolve_engine(None) == "native"
    monkeypatch.setenv("REPLICATOR_ENGINE", "python")
    assert native.resolve_engine("native") == "native"


@pytest.mark.needs_no_native
def test_missing_extension_warns_60190_and_runs_python(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(native, "_module", None)
    monkeypatch.setattr(native, "_reason", "the extension replicator.native._core is not built (test)")
    monkeypatch.setattr(native, "_warned", False)
    monkeypatch.delenv("REPLICATOR_ENGINE", raising=False)
    assert native.resolve_engine(None) == "python"
    assert native.resolve_engine("native") == "python"
    warnings = [r for r in caplog.records if getattr(r, "olr_code", 0) == 60190]
    assert len(warnings) == 1 and "not built (test)" in warnings[0].getMessage()
    with pytest.raises(ConfigError) as err:
        native.core()
    assert err.value.code == 10190


# One in replicator/native, and the ones beside their python twins (found by their full names).
@pytest.mark.parametrize(
    "missing", ["replicator.native._rows", "replicator.writers._kafka", "replicator.formats._avro"]
)
def test_a_missing_sibling_makes_the_engine_unavailable(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    """The modules beside the core are found at start (not imported): one missing is said there."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(native, "_module", None)
    monkeypatch.setattr(native, "_reason", "")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))
    assert not native.available()
    assert f"the extension {missing} is not built" in native.unavailable_reason()


def test_a_sibling_that_does_not_load_is_error_10190_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Present but not loadable (another Python's build, say): 10190 naming it, at first use."""
    import importlib

    real = importlib.import_module

    def refuse(name: str, *args: object) -> object:
        if name == "replicator.native._protobuf":
            raise ImportError("undefined symbol: test")
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(native, "_siblings", {})
    monkeypatch.setattr(importlib, "import_module", refuse)
    assert native.available()
    with pytest.raises(ConfigError) as err:
        native.protobuf()
    assert err.value.code == 10190 and "replicator.native._protobuf" in err.value.message
    assert native.kafka().__name__ == "replicator.writers._kafka"  # the others still load, by their full names
