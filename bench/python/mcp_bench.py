"""Latency of `swex mcp` as an agent sees it, through the official MCP Python SDK's stdio client.

    python bench/python/mcp_bench.py --swex target/release/swex --snapshot /work/repos/django__django-14315 \
        [--issues ../shared/data/dev.jsonl] [--runs 5] [--rounds 20]

Copies the snapshot to a scratch folder (edits never touch the original), builds its index once
with `swex index` (so the repository is "already cached"), then measures, client side (a round
trip: request, work, answer decoded):

- start to first answer: a new `swex mcp` process, initialize, one `definition` (--runs times);
- warm: `search`, `definition`, `references`, `neighbours`, `read` and `explore` (the issues of
  the snapshot's repository in --issues) on an open index;
- after an edit: a file edited in place (one line appended), then the `search` that must find
  the new word; and a file added, then found (a directory changed: the tree is walked again).

Prints a Markdown table (median, p90, min, max in ms) with the date, the machine's load and the
snapshot. Not a test.
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SEARCHES = [
    "bulk_create batch_size",
    "get_or_create defaults",
    "select_related prefetch_related",
    "csrf token cookie",
    "migration autodetector rename field",
    "ModelAdmin list_display",
    "HttpResponse streaming content",
    "template filter escape autoescape",
    "ForeignKey on_delete cascade",
    "DurationField total_seconds",
]
DEFINITIONS = [
    "bulk_create",
    "QuerySet",
    "get_or_create",
    "HttpResponse",
    "Field.deconstruct",
    "ModelAdmin",
    "reverse",
    "slugify",
    "cached_property",
    "Collector.delete",
]


def ms(seconds):
    return seconds * 1000.0


def summary(values):
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return statistics.median(values), p90, values[0], values[-1], len(values)


async def timed(session, tool, arguments):
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    elapsed = time.perf_counter() - started
    if result.is_error:
        text = "\n".join(c.text for c in result.content)
        raise SystemExit(f"{tool} {arguments} failed: {text}")
    return ms(elapsed), result


def server(swex, repo, cache):
    return StdioServerParameters(command=swex, args=["mcp", str(repo), "--cache-dir", str(cache)])


async def start_to_first_answer(swex, repo, cache):
    started = time.perf_counter()
    async with stdio_client(server(swex, repo, cache), errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            result = await session.call_tool("definition", {"name": "QuerySet"})
            elapsed = time.perf_counter() - started
            assert not result.is_error
    return ms(elapsed)


async def warm_and_edits(swex, repo, cache, issues, rounds):
    rows = {}
    async with stdio_client(server(swex, repo, cache), errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            await timed(session, "definition", {"name": "QuerySet"})
            # The graph is built on the first references call; warm it before timing.
            await timed(session, "references", {"symbol": "QuerySet.bulk_create"})
            for _ in range(3):
                for query in SEARCHES:
                    rows.setdefault("search", []).append((await timed(session, "search", {"query": query}))[0])
                for name in DEFINITIONS:
                    rows.setdefault("definition", []).append(
                        (await timed(session, "definition", {"name": name}))[0])
                rows.setdefault("references", []).append(
                    (await timed(session, "references", {"symbol": "QuerySet.bulk_create"}))[0])
                rows.setdefault("neighbours", []).append(
                    (await timed(session, "neighbours", {"path": "django/db/models/query.py"}))[0])
                rows.setdefault("read (200 lines)", []).append(
                    (await timed(session, "read", {"path": "django/db/models/query.py",
                                                    "start": 400, "end": 599}))[0])
                for issue in issues:
                    rows.setdefault("explore", []).append((await timed(session, "explore", {"issue": issue}))[0])

            # Edits in place: one line appended to a source file, then the search for its word.
            target = repo / "django" / "db" / "models" / "query.py"
            original = target.read_bytes()
            try:
                for i in range(rounds):
                    word = f"mcpbenchword{i}"
                    target.write_bytes(original + f"\n# {word}\n".encode())
                    elapsed, result = await timed(session, "search", {"query": word, "limit": 3})
                    hits = result.structured_content["hits"]
                    assert hits and hits[0]["path"] == "django/db/models/query.py", hits
                    rows.setdefault("search after an edit in place", []).append(elapsed)
                    elapsed, result = await timed(session, "definition", {"name": "bulk_create"})
                    rows.setdefault("definition after an edit in place", []).append(elapsed)
                    target.write_bytes(original + f"\n# {word}x\n".encode())
                    elapsed, result = await timed(session, "explore", {"issue": issues[i % len(issues)]})
                    rows.setdefault("explore after an edit in place", []).append(elapsed)
            finally:
                target.write_bytes(original)
            # A file added (its directory changes, so the tree is walked again).
            for i in range(max(3, rounds // 4)):
                added = repo / "django" / f"mcp_bench_added_{i}.py"
                added.write_text(f"def mcp_bench_added_function_{i}():\n    return {i}\n")
                elapsed, result = await timed(session, "search", {"query": f"mcp_bench_added_function_{i}"})
                assert result.structured_content["hits"][0]["path"] == f"django/mcp_bench_added_{i}.py"
                rows.setdefault("search after adding a file", []).append(elapsed)
                added.unlink()
                await timed(session, "search", {"query": "x"})
                # Let the directory's stamp age past the racy window (2 s) before the next round.
                time.sleep(2.2)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swex", required=True)
    parser.add_argument("--snapshot", required=True, type=Path)
    parser.add_argument("--issues", type=Path, default=Path("../shared/data/dev.jsonl"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    swex = str(Path(args.swex).resolve())

    repo_name = None
    issues = []
    instance = args.snapshot.name
    if args.issues.exists():
        rows = [json.loads(line) for line in args.issues.read_text().splitlines() if line.strip()]
        by_id = {row["instance_id"]: row for row in rows}
        repo_name = by_id.get(instance, {}).get("repo")
        issues = [row["problem_statement"] for row in rows if row.get("repo") == repo_name]
    if not issues:
        issues = ["bulk_create ignores batch_size when ignore_conflicts is set"]

    work = Path(tempfile.mkdtemp(prefix="swex-mcp-bench-"))
    try:
        repo = work / "repo"
        shutil.copytree(args.snapshot, repo, symlinks=True)
        cache = work / "cache"
        subprocess.run([swex, "index", "--repo", str(repo), "--cache-dir", str(cache), "--quiet",
                        "--no-graph"], check=True, stdout=subprocess.DEVNULL)
        # Files copied just now have racy stamps for 2 s; age them out as an earlier checkout.
        time.sleep(2.2)
        subprocess.run([swex, "index", "--repo", str(repo), "--cache-dir", str(cache), "--quiet",
                        "--no-graph"], check=True, stdout=subprocess.DEVNULL)
        starts = [asyncio.run(start_to_first_answer(swex, repo, cache)) for _ in range(args.runs)]
        rows = asyncio.run(warm_and_edits(swex, repo, cache, issues, args.rounds))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()
    print(f"`swex mcp` on {instance} ({len(issues)} issues of {repo_name or 'the fallback'}), "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores\n")
    print("| call | median ms | p90 | min | max | n |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in [("start to first answer (cached repository)", starts), *rows.items()]:
        median, p90, low, high, n = summary(values)
        print(f"| {name} | {median:.1f} | {p90:.1f} | {low:.1f} | {high:.1f} | {n} |")


if __name__ == "__main__":
    sys.exit(main())
