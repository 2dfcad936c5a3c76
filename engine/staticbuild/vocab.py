"""Step 1: the vocabulary, the most frequent corpus words plus the teacher's word-pieces as fall-back."""

from __future__ import annotations

import re
from collections.abc import Iterable

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from engine.embed.wordtok import UNK, is_punctuation, normaliser

# "[unused12]", "[CLS]" and friends are not words, nor are RoBERTa-style markers such as MPNet's "<s>" and "<mask>".
_SPECIAL = re.compile(r"^(\[[^\]]*\]|<[^>]*>)$")


def count_top_words(sentences: Iterable[str], size: int) -> list[str]:
    """The ``size`` most frequent normalised words, most frequent first, counted in Rust by tokenizers' trainer.

    The trainer pre-tokenises exactly as inference does (BERT normaliser and pre-tokeniser), so counted words are
    the words that will be looked up. Punctuation is dropped (never embedded, Sec. 4.1).
    """
    counter = Tokenizer(models.WordLevel(unk_token=UNK))
    counter.normalizer = normaliser()
    counter.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # room for the punctuation the trainer also counts
    trainer = trainers.WordLevelTrainer(vocab_size=size + 2000, special_tokens=[UNK], show_progress=False)
    counter.train_from_iterator(sentences, trainer)
    ranked = sorted(counter.get_vocab().items(), key=lambda item: item[1])
    words = [w for w, _ in ranked if w != UNK and not is_punctuation(w)]
    return words[:size]


def fallback_pieces(wordpieces: Iterable[str]) -> list[str]:
    """Word-initial teacher pieces: every out-of-vocabulary word shortens to one of these at worst."""
    return [
        p for p in wordpieces if not p.startswith("##") and not _SPECIAL.match(p) and not is_punctuation(p) and p.strip()
    ]


def build_vocabulary(sentences: Iterable[str], size: int, wordpieces: list[str]) -> list[str]:
    """Frequent words first, then the word-pieces not already present."""
    words = count_top_words(sentences, size)
    present = set(words)
    return words + [p for p in fallback_pieces(wordpieces) if p not in present]
