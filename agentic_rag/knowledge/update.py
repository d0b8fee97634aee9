"""In-place update of one law (an amendment) in a Milvus index: add, replace and delete its articles without
re-embedding the other laws.

Only the articles whose text changed or that are new are embedded. The Milvus rows are written at the next
generation (see `stores.milvus_store`), then the new documents/tokens files are written beside the old ones
(``documents.g<N>.jsonl``) and the manifest is switched atomically — the commit point, as for a build. A process that
loaded the previous manifest keeps seeing the previous rows until the next update; an update killed before the
switch leaves the previous index as it was.

FAISS indexes are not updated in place: `update_law` refuses with a message (rebuild with init_index.py --force,
which re-embeds everything, or build with --store milvus).
"""
from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .corpus import Document, corpus_sha256, iter_jsonl
from .errors import IndexError_, IndexMismatchError
from .index import Manifest, _check_manifest, _write_jsonl, build_lock, read_manifest, write_manifest
from .stores import StoreOptions

log = logging.getLogger(__name__)


@dataclass
class LawChange:
    """What an update does to one law's rows."""

    law: str
    new: list[Document]  # articles to embed and insert (new, or amended: their text changed)
    ended: list[int] = field(default_factory=list)  # row keys of the amended and deleted articles
    added: list[str] = field(default_factory=list)  # article ids
    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {"law": self.law, "added": self.added, "replaced": self.replaced, "deleted": self.deleted,
                "at": datetime.now(UTC).isoformat(timespec="seconds")}


def plan_change(current: Sequence[Document], law: str, articles: Sequence[Document]) -> LawChange:
    """Compare the index's articles of `law` with `articles` (its new text; empty = delete the law)."""
    from .stores.milvus_store import row_key

    stray = sorted({d.law for d in articles} - {law})
    if stray:
        raise IndexError_(f"the new articles must all belong to 《{law}》, not {', '.join(stray)}")
    old = {d.id: d for d in current if d.law == law}
    if not old and not articles:
        near = difflib.get_close_matches(law, sorted({d.law for d in current}), n=3, cutoff=0.5)
        raise IndexError_(f"no articles of 《{law}》 in the index" + (f"; did you mean {', '.join(near)}?" if near else
                                                                      " (give the full title as the index has it)"))
    new = {d.id: d for d in articles}
    change = LawChange(law, new=[d for d in articles if d.id not in old or row_key(d) != row_key(old[d.id])])
    change.added = [i for i in new if i not in old]
    change.replaced = [d.id for d in change.new if d.id in old]
    change.deleted = [i for i in old if i not in new]
    change.ended = [row_key(old[i]) for i in change.replaced + change.deleted]
    return change


def merged(current: Sequence[Document], tokens: Sequence[list[str]], change: LawChange, articles: Sequence[Document],
           tokenizer) -> tuple[list[Document], list[list[str]]]:
    """The index's documents with the law's block replaced where it was (appended when the law is new); tokens
    are reused for unchanged articles."""
    kept = {d.id: t for d, t in zip(current, tokens) if d.law == change.law}
    renewed = {d.id for d in change.new}
    block = [(d, kept[d.id] if d.id not in renewed else tokenizer.tokenize(d.keyword_text)) for d in articles]
    out: list[tuple[Document, list[str]]] = []
    for d, t in zip(current, tokens):
        if d.law != change.law:
            out.append((d, t))
        elif block:
            out.extend(block)
            block = []
    out.extend(block)
    return [d for d, _ in out], [t for _, t in out]


def update_law(data_dir: Path, law: str, articles: Sequence[Document], embedder, tokenizer,
               store_options: StoreOptions | None = None) -> tuple[Manifest, LawChange]:
    """Replace the articles of `law` (its full title) by `articles` in place; `articles=[]` deletes the law."""
    data_dir = data_dir.resolve()
    with build_lock(data_dir):
        manifest = _check_manifest(read_manifest(data_dir), data_dir, embedder.model_id)
        _check_updatable(manifest, tokenizer)
        index_dir = data_dir / manifest.index_dir
        current = [Document.from_dict(r) for r in iter_jsonl(index_dir / manifest.docs_file)]
        tokens = list(iter_jsonl(index_dir / manifest.tokens_file))
        change = plan_change(current, law, articles)
        docs, toks = merged(current, tokens, change, articles, tokenizer)
        _write_rows(manifest, data_dir, current, change, embedder, store_options or StoreOptions())
        new = _next_manifest(manifest, docs, change)
        _write_jsonl(index_dir / new.docs_file, (d.to_dict() for d in docs))
        _write_jsonl(index_dir / new.tokens_file, toks)
        write_manifest(data_dir, new)  # the commit point
        for old_file in {manifest.docs_file, manifest.tokens_file} - {new.docs_file, new.tokens_file}:
            (index_dir / old_file).unlink(missing_ok=True)
        log.info("updated 《%s》 in %s: %d added, %d replaced, %d deleted (generation %d)", law, data_dir,
                 len(change.added), len(change.replaced), len(change.deleted), new.generation)
        return new, change


def _check_updatable(manifest: Manifest, tokenizer) -> None:
    if manifest.store != "milvus":
        raise IndexError_(f"in-place updates need a Milvus index; this one is {manifest.store}. Rebuild it from the "
                          "amended corpus (python init_index.py --force, which embeds every article again) or build "
                          "it with --store milvus")
    if manifest.tokenizer_version != tokenizer.version:
        raise IndexMismatchError(f"the index was tokenised by {manifest.tokenizer_version}, this code is "
                                 f"{tokenizer.version}: rebuild (python init_index.py --force --store milvus)")


def _write_rows(manifest: Manifest, data_dir: Path, current: list[Document], change: LawChange, embedder,
                options: StoreOptions) -> None:
    """Embed only the new and amended articles and write them (and the ended rows) at the next generation."""
    from .stores.milvus_store import MilvusStore

    vectors = embedder.encode_documents([d.index_text for d in change.new]) if change.new else []
    store = MilvusStore.load(manifest.store_ref(data_dir), current, options)
    try:
        store.apply_update(change.new, vectors, change.ended, manifest.generation + 1)
    finally:
        store.close()


def _next_manifest(manifest: Manifest, docs: list[Document], change: LawChange) -> Manifest:
    g = manifest.generation + 1
    nxt = manifest.model_copy(update={"generation": g})
    files = [f for f in manifest.files if f not in (f"{manifest.index_dir}/{manifest.docs_file}",
                                                    f"{manifest.index_dir}/{manifest.tokens_file}")]
    # The corpus file no longer describes the index as a whole: init_index.py will rebuild from it (see docs).
    return nxt.model_copy(update={
        "files": [f"{manifest.index_dir}/{nxt.docs_file}", f"{manifest.index_dir}/{nxt.tokens_file}", *files],
        "doc_count": len(docs), "corpus_sha256": corpus_sha256(docs), "corpus_file_sha256": None,
        "updates": [*manifest.updates, change.summary()]})
