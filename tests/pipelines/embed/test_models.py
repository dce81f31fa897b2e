"""Loading a tokenizer: the class a folder names, without importing torch, and the same
tokenizer ``AutoTokenizer`` gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.embed.models import ModelError, default_minilm, load_tokenizer, named_class
from tests.support.tiny_encoder import save_tiny_bert

TEXT = (
    "The Brannock Bridge collapsed at 04:12 on 14 June 2026; 37 people were hurt. "
    "Überschwemmung, naïve café — 東京 and emoji 🌊 stay tokenized the same."
)


@pytest.mark.parametrize("which", ["minilm", "tiny"])
def test_the_named_class_is_autotokenizers_and_encodes_the_same(which, tmp_path):
    from transformers import AutoTokenizer

    folder = default_minilm() if which == "minilm" else str(save_tiny_bert(tmp_path / "tiny"))
    ours, auto = load_tokenizer(folder), AutoTokenizer.from_pretrained(folder)
    assert named_class(folder) is type(auto) is type(ours)
    kwargs = {"add_special_tokens": False, "return_offsets_mapping": True}
    assert ours(TEXT, **kwargs) == auto(TEXT, **kwargs)
    assert ours(TEXT)["input_ids"] == auto(TEXT)["input_ids"]
    assert (ours.model_max_length, ours.pad_token_id) == (auto.model_max_length, auto.pad_token_id)


def test_loading_minilms_tokenizer_does_not_import_torch():
    code = (
        "import sys; from pipelines.embed.models import load_tokenizer; "
        "load_tokenizer(None); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_folder_naming_no_exported_class_falls_back_to_autotokenizer(tmp_path):
    folder = save_tiny_bert(tmp_path / "tiny")
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps(json.loads(config.read_text()) | {"tokenizer_class": "os.path"}))
    assert named_class(str(folder)) is None
    assert load_tokenizer(str(folder))("a b")["input_ids"]


def test_a_folder_without_a_tokenizer_names_the_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="empty"):
        load_tokenizer(str(empty))
    assert named_class(str(Path(empty))) is None
