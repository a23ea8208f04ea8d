"""Screen and text embedders behind one interface, and the per-screen embedding cache.

``structure`` (the default) needs no model and runs on the CPU: a screen is the shape of its
view tree, the labels of its fixed controls and a small picture of its look; a text is its
character n-grams. ``openai`` asks an OpenAI-compatible ``/v1/embeddings`` endpoint (for
instance a served Qwen3-VL-Embedding) for both, configured by environment variables.
Every vector is float32 and L2-normalised, so a dot product is a cosine.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
from PIL import Image

from core.llm import LLMClient, LLMError, data_url
from trajectories.blobs import read_blob
from trajectories.images import open_image
from trajectories.models import Screen
from trajectories.uixml import UITree, UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData

from .models import ScreenEmbedding

# (image bytes, UI XML -- or the tree a caller already parsed from it -- or None)
ScreenInput = tuple[bytes, str | bytes | UITree | None]


class Embedder(Protocol):
    name: str
    dim: int

    def embed_screens(self, screens: Sequence[ScreenInput]) -> np.ndarray:
        """One L2-normalised float32 row per (image bytes, XML or None)."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1)


HASHES_PER_TOKEN = 4  # a token lands in several buckets: one collision cannot make it another


def _buckets(token: str, dim: int) -> list[tuple[int, float]]:
    """A token's hashed positions and signs (signs keep unrelated tokens' sums near zero)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8 * HASHES_PER_TOKEN).digest()
    out = []
    for k in range(HASHES_PER_TOKEN):
        h = int.from_bytes(digest[8 * k : 8 * k + 8], "little")
        out.append((h % dim, 1.0 if (h >> 63) & 1 else -1.0))
    return out


def hashed_vector(tokens: Iterable[str], dim: int) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    for token in tokens:
        for i, sign in _buckets(token, dim):
            vector[i] += sign
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


# ------------------------------------------------------------------------------- structure

STRUCTURE_DIM = 128
LABEL_DIM = 64
THUMB_SIZE = (8, 16)  # a portrait screen's look, grey, 128 values
IMAGE_DIM = THUMB_SIZE[0] * THUMB_SIZE[1]
TEXT_DIM = 256
MAX_LABEL_CHARS = 40

# 320 values a screen: a query against 100,000 nodes reads 128 MB, a few milliseconds.
# The parts' weights in a screen vector. Structure and control labels say which page a screen
# is; the look breaks ties and is all there is when a screen has no XML.
WEIGHTS = {"structure": 1.0, "labels": 1.0, "image": 0.5}


def structure_tokens(xml: str | bytes | UITree) -> tuple[list[str], list[str]]:
    """The view tree's shape and its fixed controls' labels.

    Shape: each element's class and resource-id, alone and under its parent's, as a set, so a
    list showing five rows and one showing six agree. Labels: the text of clickable elements
    outside scrolling containers (buttons, tabs, toolbar actions): the page's own words, not
    its content (list rows, typed text).
    """
    if isinstance(xml, UITree):
        tree = xml
    else:
        try:
            tree = parse_ui_xml(xml)
        except UIXmlError:
            return [], []
    names = {el.path: f"{el.class_name}#{el.resource_id}" for el in tree.elements}
    scrolling = [el.path + "/" for el in tree.elements if el.scrollable]
    shape: set[str] = set()
    labels: set[str] = set()
    for el in tree.elements:
        name = names[el.path]
        parent = names.get(el.path.rpartition("/")[0], "")
        shape.add(f"n:{name}")
        shape.add(f"e:{parent}>{name}")
        if el.package:
            shape.add(f"p:{el.package}")
        clickable = el.clickable or el.checkable or el.long_clickable
        text = (el.text or el.content_desc).strip()
        if (
            clickable
            and text
            and not el.editable
            and len(text) <= MAX_LABEL_CHARS
            and not any(el.path.startswith(prefix) for prefix in scrolling)
        ):
            labels.add(f"l:{el.class_name}:{text.lower()}")
    return sorted(shape), sorted(labels)


def image_signature(data: bytes, where: str = "screenshot") -> np.ndarray:
    """A grey thumbnail, mean-centred: its cosine with another is their pixels' correlation."""
    image, _ = open_image(data, where)
    with image:
        image.draft("L", (THUMB_SIZE[0] * 4, THUMB_SIZE[1] * 4))
        try:
            small = image.convert("L").resize(THUMB_SIZE, Image.Resampling.BOX)
        except Exception as exc:  # broken pixel data
            raise InvalidData(f"{where}: unreadable image ({exc})") from None
    pixels = np.asarray(small, dtype=np.float32).ravel()
    pixels -= pixels.mean()
    norm = np.linalg.norm(pixels)
    return pixels / norm if norm else pixels


def text_ngrams(text: str, n: tuple[int, ...] = (3, 4)) -> list[str]:
    padded = f" {' '.join(text.lower().split())} "
    grams = [f"w:{word}" for word in padded.split()]
    for size in n:
        grams.extend(padded[i : i + size] for i in range(max(0, len(padded) - size + 1)))
    return grams


class StructureEmbedder:
    """The default: view-tree shape + control labels + a grey thumbnail; hashed text n-grams."""

    name = "structure"
    dim = STRUCTURE_DIM + LABEL_DIM + IMAGE_DIM
    text_dim = TEXT_DIM
    # A screenshot with no XML has only its look: it is compared with the nodes' looks alone
    # (against whole vectors, the parts it lacks would cap its cosine near 0.45).
    look = slice(STRUCTURE_DIM + LABEL_DIM, STRUCTURE_DIM + LABEL_DIM + IMAGE_DIM)

    def embed_screen(self, image: bytes, xml: str | bytes | UITree | None) -> np.ndarray:
        shape, labels = structure_tokens(xml) if xml else ([], [])
        parts = [
            WEIGHTS["structure"] * hashed_vector(shape, STRUCTURE_DIM),
            WEIGHTS["labels"] * hashed_vector(labels, LABEL_DIM),
            WEIGHTS["image"] * image_signature(image),
        ]
        return normalise(np.concatenate(parts))

    def embed_screens(self, screens: Sequence[ScreenInput]) -> np.ndarray:
        if not screens:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.embed_screen(image, xml) for image, xml in screens])

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.text_dim), dtype=np.float32)
        return np.stack([hashed_vector(text_ngrams(text), self.text_dim) for text in texts])


# ---------------------------------------------------------------------------------- openai


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint for screens and texts.

    WAYPOINT_EMBEDDINGS_URL is the server's base URL (``http://host:8000/v1``);
    WAYPOINT_EMBEDDINGS_MODEL the model; WAYPOINT_EMBEDDINGS_API_KEY an optional bearer key;
    WAYPOINT_EMBEDDINGS_TIMEOUT_S a request's timeout. A screen is sent as an image data URL
    (the served multimodal models take it as ``input``); its XML is not sent. Requests go
    through the one client, :class:`core.llm.LLMClient` (its retries and limits).
    """

    name = "openai"
    BATCH = 16

    def __init__(self) -> None:
        url = os.getenv("WAYPOINT_EMBEDDINGS_URL", "")
        self.model = os.getenv("WAYPOINT_EMBEDDINGS_MODEL", "")
        if not url or not self.model:
            raise InvalidData(
                "embedder: openai needs WAYPOINT_EMBEDDINGS_URL and WAYPOINT_EMBEDDINGS_MODEL "
                "set (an OpenAI-compatible /v1/embeddings server and its model)"
            )
        self.client = LLMClient(
            url,
            self.model,
            os.getenv("WAYPOINT_EMBEDDINGS_API_KEY", ""),
            timeout_s=float(os.getenv("WAYPOINT_EMBEDDINGS_TIMEOUT_S", "60")),
        )
        self.dim = 0  # known after the first answer

    def _post(self, inputs: list[str]) -> np.ndarray:
        try:
            vectors = self.client.embed(inputs)
        except LLMError as exc:
            raise InvalidData(f"embedder: {exc}") from None
        try:
            matrix = np.array(vectors, dtype=np.float32)
        except ValueError:
            matrix = np.zeros(0, dtype=np.float32)
        if matrix.ndim != 2 or not matrix.shape[1]:
            raise InvalidData(
                f"embedder: {self.client.url('/embeddings')} answered vectors of different sizes"
            )
        self.dim = matrix.shape[1]
        return normalise(matrix)

    def _batched(self, inputs: list, empty_dim: int) -> np.ndarray:
        if not inputs:
            return np.zeros((0, empty_dim), dtype=np.float32)
        parts = [self._post(inputs[i : i + self.BATCH]) for i in range(0, len(inputs), self.BATCH)]
        return np.concatenate(parts)

    def embed_screens(self, screens: Sequence[ScreenInput]) -> np.ndarray:
        urls = []
        for image, _xml in screens:
            _, content_type = open_image(image, "screenshot")  # refuse non-images first
            urls.append(data_url(image, content_type))
        return self._batched(urls, self.dim)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self._batched(list(texts), self.dim)


# ------------------------------------------------------------------------------- catalogue

EMBEDDERS = {"structure": StructureEmbedder, "openai": OpenAIEmbedder}
DEFAULT_EMBEDDER = "structure"


def get_embedder(name: str) -> Embedder:
    if name not in EMBEDDERS:
        known = ", ".join(sorted(EMBEDDERS))
        raise InvalidData(f"embedder: unknown embedder {name!r} (known: {known})")
    return EMBEDDERS[name]()


def embedder_key(embedder: Embedder) -> str:
    """The cache key: the openai embedder's vectors depend on its model."""
    model = getattr(embedder, "model", "")
    return f"{embedder.name}:{model}" if model else embedder.name


def screen_input(screen: Screen) -> ScreenInput:
    xml = read_blob(screen.ui_xml) if screen.ui_xml_id else None
    return read_blob(screen.screenshot), xml


def embed_screen_rows(
    embedder: Embedder, screens: Sequence[Screen], progress=None
) -> dict[int, np.ndarray]:
    """Each screen's vector by screen id, from the cache or computed once and cached."""
    key = embedder_key(embedder)
    ids = [s.pk for s in screens]
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(ids), 900):  # SQLite's variable limit
        chunk = ids[start : start + 900]
        for screen_id, vector in ScreenEmbedding.objects.filter(
            embedder=key, screen_id__in=chunk
        ).values_list("screen_id", "vector"):
            found[screen_id] = np.frombuffer(bytes(vector), dtype=np.float32)
    missing = [s for s in screens if s.pk not in found]
    for start in range(0, len(missing), 64):
        batch = missing[start : start + 64]
        vectors = embedder.embed_screens([screen_input(s) for s in batch])
        rows = [
            ScreenEmbedding(screen=s, embedder=key, vector=v.astype(np.float32).tobytes())
            for s, v in zip(batch, vectors, strict=True)
        ]
        ScreenEmbedding.objects.bulk_create(rows, ignore_conflicts=True)
        found.update({s.pk: v.astype(np.float32) for s, v in zip(batch, vectors, strict=True)})
        if progress is not None:
            progress(min(start + len(batch), len(missing)), len(missing))
    return found


def image_bytes_of(data: bytes | None, where: str = "screenshot") -> bytes:
    """Refuse what is not an image before it reaches an embedder."""
    if not data:
        raise InvalidData(f"{where}: no image was sent")
    image, _ = open_image(data, where)
    image.close()
    return data
