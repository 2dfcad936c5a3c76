"""Did you mean: a query word that no passage holds, spelt as the closest word the index does hold.

Suggestions come from the index's own vocabulary (engine.store.vocabulary), never from a dictionary: a word is
offered only when the user's documents contain it, so following the suggestion always finds something. Distance is
the optimal-string-alignment edit distance (insertions, deletions, substitutions and swaps of neighbours, each one
edit) between stems; ties go to the word more passages hold.
"""

from __future__ import annotations

import re

import numpy as np

from engine.embed.wordtok import WordTokenizer
from engine.store.database import Store
from engine.text import terms as T

# A suggestion shares the misspelt word's first three letters: typos there are rare, and the vocabulary's stems that
# share them are one short range of the term index (896 stems from "ste", 2 ms on the 3.09M-sentence corpus, where
# the 4,737 from "st" take 60-150 ms: fts5vocab counts each stem's passages as it goes).
PREFIX = 3
# A query that misses more words than this is a pasted passage, not a typo: no suggestion (each costs a lookup).
MAX_MISSING = 3
# Edits allowed: one in a short word (a second would turn "cat" into most three-letter words), two in a longer one.
SHORT_STEM = 4
# Stems whose spellings are read (one short lookup each), and the passages each one's spellings are read from. Every
# stem that is a prefix of the misspelt word passes the first filter ("com", "comu", "comun" for "comunication"),
# so the list is long enough to hold them and the right stem.
SHORTLIST = 16
SPELLINGS_FROM = 2


def _allowed(word: str) -> int:
    return 1 if len(word) <= SHORT_STEM else 2


def prefix_distances(word: str, candidates: list[str]) -> np.ndarray:
    """``out[i, j]``: the optimal-string-alignment distance from ``word[:i]`` to ``candidates[j]``, for every prefix
    of ``word`` and every candidate at once (one numpy row operation per character pair, not a Python loop per
    candidate). The last row holds the distances from the whole word."""
    n = len(candidates)
    if n == 0:
        return np.zeros((len(word) + 1, 0), dtype=np.int32)
    lengths = np.fromiter(map(len, candidates), dtype=np.int32, count=n)
    width = int(lengths.max())
    chars = np.zeros((n, width), dtype=np.int32)  # code points, 0 past each candidate's end
    for i, c in enumerate(candidates):
        chars[i, : len(c)] = [ord(ch) for ch in c]
    w = np.array([ord(ch) for ch in word], dtype=np.int32)
    columns = np.arange(n)
    # rows of the dynamic programme, one per candidate: d[i][j] = distance of word[:i] to candidate[:j]
    before = np.tile(np.arange(width + 1, dtype=np.int32), (n, 1))
    earlier = before
    out = np.empty((len(word) + 1, n), dtype=np.int32)
    out[0] = lengths
    for i in range(1, len(w) + 1):
        row = np.empty_like(before)
        row[:, 0] = i
        for j in range(1, width + 1):
            cost = (chars[:, j - 1] != w[i - 1]).astype(np.int32)
            best = np.minimum(np.minimum(before[:, j] + 1, row[:, j - 1] + 1), before[:, j - 1] + cost)
            if i > 1 and j > 1:
                swapped = (chars[:, j - 1] == w[i - 2]) & (chars[:, j - 2] == w[i - 1])
                best = np.where(swapped, np.minimum(best, earlier[:, j - 2] + 1), best)
            row[:, j] = best
        earlier, before = before, row
        out[i] = row[columns, lengths]
    return out


def edit_distances(word: str, candidates: list[str]) -> np.ndarray:
    """The optimal-string-alignment distance from ``word`` to each candidate."""
    return prefix_distances(word, candidates)[-1]


def shortlist(word: str, vocabulary_: list[tuple[str, int]]) -> list[str]:
    """The stems of ``vocabulary_`` ((stem, passages) pairs) that a misspelling ``word`` (folded) may stand for,
    closest first, the one more passages hold first on a tie.

    A misspelt word keeps suffixes the stemmer does not know ("echolocaton" stems to itself, "echolocation" to
    "echoloc"), so a stem is compared with the word's prefixes about as long as it and with the word's stem, and
    the spellings of the few closest are then compared whole (:func:`correction`).
    """
    limit = _allowed(word)
    stems = [t for t, _ in vocabulary_]
    if not stems:
        return []
    lengths = np.fromiter(map(len, stems), dtype=np.int32, count=len(stems))
    table = prefix_distances(word, stems)
    rows = np.arange(table.shape[0])[:, None]
    near = np.abs(rows - lengths[None, :]) <= limit  # prefixes of the word within `limit` letters of the stem
    by_prefix = np.where(near, table, np.iinfo(np.int32).max).min(axis=0)
    by_stem = edit_distances(T.stem(word), stems)
    distance = np.minimum(by_prefix, by_stem)
    order = sorted(np.flatnonzero(distance <= limit), key=lambda i: (distance[i], -vocabulary_[i][1], stems[i]))
    return [stems[i] for i in order[:SHORTLIST]]


def _spellings(store: Store, stems: list[str]) -> list[str]:
    """How the index's passages write ``stems``: the words with those stems in a few passages that hold each."""
    holding = {stem: store.words.passages_holding(stem, SPELLINGS_FROM) for stem in stems}
    sentences = store.sentences.of_passages([p for ids in holding.values() for p in ids])
    out: dict[str, None] = {}
    for stem, ids in holding.items():
        for passage in ids:
            text = " ".join(s.text for s in sentences.get(passage, []))
            out.update((text[a:b].lower(), None) for a, b, _ in T.matches(text, frozenset({stem})))
    return list(out)


def _completions(word: str, stems: list[str]) -> list[str]:
    """Each stem with the misspelt word's own ending ("communic" + "ation" for "comunication"), where that is a form
    of the stem: the word the person meant, which the few passages read by :func:`_spellings` may not show."""
    limit = _allowed(word)
    out: dict[str, None] = {}
    for stem in stems:
        for cut in range(max(0, len(stem) - limit), min(len(word), len(stem) + limit) + 1):
            whole = stem + word[cut:]
            if whole != word and T.stem(whole) == stem:
                out[whole] = None
    return list(out)


def correction(store: Store, word: str, language: WordTokenizer | None = None) -> str | None:
    """A word the index holds, spelt close to ``word`` (which it does not hold); None when there is none. Of the
    closest, a word of the ``language`` (the static model's vocabulary) comes first: "steganografy" is two edits from
    both "steganogram" and "steganography", and the person meant the word of the language."""
    folded = T.fold(word)
    if len(folded) <= PREFIX or not folded.isalpha():
        return None
    own = store.words.stems_from(folded[:PREFIX])
    if any(stem.startswith(folded) for stem, _ in own):
        # the start of a word the index holds: one being typed ("panca" of "pancakes" was offered "panda"), or cut
        # short ("vouch", offered "voucher"), not a misspelling of another
        return None
    found = _closest(store, folded, own, language)
    if found is None or (language is not None and not _known(language, found)):
        # maybe a typo among the first letters: the prefixes one deletion, swap or doubled letter away too, where the
        # word's own found nothing or only a word of no language (a large index holds its own misspellings)
        near = [entry for prefix in _near_prefixes(folded) for entry in store.words.stems_from(prefix)]
        found = _closest(store, folded, own + near, language)
    if found is None:
        return None
    return found.capitalize() if word[:1].isupper() else found


def _near_prefixes(word: str) -> list[str]:
    """The first PREFIX letters of each spelling one edit from ``word`` within its first letters: a letter too many
    ("setparate"; "asasination" reaches "assassination" this way), two swapped ("cmomunity"), one doubled. A letter
    left out ("stganography") is not tried: 26 letters at three places would be 78 more lookups."""
    head = word[: PREFIX + 1]
    variants = [word[:i] + word[i + 1:] for i in range(len(head))]
    variants += [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(min(PREFIX, len(word) - 1))]
    variants += [word[:i] + word[i] + word[i:] for i in range(PREFIX)]
    return [p for p in dict.fromkeys(v[:PREFIX] for v in variants if len(v) >= PREFIX) if p != word[:PREFIX]]


def _closest(store: Store, folded: str, entries: list[tuple[str, int]], language: WordTokenizer | None) -> str | None:
    """The indexed spelling closest to ``folded`` among the stems of ``entries`` ((stem, passages) pairs of the
    vocabulary ranges read), within the edits allowed; None when there is none."""
    vocabulary_ = sorted(set(entries), key=lambda e: e[0])
    stems = shortlist(folded, vocabulary_)
    # every other stem's completion as well, the commonest first: the shortlist fills with short stems that begin the
    # word ("asa", "ass", "assi" for "asasination"), and in a large index "assassin" fell off it
    listed = set(stems)
    others = [stem for stem, _ in sorted(vocabulary_, key=lambda e: -e[1]) if stem not in listed]
    spellings = [*_words(language, _completions(folded, stems)), *_spellings(store, stems),
                 *_words(language, _completions(folded, others))]
    if not spellings:
        return None
    distances = edit_distances(folded, [T.fold(w) for w in spellings])
    closest = np.flatnonzero(distances == distances.min()).tolist()  # in order: the stem more passages hold first
    best = next((i for i in closest if language is not None and _known(language, spellings[i])), closest[0])
    return spellings[best] if distances[best] <= _allowed(folded) else None


def did_you_mean(store: Store, query: str, missing: tuple[str, ...],
                 language: WordTokenizer | None = None) -> str | None:
    """``query`` with each of its ``missing`` words replaced by a close word of the index; None when no word has one.

    ``language``: the static model's vocabulary (61k words of English). A missing word it holds is a word the user's
    documents happen not to hold ("passport"), not a misspelling, and gets no suggestion: the closest indexed word
    ("password") would be a different word (docs/decisions/0010-spelling-suggestions.md)."""
    if len(missing) > MAX_MISSING:
        return None
    typos = [w for w in missing if language is None or not _known(language, w)]
    fixed = {w: c for w in typos if (c := correction(store, w, language))}
    if not fixed:
        return None
    words = "|".join(re.escape(w) for w in sorted(fixed, key=len, reverse=True))
    return re.sub(rf"\b(?:{words})\b", lambda m: fixed[m.group()], query)


def _words(language: WordTokenizer | None, made: list[str]) -> list[str]:
    """The completions (:func:`_completions`) that are words: those the ``language`` knows, where there is one. A stem
    and an ending make forms no one writes: "freeman" + "er" of "freelancer" stems as "freeman" does, and "freemaner"
    was offered to a new user."""
    return made if language is None else [w for w in made if _known(language, w)]


def _known(language: WordTokenizer, word: str) -> bool:
    """Whether every word piece of ``word`` (as the model normalises it) is in the model's vocabulary."""
    pieces = [piece for piece in language.pre_tokens(word) if piece.isalnum()]
    return bool(pieces) and all(language.word_id(piece) is not None for piece in pieces)
