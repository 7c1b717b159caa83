"""Embedded BM25 with tantivy (a Lucene-class engine in Rust): the default when no
Elasticsearch is configured. One on-disk index per repository and version under
``WELLCHOSEN_DATA_DIR/indexes/tantivy/<index name>``.
"""

import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import tantivy
from django.conf import settings

from .base import TIE_MARGIN, Hit, LexicalBackend, tie_may_continue, top_k_stable
from .stopwords import ENGLISH_STOP_WORDS

ANALYZER = "wellchosen_english"
_PROGRESS_EVERY = 50_000


def english_analyzer() -> tantivy.TextAnalyzer:
    """Lower-cased words, stop words removed, Snowball English stems (as Elasticsearch's english analyzer)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(list(ENGLISH_STOP_WORDS)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    # add_integer_field, not add_unsigned_field: the latter fails from Python.
    builder.add_integer_field("id", stored=False, indexed=False, fast=True)
    # Frequencies but no positions: BM25 needs nothing more, and the index stays small.
    builder.add_text_field("text", stored=False, tokenizer_name=ANALYZER, index_option="freq")
    return builder.build()


class TantivyBackend(LexicalBackend):
    kind = "tantivy"

    def __init__(
        self,
        *,
        index_name: str,
        root: Path | None = None,
        writer_threads: int = 0,
        writer_heap_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        super().__init__(index_name=index_name)
        self.path = Path(root or Path(settings.WELLCHOSEN_DATA_DIR) / "indexes" / "tantivy") / index_name
        self.writer_threads = writer_threads
        self.writer_heap_bytes = writer_heap_bytes
        self._index: tantivy.Index | None = None
        self._analyzer = english_analyzer()

    def _open(self, *, create: bool = False) -> tantivy.Index:
        if self._index is None or create:
            index = tantivy.Index(_schema(), path=str(self.path), reuse=not create)
            # Custom analyzers are not stored in the index: register on every open.
            index.register_tokenizer(ANALYZER, english_analyzer())
            self._index = index
        return self._index

    def build(self, utterances: Iterable[tuple[int, str]], *, on_progress: Callable[[int], None] | None = None) -> int:
        if self.exists():
            raise FileExistsError(f"tantivy index {self.index_name} exists already at {self.path}")
        self.path.mkdir(parents=True)
        try:
            index = self._open(create=True)
            writer = index.writer(self.writer_heap_bytes, self.writer_threads)
            count = 0
            for utterance_id, text in utterances:
                writer.add_document(tantivy.Document(id=utterance_id, text=text))
                count += 1
                if on_progress and count % _PROGRESS_EVERY == 0:
                    on_progress(count)
            writer.commit()
            writer.wait_merging_threads()
        except BaseException:
            self._index = None
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        index.reload()
        if on_progress:
            on_progress(count)
        return count

    def search(self, queries: Sequence[str], *, k: int) -> list[list[Hit]]:
        index = self._open()
        schema = index.schema
        searcher = index.searcher()
        results: list[list[Hit]] = []
        for text in queries:
            terms = list(dict.fromkeys(self._analyzer.analyze(text)))
            if not terms:
                results.append([])
                continue
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", term)) for term in terms]
            )
            limit = k + TIE_MARGIN
            while True:
                found = searcher.search(query, limit=limit, count=False).hits
                ids = searcher.fast_field_values("id", [address for _, address in found]) if found else []
                hits = [Hit(int(i), float(score)) for (score, _), i in zip(found, ids, strict=True)]
                if not tie_may_continue(hits, k=k, limit=limit):
                    break
                limit *= 2
            results.append(top_k_stable(hits, k))
        return results

    def exists(self) -> bool:
        return (self.path / "meta.json").exists()

    def delete(self) -> None:
        self._index = None
        shutil.rmtree(self.path, ignore_errors=True)
