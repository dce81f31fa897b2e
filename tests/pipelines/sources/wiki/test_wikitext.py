from datetime import UTC, date, datetime

from pipelines.sources.wiki.article import build_article
from pipelines.sources.wiki.languages import rules_for
from pipelines.sources.wiki.wikitext import parse_wikitext, plain_text

PAGE = """{{Infobox flood
| name = 2026 Test floods
| date = 3–19 March 2026
| location = [[Meridal Valley]], Valdra<ref>inline note</ref>
| deaths = 14
| image =
}}
The '''2026 Test floods''' hit [[Meridal|the town]].<ref name="herald">{{cite web |url=https://www.valdra-herald.example/a |title=Levee breach |publisher=Valdra Herald |date=5 March 2026 |access-date=6 March 2026}}</ref> Water rose.<ref name="herald" />
[[File:Flood.jpg|thumb|A flooded street]]

== Background ==
Rain fell for days.<ref>[https://www.korvenna-times.example/b Rain report]</ref>

=== Forecasts ===
The VMO warned early.<ref>{{cite web |url=https://www.valdra-herald.example/a |title=Same URL again}}</ref>
<!-- editor note -->

== Response ==
Crews worked.

== See also ==
* [[Other floods]]

=== Nested under skipped ===
Ignored text.

== References ==
<references />

== External links ==
* [https://www.civilprotection.gov-valdra.example/x NCPA incident page]
* [https://www.vbc-news.example/live VBC coverage]

[[Category:2026 floods|Test]]
[[Category:Floods in Valdra]]
"""

SKIP = ["See also", "References", "External links"]


def test_sections_keep_levels_and_skip_listed_sections_with_their_subsections():
    page = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP))
    assert [(s.level, s.title) for s in page.sections] == [
        (2, "Background"),
        (3, "Forecasts"),
        (2, "Response"),
    ]
    assert page.outline == ["Background", "Forecasts", "Response"]
    assert page.sections[1].text == "The VMO warned early."
    assert "Ignored" not in " ".join(s.text for s in page.sections)


def test_lead_is_plain_text_without_refs_files_or_markup():
    page = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP))
    assert page.summary == "The 2026 Test floods hit the town. Water rose."


def test_word_count_covers_lead_and_kept_sections_only():
    page = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP))
    expected = len(page.summary.split()) + sum(len(s.text.split()) for s in page.sections)
    assert page.word_count == expected == 9 + 4 + 4 + 2


def test_infobox_type_and_fields_are_plain_text_and_empty_fields_dropped():
    page = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP))
    assert page.infobox_type == "flood"
    assert page.infobox == {
        "name": "2026 Test floods",
        "date": "3–19 March 2026",
        "location": "Meridal Valley, Valdra",
        "deaths": "14",
    }


def test_references_are_distinct_with_cite_text_and_url():
    refs = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP)).references
    assert [r.url for r in refs] == [
        "",
        "https://www.valdra-herald.example/a",
        "https://www.korvenna-times.example/b",
    ]
    herald = refs[1]
    assert herald.name == "herald"
    assert herald.cite_text == (
        '"Levee breach". Valdra Herald. 5 March 2026. Retrieved 6 March 2026.'
    )
    assert refs[2].cite_text == "Rain report"


def test_external_links_come_from_their_section():
    links = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP)).external_links
    assert [(link.url, link.title) for link in links] == [
        ("https://www.civilprotection.gov-valdra.example/x", "NCPA incident page"),
        ("https://www.vbc-news.example/live", "VBC coverage"),
    ]


def test_categories_drop_sort_keys_and_keep_order():
    page = parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP))
    assert page.categories == ["2026 floods", "Floods in Valdra"]
    assert page.templates == ["Infobox flood"]


def test_redirect_target_is_read():
    page = parse_wikitext(
        "#REDIRECT [[2026 Test floods#Response]]\n", rules_for("en", skip_sections=SKIP)
    )
    assert page.redirect_target == "2026 Test floods"
    assert parse_wikitext(PAGE, rules_for("en", skip_sections=SKIP)).redirect_target == ""


def test_categories_use_the_wiki_namespace_name():
    page = parse_wikitext("Text [[Kategorie:Hochwasser 2026]]", rules_for("de", skip_sections=[]))
    assert page.categories == ["Hochwasser 2026"]


def test_plain_text_keeps_list_words_and_drops_tables_like_mediawiki_extracts():
    text = plain_text("* one [[two]]\n* three\n{|\n| a || b\n|}\nafter")
    assert text.split() == ["one", "two", "three", "after"]


def test_every_citation_without_a_url_is_kept():
    text = (
        "A.<ref>{{cite book |last=Smith |title=Floods of Valdra |year=2020}}</ref> "
        "B.<ref>{{cite journal |last=Roe |title=Paper |journal=Hydrology |doi=10.1/x}}</ref> "
        "C.<ref>Plain text source, 2019.</ref> "
        "D.<ref>{{harvnb|Smith|2020|p=5}}</ref>"
    )
    refs = parse_wikitext(text, rules_for("en", skip_sections=[])).references
    assert [(r.cite_text, r.url) for r in refs] == [
        ('Smith (2020). "Floods of Valdra".', ""),
        ('Roe. "Paper". Hydrology.', "https://doi.org/10.1/x"),
        ("Plain text source, 2019.", ""),
    ]


def test_sources_section_citations_count_for_short_citations():
    text = (
        "Claim.{{sfn|Smith|2020|p=5}}\n== Sources ==\n"
        "* {{cite book |last=Smith |title=Floods of Valdra |year=2020 |url=https://books.example/f}}\n"
    )
    refs = parse_wikitext(text, rules_for("en", skip_sections=["Sources"])).references
    assert [r.url for r in refs] == ["https://books.example/f"]


def test_explanatory_notes_are_not_sources():
    text = 'Claim.<ref group="note">An aside about naming.</ref> More.<ref>[https://a.example/x Source]</ref>'
    assert [r.url for r in parse_wikitext(text, rules_for("en", skip_sections=[])).references] == [
        "https://a.example/x"
    ]


def test_inline_templates_keep_their_words():
    text = (
        "The river rose {{convert|3|m|ft}} above normal on {{Start date|2026|3|4}}; "
        "{{nowrap|12 people}} died and {{lang|fr|le deluge}} began. It cost {{US$|4.5 million}}."
        "{{Citation needed|date=March 2026}}"
    )
    assert parse_wikitext(text, rules_for("en", skip_sections=[])).summary == (
        "The river rose 3 metres above normal on 4 March 2026; 12 people died and le deluge began. "
        "It cost US$4.5 million."
    )


def test_infobox_values_render_dates_lists_and_line_breaks():
    text = (
        "{{Infobox event\n| date = {{Start date|2026|3|4}} – {{End date|2026|3|19}}\n"
        "| casualties = 12 dead<br>40 injured\n| organisers = {{ubl|NCPA|VMO}}\n}}\nLead."
    )
    infobox = parse_wikitext(text, rules_for("en", skip_sections=[])).infobox
    assert infobox == {
        "date": "4 March 2026 – 19 March 2026",
        "casualties": "12 dead; 40 injured",
        "organisers": "NCPA; VMO",
    }


def test_refs_inside_formatting_do_not_leak_into_text():
    text = (
        "''italic claim<ref>Leaked ref words</ref>'' and <span>more<ref>hidden</ref></span> text."
    )
    summary = parse_wikitext(text, rules_for("en", skip_sections=[])).summary
    assert summary == "italic claim and more text."


def test_template_names_ignore_comments_and_prefix():
    text = (
        "{{Infobox earthquake <!-- See Template:Infobox earthquake -->\n| date = 2026\n}}\n"
        "{{Template:Disambiguation}}"
    )
    page = parse_wikitext(text, rules_for("en", skip_sections=[]))
    assert page.infobox_type == "earthquake"
    assert page.templates == ["Infobox earthquake", "Disambiguation"]


def test_category_links_are_not_memberships_and_names_are_normalised():
    text = (
        "See [[:Category:2026 floods]]. [[Category:2026_earthquakes]] [[category:floods in Valdra]]"
    )
    page = parse_wikitext(text, rules_for("en", skip_sections=[]))
    assert page.categories == ["2026 earthquakes", "Floods in Valdra"]
    assert "2026 floods" in page.summary


def test_headings_interwiki_links_and_magic_words():
    text = (
        "__NOTOC__\nLead.\n== [[Aftermath]] of the {{lang|fr|deluge}} <!-- x --> ==\nBody.\n"
        "[[fr:Inondations de 2026]]"
    )
    page = parse_wikitext(text, rules_for("en", skip_sections=[]))
    assert page.summary == "Lead."
    assert page.outline == ["Aftermath of the deluge"]
    assert page.sections[0].text == "Body."


def test_numbered_arguments_count_as_positional_ones():
    text = "Famous for {{nowrap|1=''E'' = ''mc''<sup>2</sup>}} and {{lang|2=Shqipëri|1=sq}}."
    assert parse_wikitext(text).summary == "Famous for E = mc2 and Shqipëri."


def test_ages_count_to_the_date_given_and_are_dropped_without_one():
    text = (
        "Landed on 20 July 1969 ({{age|1969|07|20}} years ago); {{start date and age|1929|5|16}}."
    )
    dated = parse_wikitext(text, as_of=date(2016, 4, 20)).summary
    assert dated == "Landed on 20 July 1969 (46 years ago); 16 May 1929; 86 years ago."
    assert "(47 years ago)" in parse_wikitext(text, as_of=date(2016, 7, 20)).summary
    span = "{{age in years, months and days|1775|04|19|1783|09|03}}"
    assert parse_wikitext(span).summary == "8 years, 4 months and 15 days"
    assert parse_wikitext("{{age in years, months and days|1775|13|40|1783|09|03}}").summary == "7"
    assert parse_wikitext("{{nowrap|100000000=x|1=kept}}").summary == "kept"
    assert parse_wikitext("{{birth date and age|1970|04|29}}", as_of=date(2017, 4, 28)).summary == (
        "29 April 1970 (age 46)"
    )


def test_a_formula_reads_as_its_tex_source_untouched_by_the_tidying_around_it():
    text = "In the expression\n:<math>f''( x ) = \\frac{1}{2}} ; ()</math>\nmeans ''it''."
    page = parse_wikitext(text)
    assert page.summary == "In the expression\nf''( x ) = \\frac{1}{2}} ; ()\nmeans it."
    assert page.tally.math == 1


def _article(wikitext: str):
    return build_article(
        page_id=1, title="Awards", namespace=0, wikitext=wikitext, url="", created_at=None,
        created_at_source="history", last_revision_id=1, last_revision_at=None, reader="dump",
        read_at=datetime(2026, 1, 1, tzinfo=UTC), rules=rules_for("en"),
    )  # fmt: skip


def test_a_page_mostly_in_tables_is_suspect_and_its_table_words_are_counted():
    table = "{|\n! Year !! Film\n|-\n| 1929 || ''The Dove'' and more words here\n|}\n"
    article = _article("Short lead.\n== Winners ==\n" + table * 3)
    assert article.fidelity.tally.table_words == 3 * 9
    assert article.fidelity.suspect == (
        "mostly tables: 93% of its words (27 of 29) are in tables, which the text leaves out"
    )
    assert "tally" not in article.to_row()["fidelity"]
    prose = _article("A lead of many more words than the table has. " * 2 + "\n" + table)
    assert not prose.fidelity.suspect and prose.fidelity.tally.table_words == 9


def test_tables_render_as_rows_of_cells_when_asked_and_then_count_as_text():
    text = (
        "Lead.\n{| class=wikitable\n|+ Winners\n! Year !! Film\n|-\n"
        "| 1929 || [[The Dove (film)|The Dove]]{{efn|a note}}\n|-\n| 1930 || ''Anything''\n|}\nAfter."
    )
    assert parse_wikitext(text).summary == "Lead.\n\nAfter."
    page = parse_wikitext(text, rules_for("en", tables_as_text=True))
    assert page.summary == (
        "Lead.\n\nWinners | Year | Film\n1929 | The Dove\n1930 | Anything\n\nAfter."
    )
    assert page.tally.table_words == 0  # nothing left out
