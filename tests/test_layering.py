"""DESIGN.md's import rules: core is pure stdlib; engine, models and the edges import one way."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ctxlab"
STDLIB = set(sys.stdlib_module_names)


def imports(path: Path) -> set[str]:
    """Top-level and `ctxlab.<layer>` names a module imports (absolute imports only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: use absolute imports"
            names.add(node.module or "")
    return names


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "ctxlab" and len(parts) > 1 else None


def modules(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def test_core_imports_only_stdlib_and_itself() -> None:
    for path in modules("core"):
        for name in imports(path):
            top = name.split(".")[0]
            assert top in STDLIB or name.startswith("ctxlab.core"), f"{path.name} imports {name}"


def test_engine_does_not_import_the_edges() -> None:
    for path in modules("engine"):
        for name in imports(path):
            assert layer_of(name) not in {"scenarios", "experiments", "analysis", "cli"}, (path.name, name)


def test_models_do_not_import_the_engine() -> None:
    for path in modules("models"):
        for name in imports(path):
            assert layer_of(name) not in {"engine", "experiments", "analysis", "cli"}, (path.name, name)


def test_strategies_do_not_import_the_edges() -> None:
    for path in modules("strategies"):
        for name in imports(path):
            assert layer_of(name) not in {"experiments", "analysis", "cli"}, (path.name, name)


def test_the_checker_itself_catches_a_bad_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import pandas\nfrom ctxlab.engine import loop\n", encoding="utf-8")
    assert imports(bad) == {"pandas", "ctxlab.engine"}
    assert layer_of("ctxlab.engine") == "engine"


def test_workloads_build_on_core_and_the_problems_module_only() -> None:
    for path in modules("workloads"):
        for name in imports(path):
            assert layer_of(name) in {None, "core", "workloads", "problems"}, (path.name, name)


def test_the_problems_module_imports_no_other_layer() -> None:
    for name in imports(PACKAGE / "problems.py"):
        assert layer_of(name) is None, name
