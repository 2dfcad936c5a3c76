"""The relevance gate weighs how a query's words align with a sentence's (engine.search.alignment; decision 0016): a
query that shares one phrase with an unrelated sentence finds nothing relevant, and a paraphrase whose words align
with its sentence is answered (in lexical mode too), where the evidence alone decided the other way."""

from __future__ import annotations

from pathlib import Path

import docgen
import pytest

from engine import Index, Mode
from engine.facets.service import load_space
from engine.search import alignment, gate
from engine.search import relevance as rel
from engine.search.alignment import alignment_f, content_words

# Beside the toy corpus (413 sentences: the index is calibrated on itself, not a small folder): two long sentences
# that mention "information systems" in passing, and one-sentence notes on other everyday topics.
DOCUMENTS = {
    "winter.txt": "Over the long and rather difficult winter our small volunteer team rewrote the parish billing "
                  "software, moved every server to a new building near the river, and finally documented the old "
                  "information systems for the visiting auditors.",
    "harbour.txt": "Before she moved north she spent three long summers repairing fishing nets and painting boats in a "
                   "quiet harbour town, and only then found steady work at the regional information systems office.",
    "lungs.txt": "The physician examined the patient's lungs.",
    "onions.txt": "The chef sliced the onions and fried them in butter.",
    "flood.txt": "Heavy rain flooded the streets of the village overnight.",
    "fractions.txt": "The pupils listened carefully while the teacher explained fractions.",
    "eyelid.txt": "A woman puts cosmetics on her eyelid.",
    "senator.txt": "The senator resigned after the corruption scandal.",
    "bridge.txt": "Engineers repaired the damaged bridge within a week.",
    "juice.txt": "The toddler spilled orange juice on the carpet.",
    "harvest.txt": "Farmers harvested wheat before the storm arrived.",
    "orchestra.txt": "The orchestra rehearsed the symphony all afternoon.",
}
# Shares "information systems" with two sentences and nothing else with anything: by evidence alone (BM25 for the
# phrase, a cosine near the index's tail) it was answered, with the winter notes first.
PHRASE_ONLY = "information systems for physicists"
# Says what harvest.txt says in other words; its evidence alone (1.36) was just under the bar and its cosine did not
# stand out from its null, so it found nothing relevant; its words align with the sentence at F 0.45.
PARAPHRASE = "it was the growers who reaped the grain ahead of the storm, as they should have"
LEXICAL_PARAPHRASE = "growers reaped the wheat before the rainstorm"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    docs = tmp_path_factory.mktemp("docs")
    docgen.write_toy_corpus(docs)
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text + "\n", encoding="utf-8")
    opened = Index(tmp_path_factory.mktemp("db"))
    opened.add([docs])
    yield opened
    opened.close()


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_query_sharing_one_phrase_with_unrelated_sentences_finds_nothing_relevant(index: Index, mode: str) -> None:
    response = index.search(PHRASE_ONLY, mode=mode)
    assert response.nothing_relevant and response.results == ()
    # the sentence has the evidence that used to answer, and aligns badly both ways
    weak = index.search(PHRASE_ONLY, mode=mode, include_weak=True, explain=False).results
    first = next(r for r in weak if Path(r.path).name == "winter.txt")
    assert first.explanation.contributions["evidence"] >= rel.RELEVANT
    assert first.explanation.contributions["alignment"] < 0.25


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_paraphrase_whose_words_align_is_answered(index: Index, mode: str) -> None:
    response = index.search(PARAPHRASE, mode=mode)
    assert not response.nothing_relevant
    top = response.results[0]
    assert Path(top.path).name == "harvest.txt" and not top.weak
    why = top.explanation.contributions
    assert why["evidence"] < rel.RELEVANT <= rel.gated(why["evidence"], why["alignment"], Mode(mode))
    # the card reads what the gate weighed: the bar reads 50
    assert top.score >= 50


def test_lexical_mode_answers_a_paraphrase_sharing_one_word_when_the_rest_align(index: Index) -> None:
    """Lexical mode has no cosine: by its words alone (BM25 for "wheat", evidence 0.70 against its bar of 0.9) this
    found nothing; its words align with the sentence at F 0.52, which the lexical gate centres at a third."""
    response = index.search(LEXICAL_PARAPHRASE, mode="lexical")
    assert not response.nothing_relevant and Path(response.results[0].path).name == "harvest.txt"
    why = response.results[0].explanation.contributions
    assert why["evidence"] < rel.LEXICAL_RELEVANT <= rel.gated(why["evidence"], why["alignment"], Mode.LEXICAL)


def test_alignment_f_matches_words_greedily_in_the_static_word_space() -> None:
    space = load_space()
    assert space is not None
    scores = alignment_f(space, PARAPHRASE, [DOCUMENTS["harvest.txt"], DOCUMENTS["winter.txt"], "", "the of and"])
    assert scores[0] > rel.ALIGNMENT_CENTRE > scores[1] > 0
    assert scores[2] == scores[3] == 0  # no content word: nothing to align
    # a text aligns perfectly with itself, whatever its stop words and repeated words
    assert alignment_f(space, "storm wheat farmers", ["The farmers, the wheat and the storm, the storm!"])[0] == (
        pytest.approx(1.0))
    owner, words = content_words(space, ["the of and", "storm, the Storm", "storm"])
    assert owner.tolist() == [1, 2] and words[0] == words[1]  # no content word; one word however often and written


def test_the_gate_weighs_alignment_around_its_centre() -> None:
    assert rel.gated(1.2, None, Mode.HYBRID) == 1.2
    assert rel.gated(1.2, rel.ALIGNMENT_CENTRE, Mode.HYBRID) == pytest.approx(1.2)
    assert rel.gated(1.2, 1.0, Mode.HYBRID) == pytest.approx(1.2 + rel.ALIGNMENT_WEIGHT * (1.0 - rel.ALIGNMENT_CENTRE))
    # lexical mode centres it lower: its bar is lower and it has no cosine (decision 0016)
    assert rel.gated(0.7, rel.LEXICAL_ALIGNMENT_CENTRE, Mode.LEXICAL) == pytest.approx(0.7)
    assert rel.gated(0.7, rel.ALIGNMENT_CENTRE, Mode.LEXICAL) > 0.7


# The onions note itself, and a storm: its cosine and BM25 alone clear the bar with room to spare, whatever its words
# align at; the harvest note holds the storm.
ANSWERED = "The chef sliced the onions and fried them in butter before the storm arrived"


@pytest.fixture
def aligned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The sentences each search's gate aligns with the query, one list per call."""
    calls: list[list[str]] = []

    def spy(space, query, sentences):
        calls.append(list(sentences))
        return alignment_f(space, query, sentences)

    monkeypatch.setattr(alignment, "alignment_f", spy)
    return calls


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_a_query_answered_whatever_the_alignment_aligns_only_its_first_result(
        index: Index, mode: str, aligned: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Aligning the ten documents with most evidence is a tenth of a whole-corpus query's time; where one of them
    answers however badly its words align, only the first result's alignment (which sets the cards' scale) is
    weighed, and every result is as it is with all ten aligned (decision 0023)."""
    quick = index.search(ANSWERED, mode=mode, include_weak=True, explain=False)
    assert Path(quick.results[0].path).name == "onions.txt" and len(quick.results) > 1
    assert aligned == [[DOCUMENTS["onions.txt"]]]
    monkeypatch.setattr(gate, "_clears_bar_unaligned", lambda docs, mode, bar: False)
    aligned.clear()
    every = index.search(ANSWERED, mode=mode, include_weak=True, explain=False)
    assert len(aligned[0]) > 1  # the ten with most evidence
    assert quick.nothing_relevant == every.nothing_relevant

    def shown(response):  # what a person sees: the order, the cards' numbers, the weak flags, the passages
        return [(r.path, r.score, r.weak, r.sentence) for r in response.results]

    assert shown(quick) == shown(every)
    assert quick.results[0].explanation.contributions == every.results[0].explanation.contributions


def test_a_query_near_the_bar_aligns_the_ten_with_most_evidence(index: Index, aligned: list[list[str]]) -> None:
    index.search(PARAPHRASE, explain=False)
    assert len(aligned[0]) >= rel.ALIGNED_DOCS
