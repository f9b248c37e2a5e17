"""The import rules of docs/architecture.md (Layers): each layer imports only those below it.

core is pure stdlib and its subpackages import one way; the engine, models, texts and workloads
build on core; presets on those; scenarios, experiments, analysis and the command line are the
edges. Preset families never import each other: only the registry knows them all.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ctxlab"
STDLIB = set(sys.stdlib_module_names)
FAMILY_SHARED = {
    "steps",
    "preset",
    "limits",
    "entries",
    "registry",
    "freetext",
    "observations",
    "lc_messages",
    "lc_count",
    "lc_summary",
    "lc_tools",
}
BORROWED: set[tuple[str, str]] = set()
"""Steps one family still borrows from another, until the parity work gives each its own."""


def imports(path: Path) -> set[str]:
    """Every module name a file imports (absolute imports only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: use absolute imports"
            names.add(node.module or "")
    return names


def part(name: str, depth: int) -> str | None:
    """The `depth`-th dotted part of a ctxlab module name (1: its layer), or None outside ctxlab.

    >>> part("ctxlab.core.wire.views", 1), part("ctxlab.core.wire.views", 2), part("numpy", 1)
    ('core', 'wire', None)
    """
    parts = name.split(".")
    if parts[0] != "ctxlab":
        return None
    return parts[depth] if len(parts) > depth else ""


def modules(*where: str) -> list[Path]:
    return sorted((PACKAGE.joinpath(*where)).rglob("*.py"))


def ctxlab_layers(path: Path) -> set[str]:
    return {layer for name in imports(path) if (layer := part(name, 1)) is not None}


CORE_ALLOWED = {
    "messages": {"messages"},
    "wire": {"messages", "wire"},
    "world": {"messages", "wire", "world"},
    "agentscope": {"messages", "wire", "world", "agentscope"},
    "compaction": {"messages", "wire", "world", "compaction", "settings"},
}

LAYERS_ALLOWED = {
    "texts": {"core", "texts"},
    "engine": {"core", "texts", "engine"},
    "models": {"core", "texts", "models"},
    "workloads": {"core", "problems", "inputs", "workloads"},
    "presets": {"core", "engine", "texts", "problems", "inputs", "workloads", "presets", "tokenizers"},
    "scenarios": {
        "core",
        "engine",
        "models",
        "texts",
        "problems",
        "inputs",
        "workloads",
        "presets",
        "scenarios",
    },
}


def test_core_imports_only_stdlib_and_itself() -> None:
    for path in modules("core"):
        for name in imports(path):
            top = name.split(".")[0]
            assert top in STDLIB or name.startswith("ctxlab.core"), f"{path.name} imports {name}"


@pytest.mark.parametrize("package", sorted(CORE_ALLOWED))
def test_core_packages_import_one_way(package: str) -> None:
    for path in modules("core", package):
        used = {part(name, 2) for name in imports(path) if part(name, 1) == "core"}
        assert used <= CORE_ALLOWED[package], (path.name, used - CORE_ALLOWED[package])


@pytest.mark.parametrize("layer", sorted(LAYERS_ALLOWED))
def test_each_layer_imports_only_those_below_it(layer: str) -> None:
    for path in modules(layer):
        extra = ctxlab_layers(path) - LAYERS_ALLOWED[layer]
        assert not extra, (path.relative_to(PACKAGE), extra)


READERS_RUN_ON = {"deepagents": {"langchain", "langchain_core"}}
"""Packages a reader may import besides the one it reads: deepagents' built-in tools are read by
running its agent one turn, with a stand-in chat model."""


def test_a_text_reader_imports_only_the_package_it_reads() -> None:
    for path in modules("texts"):
        allowed = {"ctxlab", path.stem, *READERS_RUN_ON.get(path.stem, ())}
        for name in imports(path):
            top = name.split(".")[0]
            # a family's own companion packages count as it (pydantic_ai_harness for pydantic_ai)
            family = top in allowed or top.startswith(f"{path.stem}_")
            assert top in STDLIB or family, (path.name, name)


def test_preset_families_never_import_each_other() -> None:
    families = [p.name for p in (PACKAGE / "presets").iterdir() if (p / "__init__.py").is_file()]
    assert {"agentscope", "none", "nonoka"} <= set(families)
    for family in families:
        for path in modules("presets", family):
            for name in imports(path):
                if part(name, 1) == "presets":
                    used = part(name, 2)
                    own = used == family or used in FAMILY_SHARED - {"registry"}
                    assert own or (family, used) in BORROWED, (path.name, name)


PURE_PRESET_MODULES = ("lc_messages.py", "lc_count.py")
"""Pure modules of the presets layer (shared or a family's own): like core, the standard library
and `ctxlab.core` only, and each other."""


@pytest.mark.parametrize("module", PURE_PRESET_MODULES)
def test_pure_preset_modules_import_only_stdlib_and_core(module: str) -> None:
    pure = {f"ctxlab.presets.{name.removesuffix('.py')}" for name in PURE_PRESET_MODULES}
    for name in imports(PACKAGE / "presets" / module):
        assert name.split(".")[0] in STDLIB or name.startswith("ctxlab.core") or name in pure, (module, name)


def test_shared_preset_modules_import_no_family() -> None:
    for shared in FAMILY_SHARED - {"registry"}:
        for name in imports(PACKAGE / "presets" / f"{shared}.py"):
            if part(name, 1) == "presets":
                assert part(name, 2) in FAMILY_SHARED, (shared, name)


def test_analysis_runs_nothing() -> None:
    for path in modules("analysis"):
        assert not ctxlab_layers(path) & {"cli", "replay", "engine", "presets"}, path.name
        for name in imports(path):
            assert name not in {"ctxlab.experiments.run", "ctxlab.experiments.executors"}, (path.name, name)


def test_experiments_do_not_import_analysis_or_the_command_line() -> None:
    for path in modules("experiments"):
        assert not ctxlab_layers(path) & {"analysis", "cli", "replay"}, path.name


def test_tune_builds_on_the_run_path_and_the_scenarios_alone() -> None:
    for path in modules("tune"):
        assert not ctxlab_layers(path) & {"engine", "presets", "replay", "models", "workloads"}, path.name


def test_the_checker_itself_catches_a_bad_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import pandas\nfrom ctxlab.engine import loop\n", encoding="utf-8")
    assert imports(bad) == {"pandas", "ctxlab.engine"}
    assert ctxlab_layers(bad) == {"engine"}


def test_the_problems_module_imports_no_other_layer() -> None:
    for name in imports(PACKAGE / "problems.py"):
        assert part(name, 1) is None, name
