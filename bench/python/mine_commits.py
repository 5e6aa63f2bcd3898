#!/usr/bin/env python3
"""Task rows from a repository's own history: each picked commit's message stands in for an
issue, its parent is the base commit, and its diff is the fix. A proxy for languages and
repositories no benchmark row covers (docs/ranker.md, "Languages without train rows"); the rows
are in SWE-bench's schema, so `swex dataset import` turns them into bench rows whose ground
truth is the lines the commit edits.

A commit message is written by whoever made the fix and often names what it changed, so these
rows are easier than real issues: compare explorers on them, and look at where one fails, but do
not read their numbers as issue-localisation numbers or train a ranker on them.

Picked commits (in a seeded random order over the newest `--scan` non-merge commits):
- a message of 20 to 400 words once trailers (`Signed-off-by:` …) and GitHub's web-edit lines
  (`* Update src/x.php`, which name the changed file) are removed, and not a merge, release,
  version bump, dependency update, formatting or documentation commit by its subject;
- 1 to 3 changed source files (by extension, `--extensions`), each modified (not added, not
  renamed, not binary) and at least one with a removed or changed line, tests beside them allowed;
- at most `--max-lines` changed lines in all.
Test files (by folder or name, a simple rule) go to `test_patch`, like SWE-bench's.

    python3 bench/python/mine_commits.py --repo rack/rack --git-dir /work/.mirror/rack+rack/repo \
        --language ruby --per-repo 12 -o proxy.jsonl
    swex dataset import proxy.jsonl -o proxy-bench.jsonl
"""
import argparse
import json
import random
import re
import subprocess
import sys

SOURCE_EXTENSIONS = (
    "php rb ts tsx swift cs kt scala ex exs hs lua zig sh bash js mjs vue "
    "py go java rs c h cc cpp hpp"
)
TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|cc|change-id):", re.I)
WEB_EDIT = re.compile(r"^\s*\*?\s*(Update|Create|Delete|Rename) \S+\s*$")
SKIPPED_SUBJECT = re.compile(
    r"^(merge|bump|update (dependency|dependencies|deps)|release|version|chore|docs?:|style"
    r"|revert|apply fixes from styleci)",
    re.I,
)
TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__|testing)/|(test|spec|tests)\.[a-z]+$|[._-](test|spec)\.",
    re.I,
)


def git(git_dir, *args):
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, errors="replace"
    ).stdout


def message_of(git_dir, commit):
    lines = git(git_dir, "log", "-1", "--format=%B", commit).splitlines()
    kept = [l for l in lines if not TRAILER.match(l.strip()) and not WEB_EDIT.match(l)]
    return "\n".join(kept).strip()


def changed_files(git_dir, parent, commit):
    """[(path, added, removed)] or None when a file is binary or renamed."""
    files = []
    for line in git(git_dir, "diff", "--numstat", "-M", parent, commit).splitlines():
        added, removed, path = line.split("\t", 2)
        if added == "-" or "=>" in path:
            return None
        files.append((path, int(added), int(removed)))
    return files


def row_of(git_dir, repo, commit, parent, args, extensions):
    text = message_of(git_dir, commit)
    words = len(re.findall(r"\w+", text))
    if not 20 <= words <= 400 or SKIPPED_SUBJECT.match(text):
        return None
    files = changed_files(git_dir, parent, commit)
    if not files or sum(a + r for _, a, r in files) > args.max_lines:
        return None
    tests = [f for f in files if TEST_PATH.search(f[0])]
    sources = [f for f in files if not TEST_PATH.search(f[0])]
    if not 1 <= len(sources) <= 3:
        return None
    if any(p.rsplit(".", 1)[-1] not in extensions for p, _, _ in sources):
        return None
    if all(removed == 0 for _, _, removed in sources):
        return None  # pure additions: no line of the base commit is edited
    if any(git(git_dir, "cat-file", "-t", f"{parent}:{p}").strip() != "blob" for p, _, _ in sources):
        return None  # a new file: nothing of it exists to find
    owner, name = repo.split("/")
    test_patch = git(git_dir, "diff", parent, commit, "--", *[p for p, _, _ in tests]) if tests else ""
    row = {
        "instance_id": f"{owner}__{name}-c{commit[:10]}",
        "repo": repo,
        "base_commit": parent,
        "problem_statement": text,
        "patch": git(git_dir, "diff", parent, commit, "--", *[p for p, _, _ in sources]),
        "test_patch": test_patch,
    }
    if args.language:
        row["language"] = args.language
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="owner/name, as the rows will name it")
    parser.add_argument("--git-dir", required=True, help="a git directory with the history")
    parser.add_argument("--language", help="the rows' `language` (reports group by it)")
    parser.add_argument("--per-repo", type=int, default=12, help="rows to write (at most)")
    parser.add_argument("--scan", type=int, default=4000, help="newest non-merge commits to draw from")
    parser.add_argument("--max-lines", type=int, default=200, help="most changed lines of a commit")
    parser.add_argument("--extensions", default=SOURCE_EXTENSIONS, help="source file extensions")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-o", "--output", required=True, help="JSON lines, appended to")
    args = parser.parse_args()
    extensions = set(args.extensions.split())
    log = git(args.git_dir, "log", "--no-merges", "-n", str(args.scan), "--format=%H %P")
    commits = [line.split() for line in log.splitlines() if len(line.split()) == 2]
    if not commits:
        sys.exit(f"{args.git_dir}: no commits with one parent (is it a git directory?)")
    random.Random(args.seed).shuffle(commits)
    rows = []
    for commit, parent in commits:
        if len(rows) >= args.per_repo:
            break
        row = row_of(args.git_dir, args.repo, commit, parent, args, extensions)
        if row:
            rows.append(row)
    with open(args.output, "a") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    print(f"{args.repo}: {len(rows)} rows from {len(commits)} commits", file=sys.stderr)


if __name__ == "__main__":
    main()
