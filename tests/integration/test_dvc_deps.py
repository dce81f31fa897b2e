"""`dvc status` in a copy of the project: a stage goes stale after an edit to a module it imports
(lazily too), and after nothing else. Nothing is built; only dependency hashes are compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.dag.table import STAGES
from tests.support.dvc_project import copy_project, dvc

pytestmark = pytest.mark.integration


def _stale_code(project: Path) -> dict[str, set[str]]:
    """Per stage, the Python files ``dvc status`` reports as changed dependencies."""
    report = json.loads(dvc(project, "status", "--json"))
    stale: dict[str, set[str]] = {name: set() for name in STAGES}
    for name, changes in report.items():
        for change in changes:
            if isinstance(change, dict):
                deps = change.get("changed deps", {})
                stale[name] |= {d for d in deps if d.endswith(".py")}
    return stale


def _touched(before: dict[str, set[str]], after: dict[str, set[str]]) -> set[str]:
    return {name for name in STAGES if after[name] - before[name]}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("dvc-deps") / "project", lock=True)


def _edit(project: Path, path: str) -> None:
    file = project / path
    file.write_text(file.read_text("utf-8") + "\n# edited\n", "utf-8")


def test_an_edit_makes_stale_exactly_the_stages_that_import_it(project: Path) -> None:
    before = _stale_code(project)

    _edit(project, "pipelines/embed/encoder.py")
    encoder = _stale_code(project)
    touched = _touched(before, encoder)
    # the three baselines stages score with the dense encoder; embed runs it
    assert {"embed", "summhay_baselines", "lveval_baselines", "wikigen_baselines"} <= touched
    # the readers and the LV-Eval builder never load a model
    assert not touched & {"wiki", "web", "wikigen", "lveval"}

    _edit(project, "pipelines/stages/wiki.py")
    wiki = _stale_code(project)
    assert _touched(encoder, wiki) == {"wiki"}

    # a pure builder: the LV-Eval stages and what imports LV-Eval's text helpers
    _edit(project, "builders/lveval/kpr.py")
    kpr = _touched(wiki, _stale_code(project))
    assert {"lveval", "lveval_baselines"} <= kpr
    assert not kpr & {"wiki", "web", "wikigen", "chunk", "embed"}

    # files no stage imports: a benchmark script, the README, the CLI, the table
    unrelated = _stale_code(project)
    for path in ("bench/embed.py", "README.md", "pipelines/cli.py", "pipelines/dag/table.py"):
        _edit(project, path)
    assert _touched(unrelated, _stale_code(project)) == set()
