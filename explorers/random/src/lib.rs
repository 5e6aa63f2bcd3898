//! The `random` explorer: the reference's random baseline, reproduced exactly.
//!
//! Semantics of the reference: the pool is every core region of every row of the benchmark file
//! (`ground_truth.read_core_regions`, rows in file order, regions in row order, no filtering),
//! and each instance gets `random.Random(seed).sample(pool, min(2 * top_k, len(pool)))` with a
//! fresh generator — the reference runner builds a new explorer per instance, so with the same
//! seed every instance gets the same sample. This crate reimplements CPython's Mersenne Twister
//! seeding (`init_by_array` over the seed's 32-bit words), `getrandbits`, `_randbelow` and
//! `sample` (both of its algorithms), so the samples are those of CPython 3.
//!
//! Config (how the runner provides the pool): `{"bench_file": "path/to/bench.jsonl"}` (read once
//! at create) or `{"pool": [{"path", "start", "end"}, ...]}`, plus `"seed"` (default 42). A
//! request may override the seed with `config.seed`.

use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomConfig {
    #[serde(default)]
    pub bench_file: Option<String>,
    #[serde(default)]
    pub pool: Option<Vec<PoolRegion>>,
    #[serde(default)]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PoolRegion {
    pub path: String,
    pub start: i64,
    pub end: i64,
}

pub const DEFAULT_SEED: u64 = 42;

pub struct RandomExplorer {
    pool: Vec<PoolRegion>,
    seed: u64,
}

/// Reads the pool from a benchmark JSONL file: every row's core regions, in order.
pub fn pool_from_bench(text: &str, file: &str) -> Result<Vec<PoolRegion>, ExplorerError> {
    #[derive(Deserialize)]
    struct Row {
        #[serde(default)]
        ground_truth: Option<Truth>,
    }
    #[derive(Deserialize)]
    struct Truth {
        #[serde(default)]
        read_core_regions: Option<Vec<PoolRegion>>,
    }
    let mut pool = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Row = serde_json::from_str(line).map_err(|e| {
            ExplorerError::InvalidConfig(format!("{file}, line {}: {e}", index + 1))
        })?;
        if let Some(regions) = row.ground_truth.and_then(|t| t.read_core_regions) {
            pool.extend(regions);
        }
    }
    Ok(pool)
}

impl Explorer for RandomExplorer {
    const NAME: &'static CStr = c"random";
    const DESCRIPTION: &'static CStr =
        c"reference random baseline: a seeded sample of core regions from the benchmark's pool";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: RandomConfig = parse_config(config)?;
        let pool = match (config.bench_file, config.pool) {
            (Some(file), None) => {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| ExplorerError::InvalidConfig(format!("bench_file {file}: {e}")))?;
                pool_from_bench(&text, &file)?
            }
            (None, Some(pool)) => pool,
            (Some(_), Some(_)) => {
                return Err(ExplorerError::InvalidConfig(
                    "give either bench_file or pool, not both".to_owned(),
                ));
            }
            (None, None) => {
                return Err(ExplorerError::InvalidConfig(
                    "random needs the benchmark's pool of core regions: config \
                     {\"bench_file\": \"bench.jsonl\"} or {\"pool\": [...]}"
                        .to_owned(),
                ));
            }
        };
        Ok(RandomExplorer {
            pool,
            seed: config.seed.unwrap_or(DEFAULT_SEED),
        })
    }

    fn explore(
        &self,
        request: &Request,
        _services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let seed = match request.config.get("seed") {
            None => self.seed,
            Some(value) => value.as_u64().ok_or_else(|| {
                ExplorerError::InvalidRequest(format!(
                    "config.seed must be a non-negative integer, got {value}"
                ))
            })?,
        };
        let k = request.top_k.saturating_mul(2).min(self.pool.len());
        let mut rng = PyRandom::new(seed);
        let regions = rng
            .sample_indices(self.pool.len(), k)
            .into_iter()
            .map(|i| {
                let r = &self.pool[i];
                Region::new(r.path.clone(), r.start, r.end)
                    .with_score(0.0)
                    .with_why(format!("random sample, seed {seed}"))
            })
            .collect();
        Ok(Response::new(regions))
    }
}

/// CPython's `random.Random`: MT19937 with CPython's seeding and integer sampling.
pub struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> PyRandom {
        // CPython splits abs(seed) into 32-bit words, least significant first; 0 gives [0].
        let mut key = vec![seed as u32];
        if seed >> 32 != 0 {
            key.push((seed >> 32) as u32);
        }
        let mut rng = PyRandom {
            state: [0; 624],
            index: 624,
        };
        rng.init_by_array(&key);
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..624 {
            let previous = self.state[i - 1];
            self.state[i] = 1812433253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        self.index = 624;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19650218);
        let n = 624;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..n.max(key.len()) {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1664525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= n {
                self.state[0] = self.state[n - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..n - 1 {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i]
                ^ (previous ^ (previous >> 30)).wrapping_mul(1566083941))
            .wrapping_sub(i as u32);
            i += 1;
            if i >= n {
                self.state[0] = self.state[n - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        for i in 0..624 {
            let y = (self.state[i] & UPPER) | (self.state[(i + 1) % 624] & LOWER);
            let mut next = self.state[(i + 397) % 624] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= 0x9908_b0df;
            }
            self.state[i] = next;
        }
        self.index = 0;
    }

    /// The next 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(k)` for `1 <= k <= 32`.
    fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.next_u32() >> (32 - k)
    }

    /// `_randbelow(n)` for `1 <= n < 2^32`: rejection sampling on `n.bit_length()` bits.
    pub fn randbelow(&mut self, n: usize) -> usize {
        let k = usize::BITS - n.leading_zeros();
        loop {
            let r = self.getrandbits(k) as usize;
            if r < n {
                return r;
            }
        }
    }

    /// The indices `random.sample(range(n), k)` picks, in order.
    pub fn sample_indices(&mut self, n: usize, k: usize) -> Vec<usize> {
        assert!(k <= n, "sample larger than population");
        let mut setsize = 21usize;
        if k > 5 {
            let exponent = ((k * 3) as f64).ln() / 4f64.ln();
            setsize += 4usize.pow(exponent.ceil() as u32);
        }
        let mut result = Vec::with_capacity(k);
        if n <= setsize {
            let mut pool: Vec<usize> = (0..n).collect();
            for i in 0..k {
                let j = self.randbelow(n - i);
                result.push(pool[j]);
                pool[j] = pool[n - i - 1];
            }
        } else {
            let mut selected = std::collections::HashSet::new();
            for _ in 0..k {
                let mut j = self.randbelow(n);
                while selected.contains(&j) {
                    j = self.randbelow(n);
                }
                selected.insert(j);
                result.push(j);
            }
        }
        result
    }
}

swex_plugin::export_vtable!(RandomExplorer);

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values printed by CPython 3.11:
    /// `r = random.Random(seed); [r.getrandbits(32) for _ in range(3)]`.
    #[test]
    fn mersenne_twister_matches_cpython() {
        let check = |seed: u64, expected: [u32; 3]| {
            let mut rng = PyRandom::new(seed);
            let got = [rng.next_u32(), rng.next_u32(), rng.next_u32()];
            assert_eq!(got, expected, "seed {seed}");
        };
        check(42, MT_42);
        check(0, MT_0);
        check(1 << 40, MT_2_40);
    }

    /// `random.Random(seed).sample(range(n), k)` from CPython 3.11, both algorithms (pool for
    /// small n, set for large n).
    #[test]
    fn sample_matches_cpython() {
        let check = |seed: u64, n: usize, k: usize, expected: &[usize]| {
            assert_eq!(
                PyRandom::new(seed).sample_indices(n, k),
                expected,
                "seed {seed}, n {n}, k {k}"
            );
        };
        check(42, 20, 10, SAMPLE_42_20_10);
        check(42, 500, 10, SAMPLE_42_500_10);
        check(7, 3, 3, SAMPLE_7_3_3);
        check(42, 90, 6, SAMPLE_42_90_6);
    }

    include!("cpython_expected.rs");
}
