"""The ``tokens`` column of every long-context config: exact counts of what a harness sends (or of
the text alone), checked against whole-text encodings; the card's tokens section and table; the
manifest's record; the ``publish.tokenizers`` errors; the length columns' descriptions."""

from __future__ import annotations

import json
import re
import statistics as st
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from benchsmith_scoring import harness
from benchsmith_scoring.tokens import chat_template
from pipelines.dag.dvc_yaml import tokenizer_deps
from pipelines.dag.table import STAGES
from pipelines.errors import ParamsError
from pipelines.publish.card import field_docs
from pipelines.publish.export import config_sources, export_config
from pipelines.publish.registry import DATASETS, REQUEST, ConfigSpec
from pipelines.publish.views import haystack_context
from pipelines.settings import load_params
from tests.pipelines.publish.conftest import publish_settings
from tests.support.smollm import ensure_tokenizer
from tests.support.snapshot import ROOT

Encode = Callable[[str], list[int]]
TEXT_OF: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    "haystacks": lambda row: haystack_context(row["documents"]),
    "documents": lambda row: row.get("text") or None,
}
"""The text each data config counts, written out here apart from the registry."""


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return ensure_tokenizer(ROOT / ".cache")


def openai_encoder(name: str) -> Encode:
    import bpe_openai

    return bpe_openai.get_encoding(name).encode_ordinary


def hf_encoder(path: Path) -> Encode:
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(path))
    return lambda text: backend.encode(text, add_special_tokens=False).ids


def recount(spec: ConfigSpec, row: Mapping[str, Any], encode: Encode, template: Any) -> int | None:
    """The row's count from whole-text encodings: the framed request plus the answer, or the
    text alone (OpenAI's chat accounting when ``template`` is None)."""
    if spec.tokens != REQUEST:
        text = TEXT_OF[spec.name](row)
        return None if text is None else len(encode(text))
    assert spec.harness is not None
    prompt = getattr(harness, spec.harness.prompt)(row)
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    if template is None:
        framed = sum(3 + len(encode(m["role"])) + len(encode(m["content"])) for m in messages) + 3
    else:
        framed = len(encode(template(messages)))
    answer = row[spec.harness.target]
    return framed + (len(encode(answer)) if answer else 0)


def published_rows(folder: Path) -> list[dict[str, Any]]:
    return [row for f in sorted(folder.glob("*.parquet")) for row in pq.read_table(f).to_pylist()]


def assert_counts_exact(dataset: Path, encoders: dict[str, tuple[Encode, Any]]) -> int:
    """Every row's ``tokens`` in an exported dataset against its recount in each tokenizer; the
    rows checked."""
    checked = 0
    for spec in DATASETS[dataset.name].configs:
        for folder in _folders(dataset, spec):
            features = _features(folder)
            if not spec.tokens:
                assert "tokens" not in features, folder.name
                continue
            assert list(features["tokens"]) == list(encoders), folder.name
            for row in published_rows(folder):
                for name, (encode, template) in encoders.items():
                    expected = recount(spec, row, encode, template)
                    assert row["tokens"][name] == expected, (folder.name, name)
                checked += 1
    return checked


def test_every_row_counts_exactly_its_request_in_the_default_tokenizers(hub_export):
    encoders = {name: (openai_encoder(name), None) for name in ("cl100k_base", "o200k_base")}
    checked = sum(assert_counts_exact(hub_export / name, encoders) for name in DATASETS)
    # LV-Eval, subtopics, haystacks, entries, documents, rr_contexts
    assert checked == 324 + 12 + 3 + 13 + 211 + 13


def test_smollm2_counts_equal_its_whole_text_encoding_with_its_chat_template(
    publish_data, tmp_path, smollm2
):
    """Every row of every counted config, LV-Eval's at its 2k level (its four variants): the
    tokenizers package encodes whole texts at about 2 MB/s, 5 s for all three levels."""
    settings = publish_settings(
        tmp_path, tokenizers=["cl100k_base", f"smollm2={smollm2}"], embeddings=False
    )
    template = chat_template(smollm2.parent)
    assert template is not None
    encoders = {
        "cl100k_base": (openai_encoder("cl100k_base"), None),
        "smollm2": (hf_encoder(smollm2), template),
    }
    tokenizers = settings.loaded_tokenizers()
    checked = 0
    for name, spec in DATASETS.items():
        out = tmp_path / name
        for config in (c for c in spec.configs if c.tokens):
            for config_name, source, value in config_sources(config, publish_data):
                if "*" in config.source and not source.stem.endswith("_2k"):
                    continue  # the whole-text recount runs at about 2 MB/s: one level of three
                export_config(
                    config_name, config, source, value, {}, publish_data, out, url_only=False,
                    shard_bytes=10**9, tokenizers=tokenizers,
                )  # fmt: skip
        checked += assert_counts_exact(out, encoders)
    assert checked == 108 + 12 + 3 + 13 + 211 + 13  # ... entries, documents, rr_contexts


def test_data_configs_count_the_text_alone_and_null_without_text(
    hub_export, publish_data, tmp_path
):
    documents = published_rows(hub_export / "wikigenbench" / "documents")
    missing = [r for r in documents if not r["text"]]
    assert {r["status"] for r in missing} >= {"dead", "robots"} and all(
        r["tokens"] == {"cl100k_base": None, "o200k_base": None} for r in missing
    )
    assert all(r["tokens"]["cl100k_base"] > 0 for r in documents if r["text"])
    subtopics = {r["topic_id"]: r for r in published_rows(hub_export / "summhay" / "subtopics")}
    for haystack in published_rows(hub_export / "summhay" / "haystacks"):
        context = subtopics[haystack["topic_id"]]["context"]
        assert haystack["tokens"]["cl100k_base"] == len(openai_encoder("cl100k_base")(context))
    spec = DATASETS["wikigenbench"].configs[1]
    source = publish_data / spec.source
    tokenizers = publish_settings(tmp_path).loaded_tokenizers()
    export_config(
        "documents", spec, source, None, {}, publish_data, tmp_path, url_only=True,
        shard_bytes=10**9, tokenizers=tokenizers,
    )  # fmt: skip
    url_only = published_rows(tmp_path / "documents")
    assert len(url_only) == len(documents) and "text" not in url_only[0]
    assert {r["tokens"]["o200k_base"] for r in url_only} == {None}


def test_the_card_names_tokenizers_framing_and_each_level_in_each_tokenizer(hub_export):
    card = (hub_export / "lveval" / "README.md").read_text()
    section = card[card.index("## Lengths in tokens") : card.index("## Statistics")]
    assert "| `cl100k_base` | `openai-chat`: OpenAI's chat accounting" in section
    assert "| `o200k_base` | `openai-chat`" in section
    assert "`lveval_prompt(row)`" in section and "plus the reference `answer`" in section
    folders = sorted((hub_export / "lveval").glob("events_mixup_*"))
    assert len(folders) == 12
    for folder in folders:
        counts = [r["tokens"] for r in published_rows(folder)]
        cells = []
        for name in ("cl100k_base", "o200k_base"):
            n = sorted(c[name] for c in counts)
            cells.append(f"{n[0]:,} / {round(st.median(n)):,} / {n[-1]:,}")
        assert f"| {folder.name} | {len(counts)} | {cells[0]} | {cells[1]} |" in section
    # how to run the tasks with a window: both harnesses, in the first tokenizer
    assert """`--metadata '{"max_length": 8192, "tokenizer": "cl100k_base"}'`""" in section
    assert "`-T max_length=8192 -T tokenizer=cl100k_base`" in section
    haystacks = (hub_export / "summhay" / "README.md").read_text()
    assert "- `haystacks`: the haystack as one text" in haystacks
    summhay = haystacks[haystacks.index("## Lengths in tokens") : haystacks.index("## Statistics")]
    assert "lm-eval with" not in summhay  # SummHay has Inspect tasks only
    assert "Inspect AI with `-T max_length=8192" in summhay


def test_the_manifest_records_each_tokenizer_and_its_framing(hub_export):
    for name in DATASETS:
        manifest = json.loads((hub_export / name / "benchsmith.json").read_text())
        assert manifest["tokenizers"] == [
            {"name": n, "framing": "openai-chat", "encoding": n}
            for n in ("cl100k_base", "o200k_base")
        ]


LENGTHS = re.compile(r"length|count|(^|_)words?($|_)|^level|tokens")


def test_every_length_column_says_what_it_counts_and_in_which_unit(hub_export):
    for name, spec in DATASETS.items():
        for config in spec.configs:
            docs = field_docs(config)
            for folder in _folders(hub_export / name, config):
                for column in _features(folder):
                    if LENGTHS.search(column):
                        assert re.search(r"words|characters|tokens|documents", docs[column]), column
    lveval = field_docs(DATASETS["lveval"].configs[0])
    assert all(w in lveval["length"] for w in ("question", "context", "answer", "not the context"))
    assert "whitespace-separated words" in field_docs(DATASETS["summhay"].configs[1])["documents"]


def _tokenizer_params(tmp_path: Path, tokenizers: list[str]) -> Path:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["publish"]["tokenizers"] = tokenizers
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    (tmp_path / "snapshot").symlink_to(ROOT / "snapshot")
    return path


@pytest.mark.parametrize(
    ("tokenizers", "message"),
    [
        (["cl100k_base", "cl999k"], r"\[publish -> tokenizers -> 1\] tokenizer 'cl999k': not an"),
        (
            ["cl100k_base", "none/tokenizer.json"],
            r"\[publish -> tokenizers -> 1\] tokenizer 'none': no tokenizer file at \S+/none/",
        ),
        (
            ["bad/tokenizer.json"],
            r"\[publish -> tokenizers -> 0\] tokenizer 'bad': \S+/bad/tokenizer.json is not a "
            "readable tokenizer.json",
        ),
        (["cl100k_base", "o200k_base", "cl100k_base"], r"\[publish -> tokenizers\].*cl100k_base"),
    ],
)
def test_bad_tokenizers_fail_the_check_naming_the_key_and_path(tmp_path, tokenizers, message):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tokenizer.json").write_text("{not json")
    with pytest.raises(ParamsError, match=message):
        load_params(_tokenizer_params(tmp_path, tokenizers))


def test_a_tokenizer_path_is_read_from_params_folder_and_is_a_publish_dependency(tmp_path, smollm2):
    (tmp_path / "tok").mkdir()
    for f in smollm2.parent.iterdir():
        if f.is_file():
            (tmp_path / "tok" / f.name).write_bytes(f.read_bytes())
    params = load_params(_tokenizer_params(tmp_path, ["cl100k_base", "smol=tok/tokenizer.json"]))
    loaded = params.publish.loaded_tokenizers()
    assert [(t.name, t.framing) for t in loaded] == [
        ("cl100k_base", "openai-chat"),
        ("smol", "chat-template"),
    ]
    # the tokenizer and the chat template files beside it
    assert tokenizer_deps(STAGES["publish"], tmp_path) == [
        "tok/tokenizer.json",
        "tok/tokenizer_config.json",
        "tok/chat_template.jinja",
    ]
    assert tokenizer_deps(STAGES["publish"], ROOT) == []  # the defaults are encodings


def _folders(dataset: Path, config: ConfigSpec) -> list[Path]:
    """The exported folders of one registry config (a pattern gives several)."""
    pattern = re.escape(config.name).replace(r"\{stem\}", ".+").replace(r"\{value\}", ".+")
    found = [f for f in sorted(dataset.iterdir()) if re.fullmatch(pattern, f.name)]
    return [f for f in found if any(f.glob("*.parquet"))]


def _features(folder: Path) -> Any:
    from datasets import Features

    return Features.from_arrow_schema(pq.read_schema(next(folder.glob("*.parquet"))))
