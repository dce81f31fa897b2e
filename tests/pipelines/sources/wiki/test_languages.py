"""Per-language reading: section names, namespaces, Chinese conversion and lengths in
characters."""

from __future__ import annotations

import json

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.errors import ParamsError
from pipelines.sources.wiki.api import read_api
from pipelines.sources.wiki.languages import LANGUAGES, rules_for
from pipelines.sources.wiki.mediawiki_client import MediaWikiClient
from pipelines.sources.wiki.settings import ApiSettings, WikiSettings
from pipelines.sources.wiki.wikitext import parse_wikitext
from tests.support.http_server import scripted_server
from tests.support.snapshot import ROOT

ZH = (
    """{{Infobox event|name=梅里达尔河洪水}}
'''2026年梅里达尔河洪水'''是-{zh-hans:计算机;zh-hant:電腦;}-记录的一次洪水。-{H|zh-hans:软件;zh-hant:軟體;}-
== 经过 ==
"""
    + "暴雨持续了三天，河水漫过堤坝，淹没了低洼地区的农田和房屋。" * 40
    + """
== 参考文献 ==
<references />
== 外部链接 ==
* [https://news.example/zh 新闻报道]
"""
)


def test_a_chinese_page_is_measured_in_characters_and_converted_for_its_variant() -> None:
    page = parse_wikitext(ZH, rules_for("zh", variant="zh-tw"))
    assert page.summary.startswith("2026年梅里达尔河洪水是電腦记录的一次洪水。")
    assert "软件" not in page.summary and "軟體" not in page.summary  # a rule, not text
    assert [s.title for s in page.sections] == ["经过"]  # 参考文献 and 外部链接 skipped
    assert [link.url for link in page.external_links] == ["https://news.example/zh"]
    body = len("暴雨持续了三天，河水漫过堤坝，淹没了低洼地区的农田和房屋。") * 40
    assert page.word_count == body + len("2026年梅里达尔河洪水是電腦记录的一次洪水。")
    simplified = parse_wikitext(ZH, rules_for("zh", variant="zh-cn"))
    assert "计算机" in simplified.summary


def test_a_localised_file_link_leaves_nothing_behind() -> None:
    text = "Река [[Файл:Мост.jpg|мини|слева|Мост через реку]] вышла из берегов.\n"
    assert parse_wikitext(text, rules_for("ru")).summary == "Река вышла из берегов."
    # a language without defaults still hides files by the names its siteinfo gives
    uk = rules_for("uk", skip_sections=[], external_links=[], namespaces={6: "Файл"})
    assert parse_wikitext(text, uk).summary == "Река вышла из берегов."
    assert "мини" in parse_wikitext(text, rules_for("en")).summary  # English names only


def test_german_sections_and_links_follow_the_language() -> None:
    text = (
        "Das Hochwasser traf die Stadt.\n== Verlauf ==\nDer Fluss stieg.\n"
        "== Einzelnachweise ==\n<references />\n== Weblinks ==\n* [https://x.example/ Bericht]\n"
        "[[Kategorie:Hochwasser]] [[Datei:Karte.png|mini|Karte]]"
    )
    page = parse_wikitext(text, rules_for("de"))
    assert page.outline == ["Verlauf"]
    assert [link.url for link in page.external_links] == ["https://x.example/"]
    assert page.categories == ["Hochwasser"] and "Karte" not in page.sections[0].text


def test_every_language_with_defaults_names_its_sections() -> None:
    assert set(LANGUAGES) >= {"en", "zh", "de", "fr", "es", "ru", "ja"}
    for code, language in LANGUAGES.items():
        assert language.skip_sections and language.external_links, code
    assert {c for c, lang in LANGUAGES.items() if lang.length_unit == "characters"} == {
        "zh",
        "ja",
    }


def test_a_language_without_defaults_needs_its_section_names(params) -> None:
    base = params.wiki.model_dump(exclude={"skip_sections", "external_links_section"})
    with pytest.raises(ValidationError, match=r"wiki.skip_sections and wiki.external_links"):
        WikiSettings.model_validate({**base, "language": "uk"})
    settings = WikiSettings.model_validate(
        {
            **base,
            "language": "uk",
            "skip_sections": ["Примітки"],
            "external_links_section": "Посилання",
        }
    )
    assert settings.rules().skip_sections == {"примітки"}
    assert settings.rules().external_links == {"посилання"}


GERMAN_EXPORT = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xml:lang="de">
  <siteinfo><sitename>Wikipedia</sitename><base>https://de.wikipedia.org/wiki/Wikipedia</base>
  </siteinfo>
</mediawiki>
"""


def test_check_refuses_a_dump_in_another_language_naming_the_keys_to_change(tmp_path):
    (tmp_path / "export.xml").write_text(GERMAN_EXPORT, encoding="utf-8")
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["wiki"]["dump"]["path"] = str(tmp_path / "export.xml")
    for key in ("archive", "search_log"):
        data["web"][key] = str(ROOT / data["web"][key])
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["check", "--params", str(tmp_path / "params.yaml")])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "is a 'de' wiki (its siteinfo says so), but wiki.language is 'en'" in message
    assert "Set wiki.language: de (and unset wiki.skip_sections, which replace" in message
    data["wiki"].update(language="de", skip_sections=None)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["check", "--params", str(tmp_path / "params.yaml")])
    assert result.exit_code == 0, result.output


def _siteinfo(lang: str) -> str:
    general = {
        "generator": "MediaWiki 1.39.17",
        "sitename": "Уикипедия",
        "server": "http://127.0.0.1",
        "articlepath": "/wiki/$1",
        "lang": lang,
    }
    namespaces = {"14": {"name": "Категория"}}
    return json.dumps({"query": {"general": general, "namespaces": namespaces, "extensions": []}})


def test_the_api_reader_refuses_a_wiki_in_another_language_before_reading_pages(params):
    with scripted_server([(200, "application/json", _siteinfo("bg"))]) as (url, seen):
        api = ApiSettings(url=f"{url}/api.php", contact="ops@benchsmith.example")
        settings = params.wiki.model_copy(update={"reader": "api", "api": api})
        with pytest.raises(ParamsError) as refused:
            next(read_api(MediaWikiClient(api, sleep=lambda s: None), settings))
    assert f"{url}/api.php is a 'bg' wiki" in str(refused.value)
    assert "wiki.skip_sections and wiki.external_links_section" in str(refused.value)
    assert all("siteinfo" in r["path"] for r in seen)  # no page was asked for
