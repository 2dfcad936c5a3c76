"""Rich Text Format, through striprtf.

RTF is 7-bit text with escapes for everything else, so the bytes decode as Windows-1252 (the format's usual code
page; striprtf honours an \\ansicpg declaration for escaped characters) or, failing that, Latin-1, which decodes
anything.
"""

from __future__ import annotations

import re
from pathlib import Path

from striprtf.striprtf import rtf_to_text

from engine.errors import ReadError
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors
from engine.ingest.readers.text import short_title

# The document title in the {\info ...} group, which striprtf drops with the rest of the metadata.
_INFO_TITLE = re.compile(r"\{\\title\s+((?:[^{}\\]|\\.)*)\}")


def _decode(data: bytes) -> str:
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return data.decode("latin-1")


class RtfReader:
    """RTF documents; every paragraph (\\par) is a block."""

    name = "rtf"
    extensions = (".rtf",)

    def read(self, path: Path, limits: Limits) -> Document:
        with parser_errors("RTF"):
            data = path.read_bytes()
            if not data.lstrip().startswith(b"{\\rtf"):
                raise ReadError("corrupt RTF: not an RTF file")
            source = _decode(data)
            lines = [line.strip() for line in rtf_to_text(source, errors="replace").splitlines()]
            match = _INFO_TITLE.search(source)
            title = rtf_to_text(match.group(1), errors="replace").strip() if match else ""
        texts = [line for line in lines if line]
        return Document(
            title=title or short_title(texts[0] if texts else None, path),
            blocks=tuple(Block(text) for text in texts),
            kind=self.name,
        )


register(RtfReader())
