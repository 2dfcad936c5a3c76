"""Short text files in each common encoding: decoded right and found by their words.

UTF-16 without a byte-order mark used to be skipped as binary, and a short Latin-1 file came out in a Central
European code page ("Café crčme brűlée"), so its words were never found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from engine.ingest import readers

DESSERT = "Café crème brûlée is a French dessert of rich custard under a layer of hard caramel."
# name -> (text, encoding); each file's first word is one no other file holds
FILES = {
    "utf8.txt": ("Zucchini fritters need grated courgette, feta and dill: délicieux.", "utf-8"),
    "utf16le.txt": ("Porcupines raise sharp quills when a predator comes close.", "utf-16-le"),
    "utf16be.txt": ("Glaciers carve deep valleys as they creep down the mountains.", "utf-16-be"),
    "utf16-accents.txt": ("Le garçon a mangé une crème brûlée à côté de la fenêtre.", "utf-16-le"),
    "latin1.txt": (DESSERT, "latin-1"),
    "cp1252.txt": ("Smörgåsbord – “a buffet” of Swedish dishes, served at Jul… and Midsommar.", "cp1252"),
    "short-latin1": ("Ça va à côté", "latin-1"),  # no extension: sniffed as text
    "german.txt": ("Grüße aus der Straße: schöne Bäume.", "latin-1"),
}
# the bytes clearly say otherwise: a byte Windows-1252 leaves undefined, letters that are not Latin at all
OTHERS = {
    "czech.txt": ("Příliš žluťoučký kůň úpěl ďábelské ódy na louce za městem.", "cp1250"),
    "russian.txt": ("Привет, как дела? Это простой текст на русском языке о погоде.", "cp1251"),
    "polish.txt": ("Wczoraj byłem w sklepie i kupiłem chleb, masło oraz świeże warzywa na obiad.", "cp1250"),
}


def write(folder: Path, files: dict[str, tuple[str, str]]) -> Path:
    folder.mkdir(exist_ok=True)
    for name, (text, encoding) in files.items():
        (folder / name).write_bytes(text.encode(encoding))
    return folder


@pytest.mark.parametrize("name", [*FILES, *OTHERS])
def test_decoded_as_written(tmp_path: Path, name: str) -> None:
    text, encoding = {**FILES, **OTHERS}[name]
    if encoding.startswith("utf-16"):
        assert not text.encode(encoding).startswith((b"\xff\xfe", b"\xfe\xff"))  # no mark to go by
    doc = readers.read(write(tmp_path, {name: (text, encoding)}) / name)
    assert " ".join(block.text for block in doc.blocks) == text


def test_binary_with_nul_bytes_is_still_binary(tmp_path: Path) -> None:
    path = tmp_path / "counts"
    path.write_bytes(bytes(range(256)) * 8)  # every byte value: NULs, but no text in any encoding
    with pytest.raises(readers.ReadError, match="binary"):
        readers.read(path)


def test_every_encoding_is_searchable(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", FILES)
    db = str(tmp_path / "index")
    result = CliRunner().invoke(cli, ["index", str(docs), "--db", db, "--workers", "0", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["documents"] == len(FILES)
    for name, (text, _) in FILES.items():
        word = text.split()[0].strip(",:")
        result = CliRunner().invoke(cli, ["search", word, "--db", db, "--mode", "lexical", "-k", "1", "--json"])
        found = json.loads(result.output)["results"]
        assert found and Path(found[0]["path"]).name == name, (word, found)
    result = CliRunner().invoke(cli, ["search", "crème brûlée", "--db", db, "--mode", "lexical", "--json"])
    names = {Path(r["path"]).name for r in json.loads(result.output)["results"]}
    assert {"latin1.txt", "utf16-accents.txt"} <= names
