"""Every selectable embedder loads offline (the static table shipped in the package, the
others from what this machine derived from the bundled all-MiniLM-L6-v2), gives unit
vectors of its own size, and agrees with torch MiniLM where it is MiniLM; the factory
names the choices when given another."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from dagmca.config import SessionConfig
from dagmca.errors import SettingsError, UserError
from dagmca.similarity import Embedder, MiniLMEmbedder
from dagmca.similarity.bundled import bundled_model
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder
from dagmca.similarity.distill import distill
from dagmca.similarity.onnx import OnnxMiniLMEmbedder
from dagmca.similarity.static import NAME, StaticEmbedder, read_config

TEXTS = [
    "Who bears the cost of the street trees, and who gains?",
    "The four-day week keeps output steady where work is measured by results.",
    "  padded on both sides, with a line break\n",
    "A list:\n1. shade\n2. storm water\n3. property values",
    " ".join(["Shift-based services mostly move the same hours around the week."] * 30),  # past 256 tokens
]
PARAPHRASE = (
    "Who pays for planting street trees, and who benefits?",
    "Who bears the cost of street trees, and who gains?",
)
UNRELATED = "The committee approved the railway timetable for the winter season."


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder of this test module's own: the ONNX graphs are exported into it."""
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        pytest.skip("the onnx extra is not installed")
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    emb = MiniLMEmbedder()
    try:
        return emb.embed(TEXTS)
    finally:
        emb.close()


def vectors(emb: Embedder, texts: list[str]) -> np.ndarray:
    try:
        return emb.embed(texts)
    finally:
        emb.close()


@pytest.mark.parametrize(("quantized", "agreement"), [(False, 0.99999), (True, 0.98)])
@pytest.mark.slow
def test_onnx_minilm_is_torch_minilm(
    quantized: bool, agreement: float, exported: Path, reference: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGMCA_DATA_DIR", str(exported))
    emb = OnnxMiniLMEmbedder(quantized=quantized)
    got = vectors(emb, TEXTS)
    assert emb.path().is_relative_to(exported) and emb.path().exists()  # exported on first use
    assert got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    agree = (got * reference).sum(axis=1)
    assert agree.min() > agreement, agree


@pytest.mark.slow
def test_an_exported_graph_is_reused_and_batches_match_single_texts(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGMCA_DATA_DIR", str(exported))
    first = OnnxMiniLMEmbedder()
    first.ensure()
    stamp = first.path().stat().st_mtime_ns
    again = OnnxMiniLMEmbedder()
    batch = vectors(again, TEXTS)
    assert again.path().stat().st_mtime_ns == stamp  # loaded, not exported again
    alone = np.stack([vectors(OnnxMiniLMEmbedder(), [t])[0] for t in TEXTS])
    # padding is masked out: a short text batched with a long one keeps its vector
    assert np.abs(batch - alone).max() < 1e-5


def test_the_static_embedder_loads_its_shipped_table_offline() -> None:
    emb = StaticEmbedder()
    got = vectors(emb, [*TEXTS, *PARAPHRASE, UNRELATED])
    assert got.shape == (len(TEXTS) + 3, 256)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    paraphrase, unrelated = got[-3] @ got[-2], got[-3] @ got[-1]
    assert paraphrase > 0.5 > 0.3 > unrelated  # the labelled sets show the margins


def tiny_table(folder: Path) -> Path:
    """A static model folder written by hand: five tokens, three dims."""
    from safetensors.numpy import save_file

    vocab = {"[PAD]": 0, "[UNK]": 1, "street": 2, "trees": 3, "##s": 4}
    tokenizer = json.loads((bundled_model() / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["model"]["vocab"] = vocab
    tokenizer["added_tokens"] = [a for a in tokenizer["added_tokens"] if a["content"] == "[PAD]"]
    tokenizer.update(post_processor=None, padding=None, truncation=None)
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"max_length": 2}), encoding="utf-8")
    table = np.array([[9, 9, 9], [9, 9, -9], [1, 0, 0], [0, 2, 0], [0, 0, 4]], dtype=np.float16)
    save_file({"embeddings": table}, str(folder / "model.safetensors"))
    return folder


def test_the_static_embedder_averages_its_rows_without_unknown_or_special_tokens(tmp_path: Path) -> None:
    got = vectors(
        StaticEmbedder(tiny_table(tmp_path / "tiny")),
        ["Street TREES", "street", "street ☃", "☃", "streets trees"],
    )
    expected = np.array([[0.5, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 0], [0.5, 0, 2]])
    # lower-cased as MiniLM reads; no [CLS]/[SEP] rows; [UNK] left out; a text of nothing
    # known is the zero vector; the cut at max_length (2) drops the third token
    norms = np.maximum(np.linalg.norm(expected, axis=1, keepdims=True), 1e-12)
    assert np.allclose(got, expected / norms, atol=1e-6)


def test_distilling_a_slice_of_the_vocabulary_gives_a_deterministic_table(tmp_path: Path) -> None:
    first = distill(bundled_model(), tmp_path / "a", limit=300)
    again = distill(bundled_model(), tmp_path / "b", limit=300)
    rows = load_file(str(first / "model.safetensors"))
    assert rows["embeddings"].shape == (300, 256) and rows["embeddings"].dtype == np.int8
    assert rows["scales"].shape == (300,) and rows["scales"].dtype == np.float32
    kept_again = load_file(str(again / "model.safetensors"))
    assert all(np.array_equal(rows[k], kept_again[k]) for k in ("embeddings", "scales"))
    kept = json.loads((first / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert len(kept) == 300 and sorted(kept.values()) == list(range(300))
    assert not any(t.startswith("[unused") or t in ("[CLS]", "[SEP]", "[MASK]") for t in kept)
    texts = ["1 2 3", "! ?", "# $ % &"]
    got = vectors(StaticEmbedder(first), texts)
    assert got.shape == (3, 256) and np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(got, vectors(StaticEmbedder(again), texts))


def test_each_backend_keys_its_vectors_apart(tmp_path: Path) -> None:
    names = {make_embedder(e).name for e in EmbedderName}
    assert len(names) == len(EmbedderName)  # a kept cache never mixes two backends' vectors
    # nor two static tables': the name carries the table's digest
    shipped = StaticEmbedder()
    assert shipped.name == f"{NAME}-{read_config(shipped.path())['digest'][:12]}"
    assert StaticEmbedder(tiny_table(tmp_path / "tiny")).name != shipped.name


def test_the_factory_names_the_choices_for_an_unknown_embedder() -> None:
    with pytest.raises(SettingsError) as caught:
        make_embedder("bert-large")
    line = caught.value.line()
    assert "'bert-large'" in line and all(e.value in line for e in EmbedderName)
    assert "\n" not in line


def test_the_environment_picks_the_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGMCA_EMBEDDER", "minilm-onnx-int8")
    chosen = make_embedder()
    assert isinstance(chosen, OnnxMiniLMEmbedder) and chosen.quantized
    monkeypatch.delenv("DAGMCA_EMBEDDER")
    assert make_embedder().name == make_embedder(DEFAULT).name
    monkeypatch.setenv("DAGMCA_EMBEDDER", "nope")
    with pytest.raises(SettingsError):
        make_embedder()


def test_the_setting_offers_exactly_the_factory_s_embedders() -> None:
    assert SessionConfig().embedder == DEFAULT.value
    for e in EmbedderName:
        assert SessionConfig(embedder=e.value).embedder == e.value
    with pytest.raises(ValueError):
        SessionConfig(embedder="bert-large")


def test_a_missing_optional_package_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a)
    )
    monkeypatch.setenv("DAGMCA_DATA_DIR", str(tmp_path))
    emb = OnnxMiniLMEmbedder()
    with pytest.raises(UserError) as caught:
        emb.embed(["a text"])
    emb.close()
    assert caught.value.line() == "this embedder needs the onnxruntime package — pip install 'dagmca[onnx]'"
