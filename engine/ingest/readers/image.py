"""Images (PNG, JPEG, TIFF) read for the text in them, through Tesseract (``engine.ingest.readers.ocr``).

Pillow decodes the image in the reader process, after its declared size is checked (a decompression bomb is
declined on its header), and hands Tesseract a grey PNG: alpha laid on white, CMYK and 16-bit images as 8-bit grey,
which Tesseract's own decoder reads badly or not at all. Each frame of a multi-page TIFF is a page.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers import ocr
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors

if TYPE_CHECKING:
    from PIL import Image

# A TIFF of a scanned book can hold hundreds of pages; the time budget ends their reading, this their listing.
_MAX_FRAMES = 2_000


def _frames(image: Image.Image) -> Iterator[Image.Image]:
    """Each frame of ``image`` as 8-bit grey, on white where it is transparent; each checked for its size first."""
    from PIL import Image, ImageSequence

    for number, frame in enumerate(ImageSequence.Iterator(image), 1):
        if number > _MAX_FRAMES:
            break
        if frame.width * frame.height > ocr.MAX_PIXELS:
            raise ocr.too_large(frame.width, frame.height)
        if frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info):
            rgba = frame.convert("RGBA")
            white = Image.new("RGBA", rgba.size, "white")
            yield Image.alpha_composite(white, rgba).convert("L")
        elif frame.mode in ("I;16", "I;16B", "I;16L"):  # 16-bit grey: scaled to 8 bits, not clipped
            yield frame.convert("I").point(lambda v: v * (1 / 256)).convert("L")
        else:
            yield frame.convert("L")


class ImageReader:
    """PNG, JPEG and TIFF images: the text Tesseract finds in them; an image without text is no document."""

    name = "image"
    isolate = True  # Pillow's decoders and Tesseract run in C; the reader process bounds their time and memory
    extensions = (".png", ".jpg", ".jpeg", ".tif", ".tiff")

    def read(self, path: Path, limits: Limits) -> Document:
        """A block per paragraph found; a multi-page TIFF's pages numbered, a single image's not."""
        with parser_errors("image"):
            from PIL import Image, UnidentifiedImageError

            try:
                with warnings.catch_warnings():  # Pillow warns of sizes this reader declines below them anyway
                    warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                    image = Image.open(path)
            except Image.DecompressionBombError as e:
                raise ReadError("image too large: a decompression bomb", status=FileState.SKIPPED) from e
            except UnidentifiedImageError as e:
                raise ReadError("corrupt image: not an image Pillow can decode") from e
            with image:
                if image.width * image.height > ocr.MAX_PIXELS:
                    raise ocr.too_large(image.width, image.height)
                tesseract = ocr.Tesseract.for_file(limits)
                if tesseract is None:
                    raise ReadError(ocr.IMAGE_WITHOUT_OCR, status=FileState.SKIPPED)
                read, note = tesseract.pages(enumerate(_frames(image), 1))
                numbered = getattr(image, "n_frames", 1) > 1
        blocks = tuple(Block(text, number if numbered else None) for number, texts in read for text in texts)
        if not blocks:
            raise ReadError(ocr.NO_TEXT_IN_IMAGE, status=FileState.SKIPPED)
        return Document(title=path.stem, blocks=blocks, kind=self.name, note=note)


register(ImageReader())
