//! The published scores (`published.json`): per method, NDCG@10 per repository and, where the
//! result file had them, per category; copied unchanged from the benchmark's result files.
//!
//! Means are not read from the file but recomputed by [`crate::codesearch::report`] over the
//! repositories a run covers, so a run on a subset is compared with the published methods on the
//! same subset.

use super::data::Category;
use super::metrics::Scoring;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// A published method's score on one repository.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PublishedRepo {
    pub ndcg10: f64,
    #[serde(default)]
    pub by_category: BTreeMap<Category, f64>,
}

/// One published method.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PublishedMethod {
    /// The key in `published.json` (`semble_hybrid`).
    #[serde(skip)]
    pub key: String,
    pub label: String,
    /// The result file it came from.
    pub file: String,
    #[serde(default)]
    pub mode: Option<String>,
    pub scoring: Scoring,
    pub per_repo: BTreeMap<String, PublishedRepo>,
}

#[derive(Deserialize)]
struct RawPublished {
    methods: InFileOrder,
}

/// The `methods` object as (key, value) pairs in file order (a JSON map type may sort them).
struct InFileOrder(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for InFileOrder {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Pairs;
        impl<'de> serde::de::Visitor<'de> for Pairs {
            type Value = InFileOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of methods")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<InFileOrder, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                Ok(InFileOrder(pairs))
            }
        }
        deserializer.deserialize_map(Pairs)
    }
}

/// The published methods, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Published {
    pub path: PathBuf,
    pub methods: Vec<PublishedMethod>,
}

impl Published {
    pub fn load(path: &Path) -> Result<Published, PublishedError> {
        let text = crate::input::read_text_io(path, crate::input::MAX_DOCUMENT_BYTES).map_err(
            |source| PublishedError::Read {
                path: path.to_path_buf(),
                source,
            },
        )?;
        Published::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Published, PublishedError> {
        let invalid = |message: String| PublishedError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let raw: RawPublished = serde_json::from_str(text)
            .map_err(|e| invalid(format!("expected an object with `methods`: {e}")))?;
        let mut methods = Vec::new();
        for (key, value) in raw.methods.0 {
            let mut method: PublishedMethod = serde_json::from_value(value)
                .map_err(|e| invalid(format!("method `{key}`: {e}")))?;
            method.key = key;
            methods.push(method);
        }
        Ok(Published {
            path: path.to_path_buf(),
            methods,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_keep_file_order_and_categories() {
        let text = r#"{"description": "x", "methods": {
            "b_method": {"file": "b.json", "label": "B", "scoring": "chunk",
                         "per_repo": {"click": {"ndcg10": 0.5, "by_category": {"symbol": 1.0}}},
                         "mean": {"ndcg10": 0.5}},
            "a_method": {"file": "a.json", "label": "A", "scoring": "file", "mode": "m",
                         "per_repo": {"click": {"ndcg10": 0.25}}}
        }}"#;
        let published = Published::parse(text, Path::new("p.json")).expect("valid");
        let keys: Vec<&str> = published.methods.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["b_method", "a_method"]);
        assert_eq!(
            published.methods[0].per_repo["click"].by_category[&Category::Symbol],
            1.0
        );
        assert_eq!(published.methods[1].scoring, Scoring::File);
        let err = Published::parse(r#"{"methods": {"x": {"label": "X"}}}"#, Path::new("p.json"))
            .unwrap_err();
        assert!(err.to_string().contains("method `x`"), "{err}");
    }
}
