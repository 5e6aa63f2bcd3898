"""End-to-end test of `swex mcp` with the official MCP Python SDK's stdio client.

Run by tests/mcp_client.rs as `python e2e.py SWEX_BINARY`: builds a fixture repository in a
temporary folder, starts the server through `mcp.client.stdio.stdio_client`, lists the tools,
calls each one, edits files between calls and checks the next answer sees the edit, and sends
bad input (each must be an error with a clear message while the server keeps answering).
Prints one line per check and exits non-zero on the first failure.
"""

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

MODELS = '''class QuerySet:
    """A lazy database lookup."""

    def bulk_create(self, objs, batch_size=None):
        if not objs:
            return objs
        return self._insert(objs, batch_size)

    def _insert(self, objs, batch_size):
        return [obj for obj in objs][:batch_size]
'''

VIEWS = '''from app.models import QuerySet


def save_all(request):
    return QuerySet().bulk_create(request.items, batch_size=10)
'''

TESTS = '''from app.models import QuerySet


def test_bulk_create_keeps_batch_size():
    assert QuerySet().bulk_create([1, 2, 3], batch_size=2) == [1, 2]
'''

CHECKS = 0


def check(condition, what, detail=""):
    global CHECKS
    if not condition:
        print(f"FAIL: {what}\n{detail}", flush=True)
        sys.exit(1)
    CHECKS += 1
    print(f"ok: {what}", flush=True)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call(session, tool, **arguments):
    return await session.call_tool(tool, arguments)


async def expect_tool_error(session, name, arguments, needle, what):
    result = await session.call_tool(name, arguments)
    message = text_of(result)
    check(result.is_error and needle in message, what, message)


def write_fixture(root: Path):
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "models.py").write_text(MODELS)
    (root / "app" / "views.py").write_text(VIEWS)
    (root / "tests" / "test_models.py").write_text(TESTS)
    (root / "README.md").write_text("# Fixture\n\nQuerySet.bulk_create inserts objects in batches.\n")


async def main(swex: str):
    work = Path(tempfile.mkdtemp(prefix="swex-mcp-e2e-"))
    try:
        repo = work / "repo"
        write_fixture(repo)
        other = work / "other"
        (other / "lib").mkdir(parents=True)
        (other / "lib" / "tool.py").write_text("def other_repo_helper():\n    return 42\n")
        cache = work / "cache"
        params = StdioServerParameters(
            command=swex,
            args=["mcp", str(repo), str(other), "--lazy", "--cache-dir", str(cache)],
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await run(session, repo, other)
        # A server whose explorer fails: `explore` is an error, the other tools still answer.
        params = StdioServerParameters(
            command=swex,
            args=["mcp", str(repo), "--explorer", "oracle", "--cache-dir", str(cache)],
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await call(session, "explore", issue="bulk_create ignores batch_size")
                check(result.is_error and "explorer" in text_of(result),
                      "a failing explorer is a tool error", text_of(result))
                result = await call(session, "definition", name="bulk_create")
                check(not result.is_error, "the server answers after the explorer failed")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{CHECKS} passed, 0 failed", flush=True)


async def run(session, repo: Path, other: Path):
    init = await session.initialize()
    check(init.server_info.name == "swex", "server info")
    check(bool(init.instructions) and "explore" in init.instructions, "instructions for agents")

    tools = (await session.list_tools()).tools
    names = [t.name for t in tools]
    check(names == ["explore", "search", "definition", "references", "neighbours", "read"],
          "tool list", str(names))
    for tool in tools:
        check(tool.description and len(tool.description) > 40, f"{tool.name} has a description")
        schema = tool.input_schema
        check(schema.get("type") == "object" and schema.get("properties"),
              f"{tool.name} has an input schema", str(schema))
    required = {t.name: t.input_schema.get("required", []) for t in tools}
    check(required["explore"] == ["issue"] and required["read"] == ["path"],
          "required arguments", str(required))

    # First call: builds the index (lazy server), with progress notifications.
    seen = []

    async def on_progress(progress, total, message):
        seen.append(message)

    result = await session.call_tool(
        "explore", {"issue": "bulk_create ignores batch_size when inserting objects"},
        progress_callback=on_progress)
    check(not result.is_error, "explore answers", text_of(result))
    regions = result.structured_content["regions"]
    check(regions and regions[0]["path"] == "app/models.py",
          "explore ranks the defining file first", text_of(result))
    check(all("why" in r and r["end"] >= r["start"] for r in regions), "regions have why and lines")
    check(any("index" in (m or "") for m in seen), "progress while the index is built", str(seen))
    check(result.structured_content["index"]["freshness"]["kind"] == "opened", "first call opens")

    result = await call(session, "explore", issue="bulk_create batch_size", include_text=True,
                        budget=12, top_k=2)
    text = text_of(result)
    check("    def bulk_create" in text or "def bulk_create" in text, "explore includes text", text)
    shown = sum(len(r.get("text", "").splitlines()) for r in result.structured_content["regions"])
    check(0 < shown <= 12, "included text stays within the budget", f"{shown} lines\n{text}")

    result = await call(session, "search", query="batch_size insert")
    hits = result.structured_content["hits"]
    check(any(h["path"] == "app/models.py" for h in hits), "search", text_of(result))
    check("batch_size" in text_of(result), "search shows matching lines", text_of(result))

    result = await call(session, "search", query="bulk_create", under="tests")
    check(all(h["path"].startswith("tests/") for h in result.structured_content["hits"]),
          "search under a directory", text_of(result))

    result = await call(session, "definition", name="QuerySet.bulk_create")
    defs = result.structured_content["definitions"]
    check(len(defs) == 1 and defs[0]["path"] == "app/models.py" and defs[0]["start"] == 4,
          "definition", text_of(result))
    check("def bulk_create(self, objs, batch_size=None):" in text_of(result),
          "definition shows the signature", text_of(result))

    result = await call(session, "references", symbol="bulk_create")
    refs = result.structured_content["references"]
    paths = sorted(r["path"] for r in refs)
    check(paths == ["app/views.py", "tests/test_models.py"], "references", text_of(result))
    check(all(r["lines"] for r in refs), "references give the exact lines", text_of(result))

    result = await call(session, "neighbours", path="app/models.py")
    groups = result.structured_content["neighbours"]
    importers = sorted(n["path"] for n in groups.get("imported_by", []))
    check("app/views.py" in importers, "neighbours: importers", text_of(result))

    result = await call(session, "read", path="app/models.py", start=4, end=6)
    check(result.structured_content["lines"][0].strip().startswith("def bulk_create"),
          "read", text_of(result))
    check(text_of(result).splitlines()[1].startswith("4| "), "read numbers lines", text_of(result))
    result = await call(session, "read", path=str(repo / "app" / "views.py"), start=4, end=4)
    check(not result.is_error and "def save_all" in text_of(result),
          "read takes an absolute path inside the repository", text_of(result))

    # Edits between calls are in the next answer.
    (repo / "app" / "models.py").write_text(
        MODELS + "\n    def bulk_update(self, objs, fields):\n        return len(objs)\n")
    result = await call(session, "definition", name="bulk_update")
    check(result.structured_content["total"] == 1, "an edit in place is seen", text_of(result))
    check(result.structured_content["index"]["freshness"]["kind"] == "refreshed",
          "the index was refreshed, not rebuilt", str(result.structured_content["index"]))
    (repo / "app" / "signals.py").write_text("def post_bulk_create_signal(sender):\n    pass\n")
    result = await call(session, "search", query="post_bulk_create_signal")
    check(result.structured_content["hits"][0]["path"] == "app/signals.py",
          "an added file is seen", text_of(result))
    (repo / "app" / "views.py").unlink()
    result = await call(session, "references", symbol="bulk_create")
    paths = sorted(r["path"] for r in result.structured_content["references"])
    check(paths == ["tests/test_models.py"], "a deleted file is gone", text_of(result))
    await expect_tool_error(session, "read", {"path": "app/views.py"}, "no file",
                            "reading a deleted file is an error")

    # Another served repository, by path in the call; a directory the server was not started
    # on is refused.
    result = await call(session, "definition", name="other_repo_helper", repo=str(other))
    check(result.structured_content["total"] == 1, "a repository named per call", text_of(result))
    await expect_tool_error(session, "read", {"path": "passwd", "repo": "/etc"}, "not served",
                            "a directory not served is refused")
    await expect_tool_error(session, "search", {"query": "root", "under": "/etc"}, "outside",
                            "`under` outside the repository is refused")

    # Bad input: errors with clear messages, and the server goes on.
    try:
        await session.call_tool("frobnicate", {})
        check(False, "an unknown tool is an error")
    except MCPError as err:
        check("unknown tool" in str(err) and "explore" in str(err), "unknown tool", str(err))
    await expect_tool_error(session, "search", {}, "query", "a missing argument is named")
    await expect_tool_error(session, "search", {"query": 5}, "query", "a wrong type is named")
    await expect_tool_error(session, "search", {"query": "x", "limt": 3}, "unknown field",
                            "an unknown argument is named")
    await expect_tool_error(session, "search", {"query": "   "}, "empty", "an empty query")
    await expect_tool_error(session, "explore", {"issue": "x", "top_k": 0}, "top_k",
                            "top_k 0 is refused")
    await expect_tool_error(session, "definition", {"name": "x", "limit": 10**9}, "limit",
                            "a huge limit is refused")
    await expect_tool_error(session, "read", {"path": "../other/lib/tool.py"}, "outside",
                            "a relative path outside the repository is refused")
    await expect_tool_error(session, "read", {"path": "/etc/passwd"}, "outside",
                            "an absolute path outside the repository is refused")
    await expect_tool_error(session, "read", {"path": "app/models.py", "start": 999}, "past the end",
                            "a start past the end")
    await expect_tool_error(session, "neighbours", {"path": "app/nope.py"}, "no file",
                            "neighbours of a missing file")
    await expect_tool_error(session, "search", {"query": "x", "repo": str(repo / "missing")},
                            "not served", "an unknown repository")
    shutil.rmtree(other)
    await expect_tool_error(session, "definition", {"name": "x", "repo": str(other)},
                            "not available", "a vanished repository")
    result = await call(session, "definition", name="QuerySet")
    check(not result.is_error and result.structured_content["total"] == 1,
          "the server still answers after every fault", text_of(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
