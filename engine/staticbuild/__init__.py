"""Build the static embedding model of Wada et al. (2025) from a sentence-transformer teacher.

Steps (each resumable, outputs in a work folder; ``python -m engine.staticbuild --help``):

1. ``vocab``: most frequent corpus words plus the teacher's word-pieces (fall-back for unknown words).
2. ``extract`` (Sec. 3.1): pick corpus sentences so that each word is seen in up to N of them, encode each sentence
   once with the teacher, add the word's last-layer vector (sub-words averaged) to its running mean, and keep the
   teacher's sentence embedding for step 4.
3. ``pca`` (Sec. 3.2): sentence-level PCA with All-But-The-Top, folded into the word vectors.
4. ``distill`` (Sec. 3.3, Eq. 2-3): fit the word vectors so that their sentence similarities match the teacher's.
5. ``export``: int8 model file plus provenance.
6. ``refine`` (optional, ``python -m engine.staticbuild.refine``): step 4 continued on fresh sentences sampled
   uniformly from corpus files the build did not read; cheap enough for a CPU (sentence embeddings only).
7. ``extend`` (optional, ``python -m engine.staticbuild.extend``): more vocabulary words (Table 9), their contextual
   vectors placed in the model's space by a map fitted on its own words, then distilled with the old words fixed.

Needs the ``build`` extra (torch, transformers and the bundled teacher); the rest of quire never imports this package.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("building the static model needs torch and transformers: pip install -e '.[build]'") from e
