"""Per-language reading: section names, namespaces, Chinese conversion and lengths in
characters."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.sources.wiki.languages import LANGUAGES, rules_for
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.sources.wiki.wikitext import parse_wikitext

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
