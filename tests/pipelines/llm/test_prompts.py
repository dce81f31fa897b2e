"""Prompt files: messages cut at role markers, strict rendering, digests follow edits."""

from __future__ import annotations

import pytest

from pipelines.errors import PromptError
from pipelines.llm import PromptLibrary
from pipelines.llm.prompts import PROMPTS


def test_render_splits_roles_and_fills_variables(prompts: PromptLibrary) -> None:
    request = prompts.render("t/pick", {"n": 3, "topic": "sea"}, temperature=0.5)
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.messages[1].content == 'Name 3 colours as {"colours": [...]}. Topic: sea.'
    assert request.prompt == "t/pick" and request.temperature == 0.5


def test_missing_variable_names_the_file_and_the_field(prompts: PromptLibrary) -> None:
    with pytest.raises(PromptError, match=r"pick\.j2: 'topic' is undefined"):
        prompts.render("t/pick", {"n": 3})


def test_missing_prompt_file_is_named(prompts: PromptLibrary) -> None:
    with pytest.raises(PromptError, match=r"t/nope\.j2: prompt file not found"):
        prompts.render("t/nope", {})


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("hello\n[user]\nhi", "text before the first"),
        ("[user]\nhi\n[assistant]\nok", "must end with \\[user\\]"),
        ("[system]\n\n[user]\nhi", "empty system message"),
        ("[system]\n{{ '' }}\n[user]\nhi", "empty system message"),
        ("no markers at all", "text before the first"),
        (
            "[user]\nhi\n{% if x %}\n[system]\nno{% endif %}",
            r"bad\.j2:3: Unexpected end.*before the next marker",
        ),
        ("[system]\nok\n[user]\n\nhi {{ x\n", r"bad\.j2:5: unexpected end"),
    ],
)
def test_malformed_prompt_file_is_refused_with_its_line(
    prompts: PromptLibrary, source: str, problem: str
) -> None:
    prompts.path("t/bad").write_text(source)
    with pytest.raises(PromptError, match=problem):
        prompts.messages("t/bad", {"x": 1})


def test_a_comment_before_the_first_marker_is_allowed(prompts: PromptLibrary) -> None:
    prompts.path("t/noted").write_text("{# licence: CC0 #}\n[user]\nHi {{ x }}.\n")
    assert [m.content for m in prompts.messages("t/noted", {"x": 1})] == ["Hi 1."]


def test_digest_changes_when_the_file_is_edited(prompts: PromptLibrary) -> None:
    before = prompts.digest("t/other")
    path = prompts.path("t/other")
    path.write_text(path.read_text() + "Be brief.\n")
    assert PromptLibrary(prompts.root).digest("t/other") != before


def test_shipped_prompts_all_parse() -> None:
    library = PromptLibrary()
    files = sorted(PROMPTS.rglob("*.j2"))
    assert files, "the package ships prompt files"
    for path in files:
        name = str(path.relative_to(PROMPTS).with_suffix(""))
        source = path.read_text()
        assert "[user]" in source, name
        assert library.digest(name)
