from datetime import UTC, datetime

import pytest

from builders.wikigen.select import (
    CONTENT_RULES,
    REASONS,
    check_content,
    classify,
    window_bounds,
)
from tests.support.records import make_article


def test_a_fresh_event_article_is_selected(params):
    assert classify(make_article(), params.wiki) is None


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"namespace": 10, "title": "Template:Infobox flood"}, "not_article"),
        ({"is_redirect": True, "redirect_target": "X"}, "redirect"),
        ({"templates": ["Disambiguation"]}, "disambiguation"),
        ({"title": "Meridal (disambiguation)"}, "disambiguation"),
        ({"title": "List of floods in Valdra"}, "list"),
        ({"categories": ["2026 floods", "Lists of floods"]}, "list"),
        ({"infobox_type": "officeholder"}, "biography"),
        ({"categories": ["2026 floods", "Living people"]}, "biography"),
        ({"categories": ["1979 births"], "infobox_type": ""}, "biography"),
        ({"infobox_type": "film", "categories": ["2026 films"]}, "not_event"),
        ({"word_count": 999}, "too_short"),
        ({"word_count": 3001}, "too_long"),
        ({"created_at": datetime(2019, 5, 7, tzinfo=UTC)}, "created_before_window"),
        ({"created_at": datetime(2027, 1, 1, tzinfo=UTC)}, "created_after_window"),
        ({"created_at": None, "created_at_source": "log"}, "created_unknown"),
    ],
)
def test_each_rule_rejects_with_its_reason(params, overrides, reason):
    rejection = classify(make_article(**overrides), params.wiki)
    assert rejection is not None
    assert rejection.reason == reason
    assert rejection.detail


def test_a_page_failing_several_rules_keeps_the_first_reason_only(params):
    article = make_article(
        title="List of 2019 things", word_count=10, created_at=datetime(2019, 1, 1, tzinfo=UTC)
    )
    assert classify(article, params.wiki).reason == "list"


def test_renamed_article_with_fresh_title_is_judged_by_its_first_revision(params):
    # WikiGenBench's title-difference method keeps this page; the first revision decides here.
    article = make_article(
        title="2026 Korvenna tramway strike",
        categories=["2026 labor disputes"],
        infobox_type="civil conflict",
        created_at=datetime(2019, 5, 7, 13, tzinfo=UTC),
    )
    assert classify(article, params.wiki).reason == "created_before_window"


def test_event_recognised_by_category_alone(params):
    article = make_article(infobox_type="", categories=["2026 railway accidents"])
    assert classify(article, params.wiki) is None


def test_window_days_are_inclusive(params):
    start, end = window_bounds(params.wiki)
    assert classify(make_article(created_at=start), params.wiki) is None
    last_second = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert classify(make_article(created_at=last_second), params.wiki) is None
    assert classify(make_article(created_at=end), params.wiki).reason == "created_after_window"


def test_content_check_ignores_missing_dates(params):
    assert check_content(make_article(created_at=None), params.wiki) is None


def test_reason_list_is_exactly_the_rules_then_the_window_reasons():
    window = ("created_unknown", "created_before_window", "created_after_window")
    assert (*(reason for reason, _ in CONTENT_RULES), *window) == REASONS
