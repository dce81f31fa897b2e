"""Provenance never carries credentials from params.yaml into a card."""

from __future__ import annotations

import yaml

from pipelines.publish.provenance import collect, redact


def test_redact_removes_user_info_and_key_like_query_parameters():
    url = "https://bot:pa/ss@wiki.example/w/api.php?format=json&token=T0K&api_key=K3Y"
    clean = redact({"wiki": {"api": {"url": url}}, "n": 3})
    text = clean["wiki"]["api"]["url"]
    for secret in ("bot", "pa/ss", "T0K", "K3Y"):
        assert secret not in text
    assert text.startswith("https://REDACTED@wiki.example/w/api.php?format=json&")
    assert clean["n"] == 3


def test_collect_redacts_the_snapshot_line_and_the_params(tmp_path):
    params = {
        "wiki": {"reader": "api", "api": {"url": "https://u:secret-pw@wiki.example/api.php"}},
        "llm": {"backend": "openai", "model": "m", "base_url": "http://h/v1?key=S3CR3T"},
        "embed": {"model": "e5"},
    }
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params), "utf-8")
    found = collect(tmp_path, path, ("wiki", "llm"), [])
    dumped = repr(found)
    assert "secret-pw" not in dumped and "S3CR3T" not in dumped
    assert "wiki.example" in found.snapshot
    assert found.encoders == {"embed.model": "e5", "retrieval.dense_model": "e5"}


def test_the_publish_stage_depends_on_every_params_section_a_card_records():
    from pipelines.publish.registry import DATASETS
    from tests.support.snapshot import ROOT

    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text("utf-8"))["stages"]["publish"]
    recorded = {key for spec in DATASETS.values() for key in spec.params}
    assert recorded <= set(stage["params"])
