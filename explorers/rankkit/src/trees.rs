//! Gradient-boosted decision trees at inference: a learned ranking model read from data and
//! evaluated in pure Rust.
//!
//! The model is trained elsewhere (`swex train`, through LightGBM's LambdaMART; see
//! docs/ranker.md) and stored as JSON in the format `swex-trees/1`:
//!
//! ```json
//! {"format": "swex-trees/1", "features": ["lexical", "mentions"],
//!  "trees": [{"split_feature": [0], "threshold": [0.5],
//!             "left_child": [-1], "right_child": [-2], "leaf_value": [-0.1, 0.3]}]}
//! ```
//!
//! Each tree is LightGBM's array layout: internal node `i` sends a row left when
//! `row[split_feature[i]] <= threshold[i]`, else right; a child `c >= 0` is internal node `c`, a
//! child `c < 0` is leaf `-c - 1`; a tree of one leaf has no internal nodes. The score of a row is
//! the sum of its leaves over all trees (the learning rate is already in the leaf values).
//!
//! Invariants, checked once by [`TreeEnsemble::from_json`] so that [`TreeEnsemble::score`]
//! cannot fail or loop: every array of a tree has the length its node count says, every child
//! index is in range, every internal node is reached exactly once from the root (a tree, not a
//! graph with cycles), thresholds and leaves are finite, split features name a feature. Rows
//! carry no missing values: features that can be absent are given a value by their producer.
//! Scoring is deterministic (a fixed order of additions).

use serde::{Deserialize, Serialize};

/// The format tag of the JSON this module reads.
pub const FORMAT: &str = "swex-trees/1";

/// One tree in LightGBM's array layout (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    pub split_feature: Vec<usize>,
    pub threshold: Vec<f64>,
    pub left_child: Vec<i64>,
    pub right_child: Vec<i64>,
    pub leaf_value: Vec<f64>,
}

/// A sum of trees over named features, with whatever else the producer stored about it
/// (`training`, calibration) kept as JSON for the caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeEnsemble {
    pub format: String,
    /// The names of the features, in the order of a row.
    pub features: Vec<String>,
    pub trees: Vec<Tree>,
}

/// Why a model was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid tree model: {}", self.0)
    }
}

impl std::error::Error for ModelError {}

impl TreeEnsemble {
    /// Reads and checks a model (see the module doc for what is checked).
    pub fn from_json(value: &serde_json::Value) -> Result<TreeEnsemble, ModelError> {
        // Read from the borrowed value: a model is tens of kilobytes of JSON, read on the first
        // query of every one-shot process.
        let model = TreeEnsemble::deserialize(value)
            .map_err(|e| ModelError(format!("not a `{FORMAT}` model: {e}")))?;
        model.check()?;
        Ok(model)
    }

    fn check(&self) -> Result<(), ModelError> {
        if self.format != FORMAT {
            return Err(ModelError(format!(
                "format {:?}, expected {FORMAT:?}",
                self.format
            )));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            check_tree(tree, self.features.len())
                .map_err(|e| ModelError(format!("tree {t}: {e}")))?;
        }
        Ok(())
    }

    /// The same model over the rows of a producer that computes the features `computed`, in that
    /// order: every split is re-pointed, by name, at the feature's place in `computed`, so a model
    /// may read any subset of a producer's features in any order (a producer can add features
    /// without invalidating the models trained before them). Refused, naming them, when the model
    /// reads features the producer does not compute, or when `computed` names one twice.
    pub fn over(&self, computed: &[&str]) -> Result<TreeEnsemble, ModelError> {
        let mut place: std::collections::HashMap<&str, usize> = Default::default();
        for (i, name) in computed.iter().enumerate() {
            if place.insert(name, i).is_some() {
                return Err(ModelError(format!(
                    "the feature {name:?} is computed twice"
                )));
            }
        }
        let unknown: Vec<&str> = self
            .features
            .iter()
            .map(String::as_str)
            .filter(|name| !place.contains_key(name))
            .collect();
        if !unknown.is_empty() {
            return Err(ModelError(format!(
                "trained on the features {unknown:?}, which are not computed here (computed: {computed:?})"
            )));
        }
        let column: Vec<usize> = self
            .features
            .iter()
            .map(|name| place[name.as_str()])
            .collect();
        let trees = self
            .trees
            .iter()
            .map(|tree| Tree {
                split_feature: tree.split_feature.iter().map(|&f| column[f]).collect(),
                ..tree.clone()
            })
            .collect();
        Ok(TreeEnsemble {
            format: self.format.clone(),
            features: computed.iter().map(|&name| name.to_owned()).collect(),
            trees,
        })
    }

    /// The model's score of one row; `row` holds one value per feature, in order.
    ///
    /// # Panics
    /// When `row` has fewer values than the model has features (a caller's bug: the row is built
    /// from the same feature list).
    pub fn score(&self, row: &[f64]) -> f64 {
        assert!(
            row.len() >= self.features.len(),
            "a row of {} values for {} features",
            row.len(),
            self.features.len()
        );
        self.trees.iter().map(|tree| tree.score(row)).sum()
    }
}

impl Tree {
    fn score(&self, row: &[f64]) -> f64 {
        if self.split_feature.is_empty() {
            return self.leaf_value[0];
        }
        let mut node = 0usize;
        loop {
            let child = if row[self.split_feature[node]] <= self.threshold[node] {
                self.left_child[node]
            } else {
                self.right_child[node]
            };
            if child < 0 {
                return self.leaf_value[(-child - 1) as usize];
            }
            node = child as usize;
        }
    }
}

fn check_tree(tree: &Tree, features: usize) -> Result<(), String> {
    let internal = tree.split_feature.len();
    if [
        tree.threshold.len(),
        tree.left_child.len(),
        tree.right_child.len(),
    ]
    .iter()
    .any(|&n| n != internal)
    {
        return Err("split_feature, threshold, left_child and right_child differ in length".into());
    }
    if tree.leaf_value.len() != internal + 1 {
        return Err(format!(
            "{} leaves for {internal} internal nodes (a binary tree has one more leaf)",
            tree.leaf_value.len()
        ));
    }
    if let Some(f) = tree.split_feature.iter().find(|&&f| f >= features) {
        return Err(format!("split on feature {f} of {features}"));
    }
    if tree
        .threshold
        .iter()
        .chain(&tree.leaf_value)
        .any(|v| !v.is_finite())
    {
        return Err("a threshold or leaf value is not finite".into());
    }
    // Every node reached exactly once from the root: no cycles, no shared or orphan nodes.
    let mut seen_internal = vec![false; internal];
    let mut seen_leaf = vec![false; internal + 1];
    let mut stack = vec![0i64];
    if internal == 0 {
        return Ok(());
    }
    while let Some(node) = stack.pop() {
        if node < 0 {
            let leaf = (-node - 1) as usize;
            if leaf > internal || std::mem::replace(&mut seen_leaf[leaf], true) {
                return Err(format!("leaf {leaf} out of range or reached twice"));
            }
            continue;
        }
        let node = node as usize;
        if node >= internal || std::mem::replace(&mut seen_internal[node], true) {
            return Err(format!("node {node} out of range or reached twice"));
        }
        stack.push(tree.left_child[node]);
        stack.push(tree.right_child[node]);
    }
    if seen_internal.contains(&false) || seen_leaf.contains(&false) {
        return Err("a node is not reached from the root".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(trees: serde_json::Value) -> Result<TreeEnsemble, ModelError> {
        TreeEnsemble::from_json(&json!({
            "format": FORMAT, "features": ["a", "b"], "trees": trees
        }))
    }

    #[test]
    fn scores_sum_the_leaves_each_row_reaches() {
        // Tree 1: a <= 0.5 ? (b <= 2 ? 1 : 2) : 3. Tree 2: one leaf, 0.25.
        let m = model(json!([
            {"split_feature": [0, 1], "threshold": [0.5, 2.0],
             "left_child": [1, -1], "right_child": [-3, -2], "leaf_value": [1.0, 2.0, 3.0]},
            {"split_feature": [], "threshold": [], "left_child": [], "right_child": [],
             "leaf_value": [0.25]}
        ]))
        .unwrap();
        for (row, expected) in [
            ([0.0, 0.0], 1.25),
            ([0.5, 2.0], 1.25), // `<=` goes left at equality
            ([0.5, 2.5], 2.25),
            ([0.6, 0.0], 3.25),
        ] {
            assert_eq!(m.score(&row), expected, "{row:?}");
        }
    }

    #[test]
    fn a_model_reads_its_features_by_name_from_a_producers_rows() {
        // Tree: a <= 0.5 ? (b <= 2 ? 1 : 2) : 3, over rows [a, b]; the producer computes
        // [x, b, y, a]: the same scores from the re-ordered, wider rows.
        let m = model(json!([
            {"split_feature": [0, 1], "threshold": [0.5, 2.0],
             "left_child": [1, -1], "right_child": [-3, -2], "leaf_value": [1.0, 2.0, 3.0]}
        ]))
        .unwrap();
        let wide = m.over(&["x", "b", "y", "a"]).unwrap();
        assert_eq!(wide.features, ["x", "b", "y", "a"]);
        for [a, b] in [[0.0, 0.0], [0.5, 2.5], [0.6, 0.0], [0.4, 9.0]] {
            assert_eq!(wide.score(&[7.0, b, -7.0, a]), m.score(&[a, b]), "{a} {b}");
        }
        // A feature the producer does not compute, or one computed twice, is refused by name.
        let missing = m.over(&["b", "x"]).unwrap_err();
        assert!(missing.0.contains("[\"a\"]"), "{missing}");
        let twice = m.over(&["a", "b", "a"]).unwrap_err();
        assert!(twice.0.contains("\"a\""), "{twice}");
    }

    #[test]
    fn malformed_trees_are_refused() {
        let cases = [
            // A cycle: node 1's left child is the root.
            json!([{"split_feature": [0, 1], "threshold": [0.5, 2.0],
                    "left_child": [1, 0], "right_child": [-1, -2], "leaf_value": [1.0, 2.0, 3.0]}]),
            // A leaf index out of range.
            json!([{"split_feature": [0], "threshold": [0.5],
                    "left_child": [-1], "right_child": [-3], "leaf_value": [1.0, 2.0]}]),
            // A feature the model does not have.
            json!([{"split_feature": [2], "threshold": [0.5],
                    "left_child": [-1], "right_child": [-2], "leaf_value": [1.0, 2.0]}]),
            // Lengths that disagree.
            json!([{"split_feature": [0], "threshold": [],
                    "left_child": [-1], "right_child": [-2], "leaf_value": [1.0, 2.0]}]),
            // A leaf reached twice, one never.
            json!([{"split_feature": [0], "threshold": [0.5],
                    "left_child": [-1], "right_child": [-1], "leaf_value": [1.0, 2.0]}]),
        ];
        for trees in cases {
            assert!(model(trees.clone()).is_err(), "{trees}");
        }
        let wrong_format =
            TreeEnsemble::from_json(&json!({"format": "x", "features": [], "trees": []}));
        assert!(wrong_format.unwrap_err().0.contains("swex-trees/1"));
    }
}
