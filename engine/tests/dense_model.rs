//! Dense retrieval with the real model. These tests need the assets of `swex models fetch` (in
//! `$SWEX_CACHE_DIR` or the user cache directory); without them each test prints why it is skipped
//! and passes, so a machine without the model still runs the rest of the suite. CI fetches first
//! and sets `SWEX_REQUIRE_MODEL=1`, which turns a missing model into a failure (the one rule of
//! `swex_testkit`).

use swex_engine::dense::{
    DenseError, DenseIndex, Embedder, EmbedderConfig, EmbeddingCache, IndexOptions, TextUnit,
    default_cache_root, rerank,
};

/// The embedder, or `None` after printing the skip reason when the assets are absent.
fn embedder(config: EmbedderConfig) -> Option<Embedder> {
    match Embedder::open(&default_cache_root(), &config) {
        Ok(embedder) => Some(embedder),
        Err(e) if e.is_absent() => swex_testkit::available(swex_testkit::Needs::Model, Err(e)),
        Err(e) => panic!("the model is installed but does not load: {e}"),
    }
}

fn code_chunks() -> Vec<(&'static str, String)> {
    let chunk = |path: &str, name: &str, body: &str| {
        swex_engine::dense::passage_text(path, Some(name), body, TextUnit::Full, 4096)
    };
    vec![
        (
            "urls",
            chunk(
                "requests/utils.py",
                "parse_url",
                "def parse_url(url):\n    \"\"\"Split a URL into scheme, host, port and path.\"\"\"\n    scheme, rest = url.split('://', 1)\n    host, _, path = rest.partition('/')\n    return scheme, host, path",
            ),
        ),
        (
            "matrix",
            chunk(
                "sympy/matrices/dense.py",
                "Matrix.det",
                "def det(self):\n    \"\"\"Determinant of a square matrix by Bareiss elimination.\"\"\"\n    return self._eval_det_bareiss()",
            ),
        ),
        (
            "cookies",
            chunk(
                "requests/cookies.py",
                "RequestsCookieJar.set",
                "def set(self, name, value, **kwargs):\n    \"\"\"Set a cookie in the jar, optionally for a domain and path.\"\"\"\n    c = create_cookie(name, value, **kwargs)\n    self.set_cookie(c)",
            ),
        ),
        (
            "docs",
            chunk(
                "docs/install.rst",
                "",
                "Installation\n============\n\nInstall the package with pip and check the version.",
            ),
        ),
    ]
}

#[test]
fn vectors_are_unit_length_and_batch_independent() {
    let Some(embedder) = embedder(EmbedderConfig {
        batch_size: 3,
        ..EmbedderConfig::default()
    }) else {
        return;
    };
    assert_eq!(embedder.dim(), 384);
    let chunks = code_chunks();
    let texts: Vec<&str> = chunks.iter().map(|(_, t)| t.as_str()).collect();
    let together = embedder.embed_passages(&texts, &mut |_, _| {}).unwrap();
    for (text, v) in texts.iter().zip(&together) {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "norm {norm}");
        // Padding in a batch must not change a vector: that is what makes caching by text valid.
        let alone = &embedder.embed_passages(&[text], &mut |_, _| {}).unwrap()[0];
        let cosine: f32 = v.iter().zip(alone).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.9999, "batched vs alone: cosine {cosine}");
    }
}

#[test]
fn search_and_rerank_find_the_relevant_chunk_and_reuse_the_cache() {
    let Some(embedder) = embedder(EmbedderConfig::default()) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(root.path(), embedder.identity()).unwrap();
    let chunks = code_chunks();

    let (index, report) = DenseIndex::build(
        &embedder,
        &cache,
        &chunks,
        &IndexOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(report.counts.embedded, chunks.len());
    let check = |query: &str, expected: &str| {
        let hits = index.search_text(&embedder, query, 2).unwrap();
        assert_eq!(hits[0].key, expected, "{query}: {hits:?}");
        assert!(hits[0].score > hits[1].score);
    };
    check("the host part of a URL is parsed wrong", "urls");
    check("determinant of a matrix gives a wrong result", "matrix");
    check("cookie set for a domain is lost", "cookies");

    // A second build of the same texts embeds nothing.
    let (_, report) = DenseIndex::build(
        &embedder,
        &cache,
        &chunks,
        &IndexOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(report.counts.embedded, 0);
    assert_eq!(report.counts.cached, chunks.len());

    // Rerank embeds only the candidates it is given, and orders them.
    let candidates = [chunks[1].clone(), chunks[0].clone()];
    let fresh = tempfile::tempdir().unwrap();
    let fresh_cache = EmbeddingCache::open(fresh.path(), embedder.identity()).unwrap();
    let (hits, counts) = rerank(&embedder, &fresh_cache, "URL parsing", &candidates).unwrap();
    assert_eq!(counts.embedded, 2);
    assert_eq!(fresh_cache.stats().entries, 2);
    let keys: Vec<&str> = hits.iter().map(|h| h.key).collect();
    assert_eq!(keys, vec!["urls", "matrix"]);
}

#[test]
fn another_token_cap_is_another_model_identity() {
    let Some(long) = embedder(EmbedderConfig::default()) else {
        return;
    };
    let Some(short) = embedder(EmbedderConfig {
        max_tokens: 64,
        ..EmbedderConfig::default()
    }) else {
        return;
    };
    assert_ne!(long.identity(), short.identity());
    let root = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(root.path(), long.identity()).unwrap();
    let err = cache.embed(&short, &["x"], &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, DenseError::ModelMismatch { .. }), "{err}");
}
