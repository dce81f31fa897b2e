"""A module's import closure inside the project, read from the source (no code is run).

Every ``import`` and ``from ... import`` counts, at any depth (lazy imports in functions too),
and so does every package ``__init__`` on the way to a module, since Python runs it on import.
This is what a stage's code dependencies in ``dvc.yaml`` are: edit any file in the closure and
DVC re-runs the stage; edit anything else and it does not.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGES = ("builders", "pipelines", "benchsmith_scoring")
"""The project's own top-level packages; imports of anything else are not followed."""


def module_file(module: str, root: Path) -> Path | None:
    """``a/b.py`` or ``a/b/__init__.py`` under ``root`` for module ``a.b``, if it exists."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    return ".".join([*parts[:keep], *([node.module] if node.module else [])])


@cache
def _imports(path: Path, module: str) -> frozenset[str]:
    """Project modules ``path`` (module ``module``) names in its import statements."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path.name == "__init__.py")
            found.add(base)
            # `from pkg import name` may import the submodule pkg.name
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(m for m in found if m.split(".")[0] in PACKAGES)


def closure(module: str, root: Path) -> list[Path]:
    """Files under ``root`` that importing ``module`` may run, sorted, relative to ``root``."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        # the packages on the way run first
        for depth in range(1, len(parts) + 1):
            path = module_file(".".join(parts[:depth]), root)
            if path is None or path in seen:
                continue
            seen.add(path)
            todo.extend(_imports(path, ".".join(parts[:depth])))
    return sorted(p.relative_to(root) for p in seen)
