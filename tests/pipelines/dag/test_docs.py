"""Generated documentation: the settings reference and the families' file lists follow the code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from builders.wikigen.settings import WikigenSettings
from pipelines.cli import app
from pipelines.dag import docs, family_pages, settings_pages
from tests.support.snapshot import ROOT


def test_the_committed_docs_are_the_generated_ones() -> None:
    assert docs.stale(ROOT) == [], "docs are stale: run 'benchsmith docs --write'"


def test_the_check_catches_a_changed_description(monkeypatch: pytest.MonkeyPatch) -> None:
    field = WikigenSettings.model_fields["test_fraction"]
    monkeypatch.setattr(field, "description", "A description the pages do not have.")
    assert docs.stale(ROOT) == [Path("docs/settings/wikigen.md")]
    result = CliRunner().invoke(app, ["docs", "--check", "--root", str(ROOT)])
    assert result.exit_code == 1
    assert "docs/settings/wikigen.md" in result.output


def test_every_key_and_nested_model_has_a_table() -> None:
    wiki = settings_pages.settings_page("wiki", settings_pages.keys()["wiki"])
    assert "## `wiki.dump`" in wiki and "## `wiki.api`" in wiki
    web = settings_pages.settings_page("web", settings_pages.keys()["web"])
    assert "## `web.search`" in web and "## `web.fetch`" in web
    # a shared section names the stages that take it
    llm = settings_pages.settings_page("llm", settings_pages.keys()["llm"])
    assert "read by `summhay`, `summhay_baselines`, `lveval`" in llm


def test_every_field_is_described() -> None:
    missing = []
    todo = list(settings_pages.keys().items())
    while todo:
        key, model = todo.pop()
        for name, field in model.model_fields.items():
            nested = list(settings_pages.models_in(field.annotation))
            todo += [(f"{key}.{name}", m) for m in nested]
            if not field.description and not nested:
                missing.append(f"{key}.{name}")
    assert missing == []


def test_a_family_file_list_follows_the_tree(tmp_path: Path) -> None:
    for folder in (*family_pages.TREE, "docs"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("*.pyc"))
    (tmp_path / "bench" / "summhay_haystacks.py").write_text('"""A new bench script."""\n')
    assert docs.stale(tmp_path) == [Path("docs/families/summhay.md")]
    docs.write(tmp_path)
    assert "`bench/summhay_haystacks.py`" in (tmp_path / "docs/families/summhay.md").read_text()
    assert docs.stale(tmp_path) == []
