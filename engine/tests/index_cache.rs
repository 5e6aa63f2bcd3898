//! Engine::open end to end on small fixture repositories written by the tests: lexical ranking,
//! cache reuse across snapshots, the stat fast path, corruption and version bumps, concurrent
//! builders, and the per-snapshot BM25 statistics of the shared pool.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};
use swex_engine::analysis::Language;
use swex_engine::formats::CACHE_FORMAT_VERSION;
use swex_engine::index::{Engine, EngineConfig, Progress, SearchFilters, SnapshotIndex, Stage};
use swex_engine::scan::DiagnosticKind;
use swex_engine::search::{DenseUse, SearchOptions};

const MODELS: &str = r#"from app.db import connection


class QuerySet:
    """A lazy database lookup."""

    def __init__(self, model):
        self.model = model

    def bulk_create(self, objs, batch_size=None):
        if not objs:
            return objs
        return connection.insert_many(self.model, objs, batch_size)

    def filter(self, **kwargs):
        return QuerySet(self.model)
"#;

const VIEWS: &str = r#"from app.models import QuerySet


def render_page(request, template_name):
    context = {"user": request.user}
    return template_name.format(**context)


def list_articles(request):
    return render_page(request, "articles.html")
"#;

const UTILS: &str = r#"import re
import unicodedata


def slugify(value, allow_unicode=False):
    value = str(value)
    if allow_unicode:
        value = unicodedata.normalize("NFKC", value)
    value = re.sub(r"[^\w\s-]", "", value.lower())
    return re.sub(r"[-\s]+", "-", value).strip("-_")
"#;

const NOTES: &str = "# Notes\n\nQueries are lazy. Templates are rendered by views.\n";

fn fixture() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("app/models.py", MODELS.as_bytes()),
        ("app/views.py", VIEWS.as_bytes()),
        ("app/utils.py", UTILS.as_bytes()),
        ("app/__init__.py", b""),
        ("docs/notes.md", NOTES.as_bytes()),
        ("static/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("data/latin1.txt", b"caf\xe9 cr\xe8me\n"),
    ]
}

fn write_repo(root: &Path, files: &[(&str, &[u8])]) {
    for (path, bytes) in files {
        let abs = root.join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(&abs, bytes).unwrap();
    }
}

/// Sets every file's mtime an hour back, as a checkout made earlier would have (files written
/// just now are "racy" for the stat fast path).
fn age_files(root: &Path) {
    for entry in walk(root) {
        age_file(&entry);
    }
}

fn age_file(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn config(cache: &Path) -> EngineConfig {
    support::test_config(cache)
}

fn engine(cache: &Path) -> Engine {
    Engine::new(config(cache))
}

/// `(path, start, end)` of the top hits.
fn top(index: &SnapshotIndex, text: &str, n: usize) -> Vec<(String, u32, u32)> {
    index
        .search_text(text, n, &SearchFilters::default())
        .unwrap()
        .into_iter()
        .map(|h| (h.path, h.start, h.end))
        .collect()
}

fn top_path(index: &SnapshotIndex, text: &str) -> String {
    top(index, text, 1)
        .into_iter()
        .next()
        .map(|(p, _, _)| p)
        .unwrap_or_default()
}

#[test]
fn lexical_search_ranks_the_obvious_chunk_first() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let index = engine(cache.path()).open(repo.path()).unwrap();
    for (query, expected) in [
        (
            "QuerySet.bulk_create() returns nothing when objs is empty",
            "app/models.py",
        ),
        ("slugify should keep unicode letters", "app/utils.py"),
        ("render_page ignores the template", "app/views.py"),
        ("bug in views.py", "app/views.py"),
        (
            "Traceback:\n  File \"/srv/site-packages/app/utils.py\", line 9, in slugify\n",
            "app/utils.py",
        ),
        ("lazy queries in the notes", "docs/notes.md"),
    ] {
        assert_eq!(top_path(&index, query), expected, "query {query:?}");
    }
    // Filters restrict results.
    let only_docs = SearchFilters {
        path_glob: Some(swex_text::Glob::new("docs/**").unwrap()),
        ..SearchFilters::default()
    };
    let hits = index
        .search_text("render_page views", 5, &only_docs)
        .unwrap();
    assert!(hits.iter().all(|h| h.path.starts_with("docs/")), "{hits:?}");
    let only_python = SearchFilters {
        languages: vec![Language::Python],
        ..SearchFilters::default()
    };
    let hits = index.search_text("lazy", 5, &only_python).unwrap();
    assert!(hits.iter().all(|h| h.path.ends_with(".py")), "{hits:?}");
    // No matching token: no hits, not arbitrary ones.
    assert!(
        index
            .search_text("zzzqqq", 5, &SearchFilters::default())
            .unwrap()
            .is_empty()
    );
    // A limit is a caller's number, not a size: the largest one allocates nothing by it.
    let all = top(&index, "slugify", 1000);
    assert!(!all.is_empty());
    for limit in [1usize << 32, usize::MAX] {
        assert_eq!(top(&index, "slugify", limit), all, "limit {limit}");
    }
}

/// Issues written in other scripts find the code that uses their words: a Cyrillic word through
/// the code fields, Chinese, Japanese and Korean phrases through their bigrams (a tokenizer that
/// keeps ASCII words only finds none of them).
#[test]
fn whole_file_search_ranks_the_files_that_hold_most_of_the_words() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    // `scattered.py` holds every word of the query, one per function; `focused.py` has one
    // function that holds two of them: the best chunk is `focused.py`'s, the best file
    // `scattered.py`.
    let scattered = "def first():\n    return retry\n\n\ndef second():\n    return backoff\n\n\ndef third():\n    return jitter\n";
    let focused = "def delay():\n    return retry + backoff\n\n\ndef other():\n    return 1\n\n\ndef more():\n    return 2\n";
    let mut files: Vec<(String, String)> = vec![
        ("net/scattered.py".into(), scattered.into()),
        ("net/focused.py".into(), focused.into()),
        // Two identical files: ties go by path.
        ("copies/b.py".into(), "def b():\n    return jitter\n".into()),
        ("copies/a.py".into(), "def a():\n    return jitter\n".into()),
    ];
    for i in 0..8 {
        files.push((
            format!("other/m{i}.py"),
            format!("def f{i}():\n    return {i}\n"),
        ));
    }
    let files: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    write_repo(repo.path(), &files);
    let index = engine(cache.path()).open(repo.path()).unwrap();
    let query = index.query_of_text("retry backoff jitter");
    let all = SearchFilters::default();
    let chunks = index.lexical_search(&query, 1, &all).unwrap();
    assert_eq!(chunks[0].path, "net/focused.py");
    let hits = index.file_lexical_search(&query, 10, &all).unwrap();
    let order: Vec<(&str, u32)> = hits.iter().map(|h| (h.path.as_str(), h.lines)).collect();
    assert_eq!(
        order,
        [
            ("net/scattered.py", 10),
            ("net/focused.py", 10),
            ("copies/a.py", 2),
            ("copies/b.py", 2),
        ]
    );
    assert!(
        hits.windows(2)
            .all(|w| w[0].score >= w[1].score && w[1].score > 0.0)
    );
    assert_eq!(hits[2].score, hits[3].score);
    // The limit and the path filter apply; files without a word of the query are not hits.
    assert_eq!(index.file_lexical_search(&query, 1, &all).unwrap().len(), 1);
    let copies = SearchFilters {
        path_glob: Some(swex_text::Glob::new("copies/**").unwrap()),
        ..SearchFilters::default()
    };
    let paths: Vec<String> = index
        .file_lexical_search(&query, 10, &copies)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(paths, ["copies/a.py", "copies/b.py"]);
}

#[test]
fn issues_in_other_scripts_find_their_words() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut files = fixture();
    files.extend([
        (
            "app/billing.py",
            "def выставить_счёт(заказ):\n    \"\"\"Выставляет счёт по заказу.\"\"\"\n    return заказ.сумма\n"
                .as_bytes(),
        ),
        (
            "app/db_pool.py",
            "# 数据库连接池：连接失败时重试三次\ndef connect(retries=3):\n    return retries\n"
                .as_bytes(),
        ),
        (
            "app/ja.py",
            "# ファイルを読み込めない場合は例外を送出する\ndef load(path):\n    return open(path)\n"
                .as_bytes(),
        ),
        (
            "app/ko.py",
            "# 사용자 인증에 실패하면 로그인 페이지로 이동\ndef login():\n    return None\n"
                .as_bytes(),
        ),
    ]);
    write_repo(repo.path(), &files);
    let index = engine(cache.path()).open(repo.path()).unwrap();
    for (query, expected) in [
        ("Ошибка: выставить_счёт не работает", "app/billing.py"),
        ("счёт выставляется неверно по заказу", "app/billing.py"),
        ("数据库连接失败以后没有重试", "app/db_pool.py"),
        ("ファイルを読み込めないときに落ちる", "app/ja.py"),
        ("인증에 실패하면 오류", "app/ko.py"),
    ] {
        assert_eq!(top_path(&index, query), expected, "query {query:?}");
    }
    // CJK text does not change what an English query finds.
    assert_eq!(
        top_path(
            &index,
            "QuerySet.bulk_create() returns nothing when objs is empty"
        ),
        "app/models.py"
    );
}

#[test]
fn snapshot_api_files_lines_grep_and_diagnostics() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let index = engine(cache.path()).open(repo.path()).unwrap();
    let paths: Vec<&str> = index.files().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "app/__init__.py",
            "app/models.py",
            "app/utils.py",
            "app/views.py",
            "data/latin1.txt",
            "docs/notes.md"
        ]
    );
    let models = index.file("app/models.py").unwrap();
    assert_eq!(models.language, Some(Language::Python));
    assert_eq!(models.line_count, MODELS.lines().count() as u32);
    assert_eq!(
        index.read_lines("app/models.py", 4, 5).unwrap(),
        ["class QuerySet:", "    \"\"\"A lazy database lookup.\"\"\""]
    );
    assert_eq!(
        index.read_lines("app/models.py", 15, 99).unwrap(),
        [
            "    def filter(self, **kwargs):",
            "        return QuerySet(self.model)"
        ]
    );
    assert!(index.read_lines("app/models.py", 5, 4).unwrap().is_empty());
    assert!(index.read_lines("nope.py", 1, 2).is_err());

    let kinds: Vec<(&str, DiagnosticKind)> = index
        .diagnostics()
        .iter()
        .map(|d| (d.path.as_str(), d.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("data/latin1.txt", DiagnosticKind::InvalidUtf8),
            ("static/logo.png", DiagnosticKind::Binary)
        ]
    );

    let hits = index.grep(r"def \w+\(request", Some("*.py"), 10).unwrap();
    let found: Vec<(&str, u32)> = hits.iter().map(|h| (h.path.as_str(), h.line)).collect();
    assert_eq!(found, [("app/views.py", 4), ("app/views.py", 9)]);
    assert_eq!(index.grep("return", None, 2).unwrap().len(), 2);
    assert!(index.grep("(", None, 1).is_err());

    assert_eq!(
        index.resolve_path("/usr/lib/python3/site-packages/app/views.py"),
        ["app/views.py"]
    );
    assert_eq!(index.resolve_path("utils.py"), ["app/utils.py"]);
    assert!(index.resolve_path("missing.py").is_empty());

    // Every chunk id maps back to a chunk of its file, with its text.
    let mut covered = 0;
    for id in 0..index.num_chunks() {
        let (path, chunk) = index.chunk(id).unwrap();
        assert!(index.chunks_of(path).unwrap().contains(chunk));
        let text = index.chunk_text(id).unwrap();
        assert_eq!(text.split('\n').count() as u32, chunk.end - chunk.start + 1);
        covered += 1;
    }
    assert_eq!(covered as usize, index.stats().chunks);
    assert!(index.chunk(index.num_chunks()).is_none());
}

#[test]
fn definitions_and_graph() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let index = engine(cache.path()).open(repo.path()).unwrap();
    assert!(!index.graph_is_built());
    let found: Vec<(String, u32, u32, String)> = index
        .definitions("QuerySet.bulk_create")
        .into_iter()
        .map(|d| (d.path, d.start, d.end, d.qualified_name))
        .collect();
    assert_eq!(
        found,
        [(
            "app/models.py".to_string(),
            10,
            13,
            "QuerySet.bulk_create".to_string()
        )]
    );
    assert_eq!(index.definitions("slugify").len(), 1);
    assert!(index.definitions("nothing_like_this").is_empty());
    // Name look-ups use the index's own definition table, not the (costlier) graph ...
    assert!(!index.graph_is_built());
    // ... and answer exactly what the graph answers, for bare, qualified, module-qualified and
    // unknown names in every spelling.
    let graph = index.graph();
    let queries = [
        "QuerySet",
        "bulk_create",
        "QuerySet.bulk_create",
        "QuerySet::bulk_create",
        "QuerySet#filter",
        "models.QuerySet.filter",
        "app.models.QuerySet.__init__",
        "other.QuerySet.filter",
        "render_page",
        "views.render_page",
        "slugify",
        "utils.slugify",
        "QuerySet.",
        "",
        "nothing_like_this",
    ];
    for query in queries {
        let from_index: Vec<(String, u32, String)> = index
            .definitions(query)
            .into_iter()
            .map(|d| (d.path, d.start, d.qualified_name))
            .collect();
        let from_graph: Vec<(String, u32, String)> = graph
            .definitions_named(query)
            .into_iter()
            .map(|id| {
                let node = graph.node(id);
                (node.path.clone(), node.start, node.qualified_name.clone())
            })
            .collect();
        assert_eq!(from_index, from_graph, "{query:?}");
    }
    assert!(!index.definitions("models.QuerySet.filter").is_empty());
    assert!(index.definitions("other.QuerySet.filter").is_empty());
    // views.py imports models.py.
    let views = graph.file_node("app/views.py").unwrap();
    let imports: Vec<&str> = graph
        .neighbours(
            views,
            &[swex_engine::graph::EdgeKind::Imports],
            swex_engine::graph::Direction::Outgoing,
        )
        .into_iter()
        .map(|(id, _)| graph.node(id).path.as_str())
        .collect();
    assert_eq!(imports, ["app/models.py"]);
    // Definition chunks carry names (a short class is one chunk; its methods are in its symbols).
    let hit = &index
        .search_text("bulk_create batch_size", 1, &SearchFilters::default())
        .unwrap()[0];
    assert_eq!(
        (hit.path.as_str(), hit.start, hit.end, hit.name.as_deref()),
        ("app/models.py", 4, 16, Some("QuerySet"))
    );
}

#[test]
fn second_snapshot_reanalyses_and_reindexes_only_the_changed_file() {
    let base = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let a = base.path().join("a");
    let b = base.path().join("b");
    write_repo(&a, &fixture());
    let mut changed = fixture();
    let new_utils = UTILS.replace("def slugify", "def make_slug");
    changed[2].1 = new_utils.as_bytes();
    write_repo(&b, &changed);

    let first = engine(cache.path()).open(&a).unwrap();
    let stats = first.stats();
    assert_eq!(stats.cache.analyses_computed, 6);
    assert_eq!(stats.pool.docs_added, stats.pool.snapshot_docs);
    assert!(stats.pool.snapshot_docs > 0);

    let second = engine(cache.path()).open(&b).unwrap();
    let stats = second.stats();
    assert_eq!(stats.cache.analyses_computed, 1, "{stats:#?}");
    assert_eq!(stats.cache.analyses_reused, 5);
    assert_eq!(stats.pool.id, first.stats().pool.id);
    // Only the chunks that changed get new documents (not the whole file).
    let keys_of = |index: &SnapshotIndex, path: &str| -> Vec<Option<u64>> {
        (0..index.num_chunks())
            .filter(|&id| index.chunk(id).unwrap().0 == path)
            .map(|id| index.chunk_key(id))
            .collect()
    };
    let old_keys = keys_of(&first, "app/utils.py");
    let changed_chunks = keys_of(&second, "app/utils.py")
        .into_iter()
        .flatten()
        .filter(|k| !old_keys.contains(&Some(*k)))
        .count() as u64;
    assert!(changed_chunks >= 1);
    assert!(changed_chunks < old_keys.iter().flatten().count() as u64);
    assert_eq!(stats.pool.docs_added, changed_chunks);

    // Each snapshot sees its own version only.
    assert_eq!(top_path(&second, "make_slug"), "app/utils.py");
    assert!(
        second
            .search_text("slugify", 5, &SearchFilters::default())
            .unwrap()
            .is_empty()
    );
    assert_eq!(top_path(&first, "slugify"), "app/utils.py");
    assert!(
        first
            .search_text("make_slug", 5, &SearchFilters::default())
            .unwrap()
            .is_empty()
    );

    // Reopening either costs nothing more.
    for root in [&a, &b] {
        let again = engine(cache.path()).open(root).unwrap();
        assert_eq!(again.stats().cache.analyses_computed, 0);
        assert_eq!(again.stats().pool.docs_added, 0);
    }
}

#[test]
fn warm_open_uses_the_stat_fast_path() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    age_files(repo.path());
    let cold = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(cold.stats().cache.files_read, 7);
    let warm = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(warm.stats().cache.stat_fast_path, 7, "{:#?}", warm.stats());
    assert_eq!(warm.stats().cache.files_read, 0);
    // Diagnostics of files not read again are still reported.
    assert_eq!(warm.diagnostics(), cold.diagnostics());

    // A changed file is noticed (its ctime moved even if its mtime is put back).
    let views = repo.path().join("app/views.py");
    fs::write(&views, VIEWS.replace("render_page", "draw_page")).unwrap();
    age_file(&views);
    let changed = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(changed.stats().cache.files_read, 1);
    assert_eq!(changed.stats().cache.analyses_computed, 1);
    assert_eq!(top_path(&changed, "draw_page"), "app/views.py");
}

/// A file indexed while its stamp was too fresh to trust (within the racy window) is read
/// again by the next open; once its stamp is old enough, that open records it, and the opens
/// after it trust it without reading.
#[test]
fn files_indexed_while_racy_are_trusted_once_old_enough() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    age_files(repo.path());
    // Modified 1.5 s ago: racy now (the window is 2 s), old enough half a second later.
    let fresh = repo.path().join("app/utils.py");
    fs::File::options()
        .write(true)
        .open(&fresh)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_millis(1500))
        .unwrap();
    let first = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(first.stats().cache.files_read, 7);
    std::thread::sleep(Duration::from_millis(1000));
    // The stamp is old enough now; this open may still read the file (the manifest was made
    // while it was racy), and records it.
    let second = engine(cache.path()).open(repo.path()).unwrap();
    assert!(
        second.stats().cache.files_read <= 1,
        "{:#?}",
        second.stats()
    );
    let third = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(
        third.stats().cache.files_read,
        0,
        "{:#?}",
        third.stats().cache
    );
    assert_eq!(third.stats().cache.stat_fast_path, 7);
}

/// Scores from the shared pool (with other snapshots' documents in it) equal those of an index
/// holding this snapshot alone.
#[test]
fn pool_view_scores_equal_a_fresh_index() {
    let base = tempfile::tempdir().unwrap();
    let shared_cache = tempfile::tempdir().unwrap();
    let fresh_cache = tempfile::tempdir().unwrap();
    let a = base.path().join("a");
    let b = base.path().join("b");
    write_repo(&a, &fixture());
    let mut changed = fixture();
    // A changed function (its old chunk stays in the shared pool) and an added one.
    let views = format!(
        "{}\n\ndef render_error(request):\n    return render_page(request, \"error.html\")\n",
        VIEWS.replace("context = {", "context = {\"page\": template_name, ")
    );
    changed[1].1 = views.as_bytes();
    changed.push((
        "app/extra.py",
        b"def render_extra():\n    return 'extra page template'\n",
    ));
    write_repo(&b, &changed);

    engine(shared_cache.path()).open(&a).unwrap();
    let pooled = engine(shared_cache.path()).open(&b).unwrap();
    let fresh = engine(fresh_cache.path()).open(&b).unwrap();
    assert!(pooled.stats().pool.docs_total > fresh.stats().pool.docs_total);
    for query in [
        "render_page template",
        "QuerySet bulk_create objs",
        "slugify unicode value",
        "page",
    ] {
        let p = pooled
            .search_text(query, 10, &SearchFilters::default())
            .unwrap();
        let f = fresh
            .search_text(query, 10, &SearchFilters::default())
            .unwrap();
        assert_eq!(p.len(), f.len(), "{query}");
        for (x, y) in p.iter().zip(&f) {
            assert_eq!(
                (&x.path, x.start, x.end),
                (&y.path, y.start, y.end),
                "{query}"
            );
            // Same statistics, same per-document arithmetic: equal to the last bit.
            assert_eq!(
                x.score.to_bits(),
                y.score.to_bits(),
                "{query}: {x:?} vs {y:?}"
            );
        }
    }
}

/// Two snapshots of one repository opened in either order into one cache (and one engine, as in
/// a benchmark run) answer exactly alike: which snapshots the shared pool held before, and how its
/// segments split the documents, changes no lexical hit, no score and no code search answer.
#[test]
fn answers_do_not_depend_on_the_order_snapshots_were_opened() {
    let base = tempfile::tempdir().unwrap();
    let a = base.path().join("a");
    let b = base.path().join("b");
    // `a` alone holds more than a vocabulary scan's worth of tokens that sort between `render`
    // and `rendered` (`renderaa` … `renderdz`); both hold `rendered` (in the notes).
    let filler: String = (b'a'..=b'd')
        .flat_map(|x| (b'a'..=b'z').map(move |y| format!("render{}{}", x as char, y as char)))
        .collect::<Vec<_>>()
        .join(" ");
    let old = format!("WORDS = \"{filler}\"\n");
    let mut files_a = fixture();
    files_a.push(("app/old.py", old.as_bytes()));
    write_repo(&a, &files_a);
    let mut files_b = fixture();
    let views = format!(
        "{}\n\ndef render_error(request):\n    return render_page(request, \"error.html\")\n",
        VIEWS.replace("context = {", "context = {\"page\": template_name, ")
    );
    files_b[1].1 = views.as_bytes();
    write_repo(&b, &files_b);
    age_files(base.path());

    let options = SearchOptions {
        dense: DenseUse::Off,
        ..SearchOptions::default()
    };
    let answers = |index: &SnapshotIndex| -> Vec<String> {
        let mut out = Vec::new();
        for query in [
            "render_page template",
            "QuerySet bulk_create objs",
            "slugify unicode value",
            "page rendered by views",
        ] {
            for hit in index
                .search_text(query, 20, &SearchFilters::default())
                .unwrap()
            {
                out.push(format!(
                    "lexical {query}: {}:{}-{} {:08x}",
                    hit.path,
                    hit.start,
                    hit.end,
                    hit.score.to_bits()
                ));
            }
        }
        for query in ["page render", "where are templates rendered", "bulk create"] {
            for hit in index.search(query, &options).unwrap().hits {
                out.push(format!(
                    "search {query}: {}:{}-{} {:08x}",
                    hit.path,
                    hit.start,
                    hit.end,
                    hit.score.to_bits()
                ));
            }
        }
        out
    };
    let opened_in_order = |first: &Path, second: &Path| {
        let cache = tempfile::tempdir().unwrap();
        let engine = engine(cache.path());
        let first = engine.open(first).unwrap();
        let second = engine.open(second).unwrap();
        assert_eq!(first.stats().pool.id, second.stats().pool.id, "one pool");
        (answers(&first), answers(&second))
    };
    let (a_first, b_second) = opened_in_order(&a, &b);
    let (b_first, a_second) = opened_in_order(&b, &a);
    assert!(
        a_first
            .iter()
            .any(|line| line.starts_with("search page render:"))
    );
    assert_eq!(a_first, a_second, "snapshot a");
    assert_eq!(b_first, b_second, "snapshot b");
}

#[test]
fn corrupt_cache_entries_are_detected_and_rebuilt() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let reference = engine(cache.path()).open(repo.path()).unwrap();
    let expected = top(&reference, "render_page template", 3);

    // Truncate the analysis pack (damaged as a whole) and the stat manifest.
    let pack = only_pack(cache.path());
    let bytes = fs::read(&pack).unwrap();
    fs::write(&pack, &bytes[..bytes.len() - 10]).unwrap();
    let manifest = walk(cache.path())
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/roots-"))
        .unwrap();
    let bytes = fs::read(&manifest).unwrap();
    fs::write(&manifest, &bytes[..bytes.len() / 3]).unwrap();
    let rebuilt = engine(cache.path()).open(repo.path()).unwrap();
    let stats = rebuilt.stats();
    assert_eq!(stats.cache.invalid_entries, 2, "{stats:#?}");
    assert_eq!(stats.cache.analyses_computed, 6);
    assert_eq!(stats.cache.pool_repairs.len(), 1);
    assert_eq!(top(&rebuilt, "render_page template", 3), expected);

    // Garble one value of the new pack: that analysis alone is recomputed.
    let pack = only_pack(cache.path());
    let mut bytes = fs::read(&pack).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    fs::write(&pack, bytes).unwrap();
    let rebuilt = engine(cache.path()).open(repo.path()).unwrap();
    let stats = rebuilt.stats();
    assert_eq!(stats.cache.invalid_entries, 1, "{stats:#?}");
    assert_eq!(stats.cache.analyses_computed, 1);
    assert_eq!(top(&rebuilt, "render_page template", 3), expected);

    // The damaged pack was removed; the next open recomputes what it held, then all is clean.
    let again = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(again.stats().cache.invalid_entries, 0);
    assert_eq!(again.stats().cache.analyses_computed, 5);
    let clean = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(clean.stats().cache.analyses_computed, 0);
    assert_eq!(top(&clean, "render_page template", 3), expected);
}

fn only_pack(cache: &Path) -> PathBuf {
    let packs: Vec<PathBuf> = walk(cache)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .collect();
    assert_eq!(packs.len(), 1, "{packs:?}");
    packs.into_iter().next().unwrap()
}

fn pool_files(cache: &Path) -> Vec<PathBuf> {
    walk(cache)
        .into_iter()
        .filter(|p| {
            let s = p.to_string_lossy();
            s.contains("/pools-")
                && p.parent().unwrap().file_name().unwrap().len() == 16
                && !s.ends_with(".lock")
        })
        .collect()
}

#[test]
fn a_damaged_pool_is_rebuilt() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let reference = engine(cache.path()).open(repo.path()).unwrap();
    let expected = top(&reference, "slugify unicode", 3);
    let chunks = reference.stats().pool.snapshot_docs;
    drop(reference);

    // Garble the largest segment file.
    let victim = pool_files(cache.path())
        .into_iter()
        .filter(|p| !p.ends_with("meta.json"))
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = fs::read(&victim).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    fs::write(&victim, bytes).unwrap();
    let repaired = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(
        repaired.stats().cache.pool_repairs.len(),
        1,
        "{:#?}",
        repaired.stats()
    );
    assert_eq!(repaired.stats().pool.docs_added, chunks);
    assert_eq!(top(&repaired, "slugify unicode", 3), expected);
    drop(repaired);

    // A garbled meta.json as well.
    let meta = pool_files(cache.path())
        .into_iter()
        .find(|p| p.ends_with("meta.json"))
        .unwrap();
    fs::write(&meta, b"{ not json").unwrap();
    let repaired = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(repaired.stats().cache.pool_repairs.len(), 1);
    assert_eq!(top(&repaired, "slugify unicode", 3), expected);
}

#[test]
fn a_format_version_bump_invalidates_everything() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let first = engine(cache.path()).open(repo.path()).unwrap();
    let first_top = top(&first, "bulk_create", 2);
    let old_tree = cache.path().join(format!("index-v{CACHE_FORMAT_VERSION}"));
    assert!(old_tree.is_dir());
    let layout = Engine::new(config(cache.path()))
        .layout()
        .at_format_version(CACHE_FORMAT_VERSION + 1);
    let bumped = Engine::with_layout(config(cache.path()), layout)
        .open(repo.path())
        .unwrap();
    // The newer version's first open removes the tree it supersedes.
    assert!(!old_tree.exists());
    assert!(
        cache
            .path()
            .join(format!("index-v{}", CACHE_FORMAT_VERSION + 1))
            .is_dir()
    );
    let stats = bumped.stats();
    assert_eq!(stats.cache.analyses_reused, 0);
    assert_eq!(stats.cache.analyses_computed, 6);
    assert_eq!(stats.pool.docs_added, first.stats().pool.snapshot_docs);
    assert_ne!(stats.pool.id, first.stats().pool.id);
    assert_eq!(top(&bumped, "bulk_create", 2), first_top);
}

#[test]
fn concurrent_builders_do_not_corrupt_each_other() {
    let base = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let a = base.path().join("a");
    let b = base.path().join("b");
    write_repo(&a, &fixture());
    let mut changed = fixture();
    changed.push((
        "app/forms.py",
        b"class ArticleForm:\n    fields = ['title']\n",
    ));
    write_repo(&b, &changed);

    // Four builders at once: two on the same snapshot, two on another snapshot of the same repo.
    let roots = [a.clone(), a.clone(), b.clone(), b.clone()];
    let barrier = Arc::new(Barrier::new(roots.len()));
    let handles: Vec<_> = roots
        .iter()
        .cloned()
        .map(|root| {
            let barrier = barrier.clone();
            let cache = cache.path().to_path_buf();
            std::thread::spawn(move || {
                let engine = engine(&cache);
                barrier.wait();
                let index = engine.open(&root).unwrap();
                top(&index, "ArticleForm fields title", 3)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results[0], results[1]);
    assert_eq!(results[2], results[3]);
    assert_eq!(results[2][0].0, "app/forms.py");
    assert!(results[0].iter().all(|(p, _, _)| p != "app/forms.py"));

    // Afterwards everything is cached, consistent, and in a single pool.
    for root in [&a, &b] {
        let index = engine(cache.path()).open(root).unwrap();
        let stats = index.stats();
        assert_eq!(stats.cache.analyses_computed, 0);
        assert_eq!(stats.pool.docs_added, 0);
        assert!(stats.cache.pool_repairs.is_empty());
    }
    let pools = Engine::new(config(cache.path()))
        .layout()
        .pools()
        .pool_ids();
    assert_eq!(pools.len(), 1, "{pools:?}");
}

#[test]
fn another_repository_gets_its_own_pool() {
    let base = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = base.path().join("checkout");
    write_repo(&root, &fixture());
    let first = engine(cache.path()).open(&root).unwrap();
    // The same directory now holds an unrelated project.
    fs::remove_dir_all(&root).unwrap();
    write_repo(
        &root,
        &[
            (
                "src/lib.rs",
                b"pub fn parse(input: &str) -> usize {\n    input.len()\n}\n",
            ),
            ("Cargo.toml", b"[package]\nname = \"other\"\n"),
        ],
    );
    let other = engine(cache.path()).open(&root).unwrap();
    assert_ne!(other.stats().pool.id, first.stats().pool.id);
    assert_eq!(top_path(&other, "parse input"), "src/lib.rs");
    let pools = Engine::new(config(cache.path()))
        .layout()
        .pools()
        .pool_ids();
    assert_eq!(pools.len(), 2);
}

#[test]
fn many_small_snapshots_keep_the_pool_compact() {
    let base = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut segments = Vec::new();
    for version in 0..12 {
        let root = base.path().join(format!("v{version}"));
        let mut files = fixture();
        let utils = format!("{UTILS}\n\ndef helper_{version}(x):\n    return x * {version}\n");
        files[2].1 = utils.as_bytes();
        write_repo(&root, &files);
        let index = engine(cache.path()).open(&root).unwrap();
        segments.push(index.stats().pool.segments);
        assert_eq!(
            top_path(&index, &format!("helper_{version}")),
            "app/utils.py"
        );
        let fresh_cache = tempfile::tempdir().unwrap();
        let fresh = engine(fresh_cache.path()).open(&root).unwrap();
        assert_eq!(
            top(&index, "slugify unicode helper", 5),
            top(&fresh, "slugify unicode helper", 5)
        );
    }
    assert!(segments.iter().all(|&n| n <= 8), "{segments:?}");
    assert!(
        segments.windows(2).any(|w| w[1] < w[0]),
        "a merge happened: {segments:?}"
    );
}

#[test]
fn an_empty_snapshot_is_an_empty_index() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let first = engine(cache.path()).open(repo.path()).unwrap();
    assert!(first.files().is_empty());
    assert!(
        first
            .search_text("anything", 5, &SearchFilters::default())
            .unwrap()
            .is_empty()
    );
    assert!(first.definitions("anything").is_empty());
    let again = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(again.stats().pool.id, first.stats().pool.id);
}

#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(Stage, u64, u64)>>);

impl Progress for Recorder {
    fn report(&self, stage: Stage, done: u64, total: u64) {
        self.0.lock().unwrap().push((stage, done, total));
    }
}

#[test]
fn progress_reaches_every_stage() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_repo(repo.path(), &fixture());
    let recorder = Recorder::default();
    engine(cache.path())
        .open_with_progress(repo.path(), &recorder)
        .unwrap();
    let events = recorder.0.into_inner().unwrap();
    for stage in [Stage::Walk, Stage::Read, Stage::Analyze, Stage::Index] {
        assert!(
            events.iter().any(|(s, _, _)| *s == stage),
            "{stage:?}: {events:?}"
        );
    }
    assert!(events.contains(&(Stage::Read, 7, 7)));
    assert!(events.contains(&(Stage::Analyze, 6, 6)));
}

#[test]
fn snapshot_index_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SnapshotIndex>();
    assert_send_sync::<Engine>();
}
