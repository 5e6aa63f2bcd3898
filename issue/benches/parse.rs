//! Parser speed: an issue of ordinary size, issues of 0.5, 1 and 5 MB of distinct
//! identifiers, paths and locations, a 1 MB line of backtick runs and one of `x.py(` that
//! nothing closes (the work must stay linear in the text). Run with
//! `cargo bench -p swex-issue --bench parse`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// `bytes` of log-like text in which every line names new paths, frames and identifiers.
fn log_of(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 128);
    let mut n = 0u32;
    while text.len() < bytes {
        text.push_str(&format!(
            "pkg{n}/module_{n}.py:{} calls handler_{n}() and `Value{n}Error`\n",
            n % 997 + 1
        ));
        n += 1;
    }
    text
}

const ISSUE: &str = "QuerySet.bulk_create() crashes with `batch_size` on SQLite\n\n\
Since 4.1, `bulk_create(objs, batch_size=10)` raises on databases without \
`can_return_rows_from_bulk_insert`. See django/db/models/query.py:\n\n```\n\
Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/django/db/models/query.py\", line 474, in bulk_create\n\
    objs = list(objs)\nTypeError: 'NoneType' object is not iterable\n```\n";

fn parse(c: &mut Criterion) {
    c.bench_function("parse/issue", |b| {
        b.iter(|| swex_issue::parse(black_box(ISSUE)))
    });
    let mut group = c.benchmark_group("parse/log");
    group.sample_size(10);
    for megabytes in [0.5f64, 1.0, 5.0] {
        let text = log_of((megabytes * 1048576.0) as usize);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(megabytes), &text, |b, text| {
            b.iter(|| swex_issue::parse(black_box(text)))
        });
    }
    group.finish();
    // Runs of 1, 2, 3, … backticks: each opens a span that no later run closes, the worst case
    // of a scan that looks for each run's closer along the line.
    let mut backticks = String::new();
    let mut length = 1;
    while backticks.len() < 1 << 20 {
        backticks.push_str(&"`".repeat(length));
        backticks.push_str(" x ");
        length += 1;
    }
    let mut group = c.benchmark_group("parse/backtick-runs");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(backticks.len() as u64));
    group.bench_function("1", |b| b.iter(|| swex_issue::parse(black_box(&backticks))));
    group.finish();
    // A line of `x.py(` that nothing closes, in an issue's body: every one could open an old
    // IPython frame's head (`x.py(12) in f(`), and the frame reader must not look for each one's
    // `)` to the line's end.
    let parens = format!("title\n{}\n", "x.py( ".repeat((1 << 20) / 6));
    let mut group = c.benchmark_group("parse/open-parentheses");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(parens.len() as u64));
    group.bench_function("1", |b| b.iter(|| swex_issue::parse(black_box(&parens))));
    group.finish();
}

fn mentions(c: &mut Criterion) {
    let text = log_of(1 << 20);
    let mut group = c.benchmark_group("mentions/log");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("1", |b| {
        b.iter(|| swex_issue::mentions::parse(black_box(&text)))
    });
    group.finish();
}

criterion_group!(benches, parse, mentions);
criterion_main!(benches);
