"""Neural embeddings ("Neural Embeddings for Text", anonymous, under review; Sec. 2 and Appendix A): micro-tune
three small vectors of a masked-LM's head on the text itself and take how far they moved (Eq. 1) as the text's vector.

Per text: NFKD-normalised tokens, chunks of whole sentences that fit the model (Fig. 8), the periodic masking
blueprints [(2,1), (1,1), (1,2), (1,3)] (Fig. 10), 10 epochs of AdamW at lr 0.01 on all inputs as one batch
(Sec. 2), encoder in eval mode. One embedding per indexed unit however many chunks it has. The batched fast path
is in :mod:`engine.embed.neural_tune`. ``encode`` returns Eq. 1's vectors; an index or `quire embed` then centres
them on their collection (:mod:`engine.embed.centre`, a step beyond the paper).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.embed import device as devices
from engine.embed import neural_model
from engine.embed.neural_inputs import masked_positions, normalise_text, token_chunks
from engine.embed.neural_tune import TuneSettings, masked_states, micro_tune

log = logging.getLogger(__name__)

# Texts tuned together. On a GPU, large batches keep it busy (the head is small); on a CPU, batching only saves
# Python overhead, and small batches keep memory low and progress frequent.
GPU_TEXTS_PER_BATCH = 4096
CPU_TEXTS_PER_BATCH = 64
# Masked positions tuned together, whatever the texts' lengths: each holds about six d-wide float32 rows (state, head
# output, gradient, autograd's saved tensors), so memory follows positions, not texts. A 256-token chunk has about
# 1,800 masked positions, an STS sentence 86, so a batch of texts could hold twenty times the memory of another;
# 262k positions x 6 rows x 384 x 4 bytes is about 2.4 GB at MiniLM width.
GPU_POSITIONS_PER_BATCH = 262_144
CPU_POSITIONS_PER_BATCH = 8192
# Masked positions whose vocabulary logits are held at once: 16k x 30k float32 is 2 GB on a GPU; 2k is 250 MB.
GPU_CHUNK_POSITIONS = 16_384
CPU_CHUNK_POSITIONS = 2048
# Tokens per encoder call: a GPU needs big calls to be busy; on a CPU, big calls only cost memory.
GPU_TOKEN_BUDGET = 65_536
CPU_TOKEN_BUDGET = 8192


class NeuralEmbedder:
    """The ``neural`` method: bundled MiniLM plus its fitted head, or any local BERT masked-LM folder."""

    name = "neural"

    def __init__(self, model: str | Path | None = None, *, device: str | None = None,
                 settings: TuneSettings = TuneSettings(), texts_per_batch: int | None = None,
                 centre: bool = True) -> None:
        found = devices.detect(device)
        self.device = found
        self.settings = settings
        lm = neural_model.load(model)
        encoder = lm.encoder.to(found.kind)
        if found.half:
            encoder = encoder.half()
        self.lm = neural_model.MaskedLM(lm.tokenizer, encoder, lm.head.to(found.kind), lm.max_tokens, lm.fingerprint)
        self.texts_per_batch = texts_per_batch or (GPU_TEXTS_PER_BATCH if found.accelerated else CPU_TEXTS_PER_BATCH)
        self.positions_per_batch = GPU_POSITIONS_PER_BATCH if found.accelerated else CPU_POSITIONS_PER_BATCH
        self.chunk_positions = GPU_CHUNK_POSITIONS if found.accelerated else CPU_CHUNK_POSITIONS
        self.token_budget = GPU_TOKEN_BUDGET if found.accelerated else CPU_TOKEN_BUDGET
        blueprints = ",".join(f"{k}{m}" for k, m in settings.blueprints)
        # Vectors are Eq. 1's; an index (or `quire embed`) centres them on their collection (engine.embed.centre),
        # and the fingerprint says so, since an index built before that holds uncentred vectors.
        self.centres_on_collection = centre
        self.fingerprint = (f"neural-{lm.fingerprint}-e{settings.epochs}-lr{settings.lr:g}-b{blueprints}"
                            + ("-centred" if centre else ""))
        log.info("neural method on %s (%d-d)", found.description, self.dim)

    @property
    def dim(self) -> int:
        """Three vectors of the encoder's width, concatenated (Eq. 1)."""
        return 3 * self.lm.hidden

    def chunks(self, texts: Sequence[str]) -> list[list[list[int]]]:
        """Token-id chunks per text; the tokenizer runs once over the whole batch, texts too long are re-split."""
        normalised = [normalise_text(t) for t in texts]
        whole = self.lm.tokenizer(normalised, add_special_tokens=False)["input_ids"] if normalised else []
        limit = self.lm.max_tokens
        return [([ids] if ids else []) if len(ids) <= limit else token_chunks(text, self.lm.tokenize, limit)
                for text, ids in zip(normalised, whole)]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit rows; a text with no tokens gets a zero row."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        units = self.chunks(texts)
        for start, stop in self.batches(units):
            with devices.attention_kernels(self.device.kind):
                states = masked_states(self.lm, units[start:stop], self.settings, self.device.kind,
                                       token_budget=self.token_budget)
            vectors = micro_tune(states, self.lm.head, self.settings, chunk_positions=self.chunk_positions,
                                 half=self.device.half)
            out[start:stop] = vectors.cpu().numpy()
        return out

    def batches(self, units: list[list[list[int]]]) -> list[tuple[int, int]]:
        """Consecutive (start, stop) runs of units within ``texts_per_batch`` texts and ``positions_per_batch``
        masked positions (a single unit over the limit is a batch of its own)."""
        blueprints = self.settings.blueprints
        positions = [sum(masked_positions(len(chunk), blueprints) for chunk in unit) for unit in units]
        runs, start, held = [], 0, 0
        for i, count in enumerate(positions):
            if i > start and (held + count > self.positions_per_batch or i - start == self.texts_per_batch):
                runs.append((start, i))
                start, held = i, 0
            held += count
        if start < len(units):
            runs.append((start, len(units)))
        return runs
