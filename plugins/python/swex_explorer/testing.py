"""Test an explorer without swex: a plain-files backend and a runner.

:class:`FilesBackend` answers the file services — ``list_files``, ``file_info``,
``read_lines``, ``grep`` — from a folder, like swex's ``--no-index`` backend (lines split like
``str.splitlines()`` after UTF-8 decoding with invalid bytes dropped; ``.git`` skipped; no
symbolic link followed out of the folder; unlike swex, no ignore files are read, ``grep`` uses
Python's ``re`` and ``path_glob`` is an ``fnmatch`` pattern); the index services raise
``Unavailable``, so a test
also covers an explorer's fallback. :func:`run` calls an explorer file exactly as the worker
does (snapshot as working directory, the same shape checks), minus the pipe::

    from swex_explorer.testing import FilesBackend, run

    def test_finds_the_parser(tmp_path):
        (tmp_path / "urls.py").write_text("def parse_url(url):\\n    return url\\n")
        answer = run("my_explorer.py", tmp_path, "parse_url drops the port")
        assert answer["regions"][0]["path"] == "urls.py"

Like the Rust SDK's ``swex-plugin-serve`` for Rust explorers.
"""

import fnmatch
import os
import re

from ._protocol import InvalidArgs, NotFound, Unavailable
from ._worker import Explorer, load_explorer

GREP_TEXT_MAX_BYTES = 400


def _read_text(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="ignore")


class FilesBackend:
    """The file services over a folder. ``call(service, args)`` is the function a
    :class:`~swex_explorer.Services` object wraps."""

    def __init__(self, root):
        self.root = os.path.realpath(os.fspath(root))

    def _files(self):
        found = []
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if d != ".git"
                       and not os.path.islink(os.path.join(folder, d))]
            for name in files:
                full = os.path.join(folder, name)
                if os.path.islink(full) and not os.path.realpath(full).startswith(self.root + os.sep):
                    continue
                if not os.path.isfile(full):
                    continue
                found.append(os.path.relpath(full, self.root).replace(os.sep, "/"))
        return sorted(found, key=lambda p: p.encode("utf-8"))

    def _resolve(self, service, args):
        path = args.get("path")
        if not isinstance(path, str):
            raise InvalidArgs(service, "`path` must be a string")
        parts = path.split("/")
        full = os.path.realpath(os.path.join(self.root, *parts))
        if path.startswith("/") or ".." in parts or not full.startswith(self.root + os.sep) \
                or not os.path.isfile(full):
            raise NotFound(service, "no file {} in the snapshot".format(path))
        return path, full

    def call(self, service, args):
        method = getattr(self, "_" + service, None)
        if method is None:
            raise Unavailable(service, "the plain-files test backend has no index")
        return method(args)

    def _list_files(self, args):
        under = (args.get("under") or "").strip("/")
        if under.startswith("./"):
            under = under[2:]
        files = []
        for path in self._files():
            if under and not (path.startswith(under + "/")):
                continue
            files.append({"path": path, "size": os.path.getsize(os.path.join(self.root, path))})
        return {"files": files}

    def _file_info(self, args):
        path, full = self._resolve("file_info", args)
        lines = _read_text(full).splitlines()
        return {"file": {"path": path, "size": os.path.getsize(full), "line_count": len(lines)}}

    def _read_lines(self, args):
        path, full = self._resolve("read_lines", args)
        start, end = args.get("start", 1), args.get("end", -1)
        if start is None:
            start = 1
        if end is None:
            end = -1
        if not isinstance(start, int) or not isinstance(end, int):
            raise InvalidArgs("read_lines", "`start` and `end` must be integers")
        lines = _read_text(full).splitlines()
        last = len(lines) if end == -1 else min(end, len(lines))
        first = max(start, 1)
        return {"start": start, "lines": lines[first - 1:last] if last >= first else [],
                "total_lines": len(lines)}

    def _grep(self, args):
        try:
            pattern = re.compile(args["pattern"], re.IGNORECASE if args.get("case_insensitive") else 0)
        except (KeyError, re.error) as exc:
            raise InvalidArgs("grep", str(exc))
        glob = args.get("path_glob")
        limit = args.get("limit", 100)
        matches, truncated = [], False
        for path in self._files():
            if glob is not None and not fnmatch.fnmatchcase(path, glob):
                continue
            for number, line in enumerate(_read_text(os.path.join(self.root, path)).splitlines(), 1):
                if pattern.search(line):
                    if len(matches) == limit:
                        truncated = True
                        break
                    text = line.encode("utf-8")[:GREP_TEXT_MAX_BYTES].decode("utf-8", errors="ignore")
                    matches.append({"path": path, "line": number, "text": text})
            if truncated:
                break
        return {"matches": matches, "truncated": truncated}


def run(explorer, repo, issue, instance_id="adhoc", top_k=10, line_budget=None, config=None,
        backend=None):
    """One request to an explorer (a file path or a loaded :class:`Explorer`) on the folder
    ``repo``: the response ``{"regions": [...], "notes": [...]}`` the worker would send. The
    working directory is restored afterwards."""
    if not isinstance(explorer, Explorer):
        explorer = load_explorer(os.fspath(explorer))
        explorer.setup(config)
    backend = backend or FilesBackend(repo)
    request = {"instance_id": instance_id, "issue": issue, "top_k": top_k,
               "repo_root": os.path.realpath(os.fspath(repo))}
    if line_budget is not None:
        request["line_budget"] = line_budget
    before = os.getcwd()
    try:
        return explorer.answer(request, backend.call)
    finally:
        os.chdir(before)
