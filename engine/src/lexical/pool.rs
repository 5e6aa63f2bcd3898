//! The chunk pool: one tantivy index shared by the snapshots of a repository.
//!
//! Every document is one chunk, identified by a 64-bit *chunk key* that the caller derives from
//! everything the document holds (path, name, symbols, text; see
//! `crate::index`). A snapshot adds only the chunks the pool lacks: when a file changes, only its
//! changed chunks are indexed again, so the second snapshot of a repository costs a fraction of
//! the first.
//!
//! A [`PoolView`] restricts the pool to one snapshot: at open it maps each segment's documents to
//! snapshot chunk ids (or to nothing) and sums the snapshot's exact token counts, and at query time
//! it scores with tantivy's BM25 (`Bm25Weight`) from the snapshot's own statistics (document count,
//! average field lengths, document frequencies counted over the snapshot's documents only), term
//! at a time, reading each clause's postings once and skipping the other snapshots' documents
//! before any work. Scores are therefore identical to those of an index holding just that
//! snapshot (the test `pool_view_scores_equal_a_fresh_index`), and to the last bit to those of
//! tantivy's own union of the same clauses (`term_at_a_time_scores_equal_tantivys_union_to_the_last_bit`).
//!
//! Writers must hold the pool's write lock (the caller's job, see [`crate::cache`]); documents are
//! deleted only by the cache's garbage collection, when no snapshot lists their chunk any more
//! ([`LexicalPool::delete_documents_except`], `crate::index::gc`), and commits are atomic
//! (tantivy's `meta.json`). A view skips deleted documents that a merge has not removed yet.
//!
//! A pool can also live in memory ([`LexicalPool::in_memory`]): a process that refreshes an open
//! index after each edit keeps the few new chunks there, since a commit on disk costs tens of
//! milliseconds of syncing. A view can span a pool on disk and such an overlay
//! ([`LexicalPool::view_with`]); statistics and scores are those of the snapshot's documents
//! wherever they live.

use super::tokenizer::{
    CJK_TOKENIZER, CODE_TOKENIZER, CjkTokenizer, CodeTokenizer, count_cjk_bigrams, count_tokens,
};
use super::{LexicalConfig, LexicalError, LexicalQuery};
use crate::cache::{KeyMap, KeySet};
use rayon::prelude::*;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use tantivy::DocSet;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::indexer::IndexWriterOptions;
use tantivy::indexer::NoMergePolicy;
use tantivy::postings::Postings;
use tantivy::query::Bm25Weight;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocId, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TERMINATED, TantivyDocument,
    Term,
};

/// When a commit leaves more than this many segments, the small ones (under a quarter of the
/// largest) are merged into one: each snapshot that adds chunks adds a small segment, many of
/// them slow queries down, and rewriting the large segments of the first build each time would
/// cost as much as that build.
const MAX_SEGMENTS: usize = 8;

/// Marks a pool document that is not part of the viewed snapshot.
const NOT_IN_SNAPSHOT: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Fields {
    chunk_key: Field,
    path: Field,
    symbols: Field,
    body: Field,
    path_tokens: Field,
    symbol_tokens: Field,
    body_tokens: Field,
    /// CJK bigrams of the chunk's symbols and body (see [`super::tokenizer::for_each_cjk_bigram`]);
    /// empty for chunks without CJK text, so the code fields' statistics are untouched.
    cjk: Field,
    cjk_tokens: Field,
}

const FIELD_NAMES: [&str; 9] = [
    "chunk_key",
    "path",
    "symbols",
    "body",
    "path_tokens",
    "symbol_tokens",
    "body_tokens",
    "cjk",
    "cjk_tokens",
];

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text_with = |tokenizer| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs)
                .set_fieldnorms(true),
        )
    };
    let text = text_with(CODE_TOKENIZER);
    let fields = Fields {
        chunk_key: builder.add_u64_field(FIELD_NAMES[0], FAST),
        path: builder.add_text_field(FIELD_NAMES[1], text.clone()),
        symbols: builder.add_text_field(FIELD_NAMES[2], text.clone()),
        body: builder.add_text_field(FIELD_NAMES[3], text),
        // Exact token counts: the snapshot's average field lengths are sums of these (tantivy's
        // per-document field norms are quantised).
        path_tokens: builder.add_u64_field(FIELD_NAMES[4], FAST),
        symbol_tokens: builder.add_u64_field(FIELD_NAMES[5], FAST),
        body_tokens: builder.add_u64_field(FIELD_NAMES[6], FAST),
        cjk: builder.add_text_field(FIELD_NAMES[7], text_with(CJK_TOKENIZER)),
        cjk_tokens: builder.add_u64_field(FIELD_NAMES[8], FAST),
    };
    (builder.build(), fields)
}

/// One chunk to index.
#[derive(Debug, Clone, Copy)]
pub struct ChunkDoc<'a> {
    pub chunk_key: u64,
    pub path: &'a str,
    /// Qualified name of the chunk and of the definitions inside it, one per line.
    pub symbols: &'a str,
    pub body: &'a str,
}

/// Indexing resources.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    pub threads: usize,
    /// Memory budget per indexing thread, in bytes (tantivy needs at least 15 MB).
    pub memory_per_thread: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(4),
            memory_per_thread: 64 << 20,
        }
    }
}

/// A pool index on disk.
pub struct LexicalPool {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

/// The pool's folder as tantivy sees it: an [`tantivy::directory::MmapDirectory`], except that
/// the reader's lock on the index's list of segments (`.tantivy-meta.lock`, which tantivy opens
/// for writing even to read) is skipped when the folder cannot be written (a read-only file
/// system, a cache of another user): then no process of ours can delete segments under the
/// reader, which is what that lock prevents. Writing still takes the writer's lock, and fails.
/// (A writer of another user sharing the folder could still collect segments while we open
/// them; the open then fails and is retried by the next call, never reads a damaged index.)
#[derive(Clone, Debug)]
struct PoolDirectory(tantivy::directory::MmapDirectory);

impl tantivy::Directory for PoolDirectory {
    fn get_file_handle(
        &self,
        path: &Path,
    ) -> Result<
        std::sync::Arc<dyn tantivy::directory::FileHandle>,
        tantivy::directory::error::OpenReadError,
    > {
        self.0.get_file_handle(path)
    }

    fn open_read(
        &self,
        path: &Path,
    ) -> Result<tantivy::directory::FileSlice, tantivy::directory::error::OpenReadError> {
        self.0.open_read(path)
    }

    fn delete(&self, path: &Path) -> Result<(), tantivy::directory::error::DeleteError> {
        self.0.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, tantivy::directory::error::OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(
        &self,
        path: &Path,
    ) -> Result<tantivy::directory::WritePtr, tantivy::directory::error::OpenWriteError> {
        self.0.open_write(path)
    }

    fn atomic_read(
        &self,
        path: &Path,
    ) -> Result<Vec<u8>, tantivy::directory::error::OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> std::io::Result<()> {
        self.0.atomic_write(path, data)
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        self.0.sync_directory()
    }

    fn acquire_lock(
        &self,
        lock: &tantivy::directory::Lock,
    ) -> Result<tantivy::directory::DirectoryLock, tantivy::directory::error::LockError> {
        match self.0.acquire_lock(lock) {
            Err(tantivy::directory::error::LockError::IoError(error))
                if lock.filepath == tantivy::directory::META_LOCK.filepath
                    && crate::cache::is_read_only(&error) =>
            {
                Ok(tantivy::directory::DirectoryLock::from(Box::new(())))
            }
            other => other,
        }
    }

    fn watch(
        &self,
        watch_callback: tantivy::directory::WatchCallback,
    ) -> tantivy::Result<tantivy::directory::WatchHandle> {
        self.0.watch(watch_callback)
    }
}

impl LexicalPool {
    /// An empty pool in memory, gone with the process (no locks: the process is its only user).
    pub fn in_memory() -> Result<LexicalPool, LexicalError> {
        let (schema, fields) = schema();
        LexicalPool::with_index(
            PathBuf::from("(memory)"),
            Index::create_in_ram(schema),
            fields,
        )
    }

    /// A pool over an opened index: registers the tokenizer and opens the reader.
    fn with_index(dir: PathBuf, index: Index, fields: Fields) -> Result<LexicalPool, LexicalError> {
        index
            .tokenizers()
            .register(CODE_TOKENIZER, TextAnalyzer::from(CodeTokenizer::default()));
        index
            .tokenizers()
            .register(CJK_TOKENIZER, TextAnalyzer::from(CjkTokenizer::default()));
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|source| LexicalError::Tantivy {
                path: dir.display().to_string(),
                source,
            })?;
        Ok(LexicalPool {
            dir,
            index,
            reader,
            fields,
        })
    }

    /// Opens the pool in `dir`, creating an empty one if `dir` holds none. A pool whose schema is
    /// not this version's is reported as [`LexicalError::Corrupt`]. A complete pool in a folder
    /// this process cannot write (a read-only file system, another user's cache) opens for
    /// reading: see `PoolDirectory`.
    pub fn open_or_create(dir: &Path) -> Result<LexicalPool, LexicalError> {
        let (expected_schema, fields) = schema();
        std::fs::create_dir_all(dir).map_err(|source| LexicalError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        let tantivy_err = |source| LexicalError::Tantivy {
            path: dir.display().to_string(),
            source,
        };
        let mmap =
            tantivy::directory::MmapDirectory::open(dir).map_err(|e| LexicalError::Tantivy {
                path: dir.display().to_string(),
                source: e.into(),
            })?;
        let index = Index::open_or_create(PoolDirectory(mmap), expected_schema.clone())
            .map_err(tantivy_err)?;
        if index.schema() != expected_schema {
            return Err(LexicalError::Corrupt {
                path: dir.display().to_string(),
                message: "schema differs from this version's".into(),
            });
        }
        LexicalPool::with_index(dir.to_path_buf(), index, fields)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn tantivy_err(&self, source: tantivy::TantivyError) -> LexicalError {
        LexicalError::Tantivy {
            path: self.dir.display().to_string(),
            source,
        }
    }

    /// Checks the checksum of every file of the committed segments (reads them all).
    pub fn validate_checksums(&self) -> Result<(), LexicalError> {
        let damaged = self
            .index
            .validate_checksum()
            .map_err(|e| self.tantivy_err(e))?;
        if damaged.is_empty() {
            Ok(())
        } else {
            let mut names: Vec<String> = damaged.iter().map(|p| p.display().to_string()).collect();
            names.sort();
            Err(LexicalError::Corrupt {
                path: self.dir.display().to_string(),
                message: format!("damaged files: {}", names.join(", ")),
            })
        }
    }

    /// Sees the latest commit (of this or another process).
    pub fn reload(&self) -> Result<(), LexicalError> {
        self.reader.reload().map_err(|e| self.tantivy_err(e))
    }

    /// Documents in the pool, over all file versions.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn num_segments(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    /// Starts adding about `expected_docs` documents. The caller holds the pool's write lock and
    /// has checked (after [`LexicalPool::reload`]) that the pool lacks the chunks it will add.
    pub fn writer(
        &self,
        options: &WriterOptions,
        expected_docs: usize,
    ) -> Result<PoolWriter<'_>, LexicalError> {
        // Each indexing thread writes its own segment: a few thousand documents are one thread's
        // work, and one segment is cheaper to search and to merge later.
        let threads = options.threads.clamp(1, 1 + expected_docs / 20_000);
        let writer_options = IndexWriterOptions::builder()
            .num_worker_threads(threads)
            .memory_budget_per_thread(options.memory_per_thread.max(15 << 20))
            .num_merge_threads(1)
            .build();
        let writer: IndexWriter = self
            .index
            .writer_with_options(writer_options)
            .map_err(|e| self.tantivy_err(e))?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        Ok(PoolWriter {
            pool: self,
            writer,
            added: 0,
        })
    }

    /// Bytes of the pool's files on disk.
    pub fn size_on_disk(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// How many documents [`LexicalPool::delete_documents_except`] would delete.
    pub fn count_documents_except(&self, live: &KeySet) -> Result<u64, LexicalError> {
        let searcher = self.reader.searcher();
        let mut dead = 0u64;
        for segment in searcher.segment_readers() {
            let keys = segment
                .fast_fields()
                .u64(FIELD_NAMES[0])
                .map_err(|e| self.tantivy_err(e))?;
            let alive = segment.alive_bitset();
            dead += (0..segment.max_doc())
                .filter(|&doc| !alive.is_some_and(|alive| alive.is_deleted(doc)))
                .filter(|&doc| !keys.first(doc).is_some_and(|key| live.contains(&key)))
                .count() as u64;
        }
        Ok(dead)
    }

    /// Deletes every document whose chunk key `live` lacks, then merges the segments that held
    /// any, so they are gone from disk and from every later view, not just hidden. Returns how
    /// many documents went. The caller holds the pool's write lock. Readers that opened the pool
    /// before keep their searcher (and its files) and answer as before; a later open of a
    /// snapshot whose chunks went indexes them again, like any chunks the pool lacks.
    pub fn delete_documents_except(&self, live: &KeySet) -> Result<u64, LexicalError> {
        self.reload()?;
        let before = self.num_docs();
        let mut writer: IndexWriter = self
            .index
            .writer_with_options(
                IndexWriterOptions::builder()
                    .num_worker_threads(1)
                    .memory_budget_per_thread(15 << 20)
                    .num_merge_threads(1)
                    .build(),
            )
            .map_err(|e| self.tantivy_err(e))?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        writer
            .delete_query(Box::new(NotInKeys {
                live: std::sync::Arc::new(live.clone()),
            }))
            .map_err(|e| self.tantivy_err(e))?;
        writer.commit().map_err(|e| self.tantivy_err(e))?;
        let with_deletes: Vec<_> = self
            .index
            .searchable_segment_metas()
            .map_err(|e| self.tantivy_err(e))?
            .iter()
            .filter(|meta| meta.has_deletes())
            .map(|meta| meta.id())
            .collect();
        if !with_deletes.is_empty() {
            writer
                .merge(&with_deletes)
                .wait()
                .map_err(|e| self.tantivy_err(e))?;
        }
        writer
            .wait_merging_threads()
            .map_err(|e| self.tantivy_err(e))?;
        self.reload()?;
        Ok(before.saturating_sub(self.num_docs()))
    }

    /// The view of one snapshot: `chunks` maps the key of each of the snapshot's chunks to its
    /// chunk id. Keys the pool lacks are listed by [`PoolView::missing_chunks`].
    pub fn view(&self, chunks: &KeyMap<u32>) -> Result<PoolView, LexicalError> {
        self.view_with(chunks, None)
    }

    /// [`LexicalPool::view`] over this pool and an `overlay` (an in-memory pool): a chunk is
    /// taken from the first that has it.
    pub fn view_with(
        &self,
        chunks: &KeyMap<u32>,
        overlay: Option<&LexicalPool>,
    ) -> Result<PoolView, LexicalError> {
        let mut found = vec![
            false;
            chunks
                .values()
                .map(|&id| id as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        let mut num_docs = 0u64;
        let mut total_tokens = [0u64; 4];
        let mut parts = Vec::new();
        for pool in std::iter::once(self).chain(overlay) {
            let searcher = pool.reader.searcher();
            let mut doc_chunk = Vec::with_capacity(searcher.segment_readers().len());
            let mut full_segments = Vec::new();
            for segment in searcher.segment_readers() {
                let fast = segment.fast_fields();
                let column = |name: &str| fast.u64(name).map_err(|e| pool.tantivy_err(e));
                let keys = column(FIELD_NAMES[0])?;
                let token_columns = [
                    column(FIELD_NAMES[4])?,
                    column(FIELD_NAMES[5])?,
                    column(FIELD_NAMES[6])?,
                    column(FIELD_NAMES[8])?,
                ];
                let mut map = vec![NOT_IN_SNAPSHOT; segment.max_doc() as usize];
                let mut mapped = 0u32;
                let alive = segment.alive_bitset();
                for doc in 0..segment.max_doc() {
                    // A document deleted by a garbage collection whose merge has not run yet.
                    if alive.is_some_and(|alive| alive.is_deleted(doc)) {
                        continue;
                    }
                    let Some(key) = keys.first(doc) else {
                        return Err(LexicalError::Corrupt {
                            path: pool.dir.display().to_string(),
                            message: format!("document {doc} lacks its chunk key"),
                        });
                    };
                    let Some(&chunk_id) = chunks.get(&key) else {
                        continue;
                    };
                    // A chunk indexed twice (concurrent writers never do it under the pool lock,
                    // but the view must not count it twice if it happened).
                    if std::mem::replace(&mut found[chunk_id as usize], true) {
                        continue;
                    }
                    map[doc as usize] = chunk_id;
                    mapped += 1;
                    num_docs += 1;
                    for (total, column) in total_tokens.iter_mut().zip(&token_columns) {
                        *total += column.first(doc).unwrap_or(0);
                    }
                }
                full_segments.push(mapped == segment.max_doc());
                doc_chunk.push(map);
            }
            parts.push(ViewPart {
                searcher,
                doc_chunk,
                full_segments,
            });
        }
        let mut missing: Vec<u64> = chunks
            .iter()
            .filter(|&(_, &id)| !found[id as usize])
            .map(|(&key, _)| key)
            .collect();
        missing.sort_unstable();
        Ok(PoolView {
            parts,
            fields: self.fields,
            num_docs,
            total_tokens,
            missing,
            dir: self.dir.clone(),
        })
    }
}

/// The documents whose chunk key is not in `live` (read from the fast field): what
/// [`LexicalPool::delete_documents_except`] deletes. A query only to delete with: it does not
/// score or explain.
#[derive(Clone, Debug)]
struct NotInKeys {
    live: std::sync::Arc<KeySet>,
}

impl tantivy::query::Query for NotInKeys {
    fn weight(
        &self,
        _: tantivy::query::EnableScoring<'_>,
    ) -> tantivy::Result<Box<dyn tantivy::query::Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl tantivy::query::Weight for NotInKeys {
    fn scorer(
        &self,
        reader: &tantivy::SegmentReader,
        boost: tantivy::Score,
    ) -> tantivy::Result<Box<dyn tantivy::query::Scorer>> {
        let keys = reader.fast_fields().u64(FIELD_NAMES[0])?;
        let mut dead = tantivy::BitSet::with_max_value(reader.max_doc());
        for doc in 0..reader.max_doc() {
            // A document without a key is no snapshot's either.
            if !keys.first(doc).is_some_and(|key| self.live.contains(&key)) {
                dead.insert(doc);
            }
        }
        Ok(Box::new(tantivy::query::ConstScorer::new(
            tantivy::query::BitSetDocSet::from(dead),
            boost,
        )))
    }

    fn explain(
        &self,
        _: &tantivy::SegmentReader,
        _: DocId,
    ) -> tantivy::Result<tantivy::query::Explanation> {
        Err(tantivy::TantivyError::InvalidArgument(
            "a deletion query explains nothing".into(),
        ))
    }
}

/// Adds documents to a pool; nothing is visible until [`PoolWriter::commit`], and dropping the
/// writer without committing leaves the pool as it was.
pub struct PoolWriter<'p> {
    pool: &'p LexicalPool,
    writer: IndexWriter,
    added: u64,
}

impl PoolWriter<'_> {
    /// Queues `docs` (documents are prepared in parallel). Returns how many were queued.
    pub fn add(&mut self, docs: &[ChunkDoc<'_>]) -> Result<u64, LexicalError> {
        let f = self.pool.fields;
        let documents: Vec<TantivyDocument> = docs
            .par_iter()
            .map(|doc| {
                let mut document = TantivyDocument::new();
                document.add_u64(f.chunk_key, doc.chunk_key);
                document.add_text(f.path, doc.path);
                document.add_text(f.symbols, doc.symbols);
                document.add_text(f.body, doc.body);
                document.add_u64(f.path_tokens, count_tokens(doc.path));
                document.add_u64(f.symbol_tokens, count_tokens(doc.symbols));
                document.add_u64(f.body_tokens, count_tokens(doc.body));
                // Symbols and body are two values of the CJK field (no bigram spans them); most
                // chunks have no CJK text and no value.
                let (in_symbols, in_body) =
                    (count_cjk_bigrams(doc.symbols), count_cjk_bigrams(doc.body));
                document.add_u64(f.cjk_tokens, in_symbols + in_body);
                if in_symbols > 0 {
                    document.add_text(f.cjk, doc.symbols);
                }
                if in_body > 0 {
                    document.add_text(f.cjk, doc.body);
                }
                document
            })
            .collect();
        for document in documents {
            self.writer
                .add_document(document)
                .map_err(|e| self.pool.tantivy_err(e))?;
        }
        self.added += docs.len() as u64;
        Ok(docs.len() as u64)
    }

    /// Commits atomically, merges segments when there are too many, and makes the new documents
    /// visible to the pool's reader. Returns the number of documents added.
    pub fn commit(mut self) -> Result<u64, LexicalError> {
        let pool = self.pool;
        if self.added == 0 {
            return Ok(0);
        }
        self.writer.commit().map_err(|e| pool.tantivy_err(e))?;
        let mut segments = pool
            .index
            .searchable_segment_metas()
            .map_err(|e| pool.tantivy_err(e))?;
        if segments.len() > MAX_SEGMENTS {
            let largest = segments
                .iter()
                .map(|meta| meta.max_doc())
                .max()
                .unwrap_or(0);
            let small: Vec<_> = segments
                .iter()
                .filter(|meta| meta.max_doc() < largest / 4)
                .map(|meta| meta.id())
                .collect();
            // Without enough small segments (many similar ones), all but the largest merge.
            let to_merge = if small.len() >= 2 {
                small
            } else {
                segments.sort_by_key(|meta| std::cmp::Reverse(meta.max_doc()));
                segments[1..].iter().map(|meta| meta.id()).collect()
            };
            self.writer
                .merge(&to_merge)
                .wait()
                .map_err(|e| pool.tantivy_err(e))?;
        }
        self.writer
            .wait_merging_threads()
            .map_err(|e| pool.tantivy_err(e))?;
        pool.reload()?;
        Ok(self.added)
    }
}

/// One snapshot's view of a pool (and of an overlay). Cheap to query from many threads.
pub struct PoolView {
    /// The pool, then the overlay if any.
    parts: Vec<ViewPart>,
    fields: Fields,
    num_docs: u64,
    /// Exact token totals of the snapshot's documents: path, symbols, body, CJK bigrams.
    total_tokens: [u64; 4],
    missing: Vec<u64>,
    dir: PathBuf,
}

/// The documents one index contributes to a view.
struct ViewPart {
    searcher: Searcher,
    /// Per segment: document → snapshot chunk id, or [`NOT_IN_SNAPSHOT`].
    doc_chunk: Vec<Vec<u32>>,
    /// Per segment: every document belongs to the snapshot (document frequencies come straight
    /// from the term dictionary).
    full_segments: Vec<bool>,
}

impl PoolView {
    /// Keys of the snapshot's chunks that the pool lacks (sorted).
    pub fn missing_chunks(&self) -> &[u64] {
        &self.missing
    }

    /// Chunks of the snapshot present in the pool.
    pub fn num_docs(&self) -> u64 {
        self.num_docs
    }

    fn tantivy_err(&self, source: tantivy::TantivyError) -> LexicalError {
        LexicalError::Tantivy {
            path: self.dir.display().to_string(),
            source,
        }
    }

    /// The snapshot's token count in `field` (its documents' field lengths summed).
    fn total_tokens_of(&self, field: Field) -> u64 {
        let f = self.fields;
        if field == f.path {
            self.total_tokens[0]
        } else if field == f.symbols {
            self.total_tokens[1]
        } else if field == f.body {
            self.total_tokens[2]
        } else if field == f.cjk {
            self.total_tokens[3]
        } else {
            0
        }
    }

    /// The view's segments, the pool's then the overlay's, each with its document → chunk map.
    fn segments(&self) -> impl Iterator<Item = (&tantivy::SegmentReader, &[u32])> + '_ {
        self.parts.iter().flat_map(|part| {
            part.searcher
                .segment_readers()
                .iter()
                .zip(part.doc_chunk.iter().map(Vec::as_slice))
        })
    }

    /// `visit(segment position, document, chunk id, term frequency)` for every document of the
    /// snapshot that holds `term`, segment by segment ([`PoolView::segments`]) in document order;
    /// the other snapshots' documents are skipped.
    fn snapshot_postings(
        &self,
        term: &Term,
        mut visit: impl FnMut(usize, DocId, u32, u32),
    ) -> Result<(), LexicalError> {
        for (s, (segment, map)) in self.segments().enumerate() {
            let inverted = segment
                .inverted_index(term.field())
                .map_err(|e| self.tantivy_err(e))?;
            let Some(mut postings) = inverted
                .read_postings(term, IndexRecordOption::WithFreqs)
                .map_err(|e| self.tantivy_err(e.into()))?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                let chunk = map[doc as usize];
                if chunk != NOT_IN_SNAPSHOT {
                    visit(s, doc, chunk, postings.term_freq());
                }
                doc = postings.advance();
            }
        }
        Ok(())
    }

    /// Every chunk of the snapshot whose body holds `token`, with the token's frequency in it, in
    /// chunk-id order. What ranked search needs to score whole files (a file's term frequency is
    /// the sum over its chunks).
    pub fn body_postings(&self, token: &str) -> Result<Vec<(u32, u32)>, LexicalError> {
        let term = Term::from_field_text(self.fields.body, token);
        let mut out = Vec::new();
        self.snapshot_postings(&term, |_, _, chunk, term_freq| out.push((chunk, term_freq)))?;
        out.sort_unstable();
        Ok(out)
    }

    /// The first `limit` distinct body tokens (in byte order) starting with `prefix` that occur
    /// in the snapshot: the vocabulary a query word can be expanded to (`compos` gives `compose`,
    /// `composed`, `composition`).
    ///
    /// The answer depends on the snapshot alone, never on what else the pool holds or how its
    /// segments split the documents: tokens only other snapshots use are skipped without counting,
    /// and each segment is read until it has given `limit` of the snapshot's tokens (the first
    /// `limit` overall are among them).
    pub fn body_tokens_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<String>, LexicalError> {
        let mut found: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut upper = prefix.as_bytes().to_vec();
        // The first byte string after every string with this prefix.
        while let Some(last) = upper.pop() {
            if last < u8::MAX {
                upper.push(last + 1);
                break;
            }
        }
        let segments = self.parts.iter().flat_map(|part| {
            part.searcher
                .segment_readers()
                .iter()
                .zip(&part.doc_chunk)
                .zip(&part.full_segments)
        });
        for ((segment, map), &full) in segments {
            let inverted = segment
                .inverted_index(self.fields.body)
                .map_err(|e| self.tantivy_err(e))?;
            let mut range = inverted.terms().range().ge(prefix.as_bytes());
            if !upper.is_empty() {
                range = range.lt(&upper);
            }
            let mut stream = range
                .into_stream()
                .map_err(|e| self.tantivy_err(e.into()))?;
            let mut in_snapshot_here = 0;
            while in_snapshot_here < limit && stream.advance() {
                let Ok(token) = std::str::from_utf8(stream.key()) else {
                    continue;
                };
                let in_snapshot = full || {
                    let mut postings = inverted
                        .read_postings_from_terminfo(stream.value(), IndexRecordOption::Basic)
                        .map_err(|e| self.tantivy_err(e.into()))?;
                    let mut doc = postings.doc();
                    while doc != TERMINATED && map[doc as usize] == NOT_IN_SNAPSHOT {
                        doc = postings.advance();
                    }
                    doc != TERMINATED
                };
                if in_snapshot {
                    in_snapshot_here += 1;
                    found.insert(token.to_owned());
                }
            }
        }
        Ok(found.into_iter().take(limit).collect())
    }

    /// The query's clauses, in the order their scores are added: each token in the path,
    /// symbols and body fields, then the CJK bigrams; a clause without weight is left out.
    fn clauses(&self, query: &LexicalQuery, config: &LexicalConfig) -> Vec<(Term, f32)> {
        let f = self.fields;
        let mut clauses = Vec::new();
        let mut add = |field: Field, token: &str, boost: f32| {
            if boost > 0.0 {
                clauses.push((Term::from_field_text(field, token), boost));
            }
        };
        for (token, weight) in &query.tokens {
            for (field, boost) in [
                (f.path, config.path_boost),
                (f.symbols, config.symbol_boost),
                (f.body, config.body_boost),
            ] {
                add(field, token, weight * boost);
            }
        }
        for (bigram, weight) in &query.cjk_bigrams {
            add(f.cjk, bigram, weight * config.body_boost);
        }
        clauses
    }

    /// The best `limit` chunks for `query` among those `accept` lets through, as
    /// `(chunk id, score)`, best first (ties by chunk id). Chunks with no matching token are never
    /// returned.
    pub fn search(
        &self,
        query: &LexicalQuery,
        config: &LexicalConfig,
        limit: usize,
        accept: &dyn Fn(u32) -> bool,
    ) -> Result<Vec<(u32, f32)>, LexicalError> {
        if limit == 0 || self.num_docs == 0 || query.is_empty() {
            return Ok(Vec::new());
        }
        let clauses = self.clauses(query, config);
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        // Term at a time: each clause's postings are read once, for the snapshot's documents
        // only (the chunks of the pool's other snapshots are skipped before any work), which
        // gives the clause's snapshot document frequency and then its scores. The sums are
        // tantivy's own: per document, clause scores of the same `Bm25Weight` added in clause
        // order from zero, as its union of term scorers adds them (tested against a
        // `BooleanQuery` of the same clauses).
        let segments: Vec<(&tantivy::SegmentReader, &[u32])> = self.segments().collect();
        let mut scores: Vec<Vec<f32>> = segments
            .iter()
            .map(|(segment, _)| vec![0.0; segment.max_doc() as usize])
            .collect();
        // Per clause: the snapshot's documents that hold its term, with the term's frequency,
        // and where each segment's run of them starts.
        let mut found: Vec<(DocId, u32)> = Vec::new();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let total_docs = self.num_docs;
        for (term, boost) in &clauses {
            let field = term.field();
            found.clear();
            runs.clear();
            self.snapshot_postings(term, |s, doc, _, term_freq| {
                if runs.last().is_none_or(|&(last, _)| last != s) {
                    runs.push((s, found.len()));
                }
                found.push((doc, term_freq));
            })?;
            if found.is_empty() {
                continue;
            }
            // `Bm25Weight::for_terms` of one term, from the snapshot's statistics.
            let average_fieldnorm = self.total_tokens_of(field) as f32 / total_docs as f32;
            let weight =
                Bm25Weight::for_one_term(found.len() as u64, total_docs, average_fieldnorm)
                    .boost_by(*boost);
            for (r, &(s, from)) in runs.iter().enumerate() {
                let to = runs.get(r + 1).map_or(found.len(), |&(_, next)| next);
                let segment = segments[s].0;
                let norms = segment
                    .fieldnorms_readers()
                    .get_field(field)
                    .map_err(|e| self.tantivy_err(e))?
                    .unwrap_or_else(|| FieldNormReader::constant(segment.max_doc(), 1));
                let segment_scores = &mut scores[s];
                for &(doc, term_freq) in &found[from..to] {
                    segment_scores[doc as usize] +=
                        weight.score(norms.fieldnorm_id(doc), term_freq);
                }
            }
        }
        // Min-heap of the best hits so far (its top is the worst of them). Every matching
        // document is scored (issue queries have ~100 terms × 3 fields, for which block-WAND's
        // per-step sorting of scorers costs more than it prunes, measured on django), and ties
        // break by chunk id whatever the pool's segment layout. Sized by what can be found,
        // never by what was asked: a limit is the caller's number.
        let mut heap: BinaryHeap<Hit> =
            BinaryHeap::with_capacity(limit.min(self.num_docs as usize) + 1);
        for ((_, map), segment_scores) in segments.iter().zip(&scores) {
            for (doc, &score) in segment_scores.iter().enumerate() {
                if score <= 0.0 {
                    continue;
                }
                let hit = Hit {
                    score,
                    chunk: map[doc],
                };
                if heap.len() >= limit && heap.peek().is_some_and(|worst| &hit >= worst) {
                    continue;
                }
                if accept(hit.chunk) {
                    heap.push(hit);
                    if heap.len() > limit {
                        heap.pop();
                    }
                }
            }
        }
        let mut hits: Vec<(u32, f32)> = heap.into_iter().map(|h| (h.chunk, h.score)).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(hits)
    }
}

/// Heap entry ordered so that `BinaryHeap` pops the *worst* hit (lowest score, then highest chunk
/// id) first.
#[derive(PartialEq)]
struct Hit {
    score: f32,
    chunk: u32,
}

impl Eq for Hit {}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.chunk.cmp(&other.chunk))
    }
}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::query::{
        Bm25StatisticsProvider, BooleanQuery, BoostQuery, EnableScoring, Occur, Query, TermQuery,
    };

    /// BM25 statistics of the viewed snapshot alone, for tantivy's own scoring: document
    /// frequencies counted by a pass of their own over the postings.
    struct SnapshotStatistics<'a> {
        view: &'a PoolView,
    }

    impl Bm25StatisticsProvider for SnapshotStatistics<'_> {
        fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
            Ok(self.view.total_tokens_of(field))
        }

        fn total_num_docs(&self) -> tantivy::Result<u64> {
            Ok(self.view.num_docs)
        }

        fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
            let mut n = 0u64;
            for part in &self.view.parts {
                for (ord, segment) in part.searcher.segment_readers().iter().enumerate() {
                    let inverted = segment.inverted_index(term.field())?;
                    let Some(mut postings) =
                        inverted.read_postings(term, IndexRecordOption::Basic)?
                    else {
                        continue;
                    };
                    let map = &part.doc_chunk[ord];
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        if map[doc as usize] != NOT_IN_SNAPSHOT {
                            n += 1;
                        }
                        doc = postings.advance();
                    }
                }
            }
            Ok(n)
        }
    }

    /// What `PoolView::search` computed before it scored term at a time: tantivy's union of the
    /// same clauses as boosted term queries, every matching document through `for_each`.
    fn search_by_union(view: &PoolView, query: &LexicalQuery) -> Vec<(u32, f32)> {
        let clauses: Vec<(Occur, Box<dyn Query>)> = view
            .clauses(query, &LexicalConfig::default())
            .into_iter()
            .map(|(term, boost)| {
                let term_query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                let boosted: Box<dyn Query> =
                    Box::new(BoostQuery::new(Box::new(term_query), boost));
                (Occur::Should, boosted)
            })
            .collect();
        let stats = SnapshotStatistics { view };
        let weight = BooleanQuery::new(clauses)
            .weight(EnableScoring::enabled_from_statistics_provider(
                &stats,
                &view.parts[0].searcher,
            ))
            .unwrap();
        let mut hits = Vec::new();
        for part in &view.parts {
            for (segment, map) in part.searcher.segment_readers().iter().zip(&part.doc_chunk) {
                weight
                    .for_each(segment, &mut |doc, score| {
                        let chunk = map[doc as usize];
                        if chunk != NOT_IN_SNAPSHOT && score > 0.0 {
                            hits.push((chunk, score));
                        }
                    })
                    .unwrap();
            }
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits
    }

    /// A pool of two versions of a small project, added in two commits (two segments), and the
    /// view of the second: one document of the first version is not in it.
    fn two_versions() -> (LexicalPool, PoolView) {
        let bodies = [
            "def render_page(request, template_name):\n    context = {}\n    return render(request, template_name, context)",
            "class QuerySet:\n    def bulk_create(self, objs, batch_size=None):\n        return self._insert(objs, batch_size)",
            "def slugify(value, allow_unicode=False):\n    value = str(value)\n    return value.lower()",
            "def render_page(request, template_name):\n    context = {'page': template_name}\n    return render(request, template_name, context)",
            "def render_error(request):\n    return render_page(request, 'error.html')",
        ];
        let paths = [
            "app/views.py",
            "app/query.py",
            "app/text.py",
            "app/views.py",
            "app/views.py",
        ];
        let pool = LexicalPool::in_memory().unwrap();
        for range in [0..3, 3..5] {
            let docs: Vec<ChunkDoc<'_>> = range
                .map(|i| ChunkDoc {
                    chunk_key: i as u64 + 1,
                    path: paths[i],
                    symbols: "",
                    body: bodies[i],
                })
                .collect();
            let options = WriterOptions {
                threads: 1,
                ..WriterOptions::default()
            };
            let mut writer = pool.writer(&options, docs.len()).unwrap();
            writer.add(&docs).unwrap();
            writer.commit().unwrap();
        }
        // The second version: the first `render_page` (key 1) replaced by keys 4 and 5.
        let chunks: KeyMap<u32> = [(2, 0), (3, 1), (4, 2), (5, 3)].into_iter().collect();
        let view = pool.view(&chunks).unwrap();
        (pool, view)
    }

    #[test]
    fn term_at_a_time_scores_equal_tantivys_union_to_the_last_bit() {
        let (_pool, view) = two_versions();
        assert!(
            view.parts[0]
                .doc_chunk
                .iter()
                .flatten()
                .any(|&c| c == NOT_IN_SNAPSHOT)
        );
        let config = LexicalConfig::default();
        for text in [
            "render_page template context",
            "QuerySet bulk_create objs batch_size",
            "slugify unicode value lower",
            "render error page request",
            "nothing matches zzzz",
        ] {
            let query = LexicalQuery::from_text(text, &config);
            let expected = search_by_union(&view, &query);
            let got = view.search(&query, &config, 100, &|_| true).unwrap();
            assert_eq!(got.len(), expected.len(), "{text}");
            for ((chunk, score), (want_chunk, want_score)) in got.iter().zip(&expected) {
                assert_eq!(chunk, want_chunk, "{text}");
                assert_eq!(
                    score.to_bits(),
                    want_score.to_bits(),
                    "{text}: {score} vs {want_score}"
                );
            }
        }
    }
}
