"""The request an explorer gets and the services it may call, one typed method per service.

A :class:`Services` object wraps one function ``call(service, args) -> dict`` (the worker's,
which proxies the call to the host; or a test backend's, :mod:`swex_explorer.testing`). Results
are :class:`Record` objects: the JSON objects of docs/protocol.md, readable as ``hit.path`` or
``hit["path"]``. A failed call raises a :class:`~swex_explorer.ServiceError` subclass
(``NotFound``, ``Unavailable``, ``InvalidArgs``, ``ServiceFailed``).
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union


class Record(dict):
    """A JSON object whose fields are also attributes (``entry.path``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _records(value):
    if isinstance(value, dict):
        return Record((k, _records(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_records(v) for v in value]
    return value


class Request:
    """What the host asks: ``issue``, ``instance_id``, ``top_k``, ``line_budget`` (``None``: no
    limit given), per-request ``config``, ``repo_root`` (the snapshot on disk, also the working
    directory during the call) and ``ground_truth`` (only for explorers meant to see it)."""

    def __init__(self, fields: Dict[str, Any]):
        self.raw = fields
        self.instance_id = fields.get("instance_id", "")
        self.issue = fields.get("issue", "")
        self.top_k = fields.get("top_k", 10)
        self.line_budget = fields.get("line_budget")
        self.config = fields.get("config")
        self.repo_root = fields.get("repo_root")
        self.ground_truth = fields.get("ground_truth")

    def __repr__(self):
        return "Request(instance_id={!r}, top_k={!r})".format(self.instance_id, self.top_k)


def _drop_none(args):
    return {k: v for k, v in args.items() if v is not None}


class Services:
    """The snapshot and its indexes during one call (docs/writing-an-explorer.md, "Services")."""

    def __init__(self, call: Callable[[str, Dict[str, Any]], Dict[str, Any]], notes=None):
        self._call = call
        self.notes = notes if notes is not None else []

    def call(self, service: str, args: Dict[str, Any]) -> Record:
        """Any service by name with raw JSON arguments; the raw result object."""
        return _records(self._call(service, args))

    def note(self, text: str) -> None:
        """A remark for the user, returned with the answer (``notes``)."""
        self.notes.append(str(text))

    # ---- files ----

    def list_files(self, under: Optional[str] = None) -> List[Record]:
        """Every file (``path``, ``size``, ``language``?, ``line_count``?), sorted by path."""
        return self.call("list_files", _drop_none({"under": under}))["files"]

    def file_info(self, path: str) -> Record:
        """One file's entry, ``line_count`` filled in."""
        return self.call("file_info", {"path": path})["file"]

    def read_lines(self, path: str, start: Optional[int] = None, end: Optional[int] = None) -> Record:
        """Lines ``start..=end`` (1-based; ``end`` ``None`` or -1: to the end) split like
        ``str.splitlines()``: a record ``start``, ``lines``, ``total_lines``."""
        return self.call("read_lines", _drop_none({"path": path, "start": start, "end": end}))

    def grep(self, pattern: str, path_glob: Optional[str] = None,
             case_insensitive: bool = False, limit: int = 100) -> Record:
        """Lines matching a regular expression (Rust ``regex`` syntax): ``matches``
        (``path``, ``line``, ``text``) and ``truncated``."""
        args = {"pattern": pattern, "limit": limit}
        if case_insensitive:
            args["case_insensitive"] = True
        if path_glob is not None:
            args["path_glob"] = path_glob
        return self.call("grep", args)

    # ---- the engine's indexes ----

    def chunks(self, path: str) -> List[Record]:
        """The engine's chunks of a file (``start``, ``end``, ``kind``, ``name``?)."""
        return self.call("chunks", {"path": path})["chunks"]

    def lexical_search(self, query: str, limit: int = 10, under: Optional[str] = None,
                       terms: Optional[Sequence[Tuple[str, float]]] = None,
                       whole_files: bool = False) -> List[Record]:
        """BM25 over the engine's chunks: hits (``path``, ``start``, ``end``, ``score``, ``kind``?,
        ``name``?), best first. ``terms``: weighted terms to search instead of the query's.
        ``whole_files``: rank whole files instead (BM25 over each file; a hit spans the file)."""
        args = _drop_none({"query": query, "limit": limit, "under": under})
        if terms:
            args["terms"] = [{"text": t, "weight": float(w)} for t, w in terms]
        if whole_files:
            args["whole_files"] = True
        return self.call("lexical_search", args)["hits"]

    def dense_search(self, query: str, limit: int = 10, under: Optional[str] = None,
                     mode: Optional[str] = None, candidates: Optional[int] = None,
                     rerank_regions: Optional[Iterable[Tuple[str, int, int]]] = None) -> List[Record]:
        """Embedding search (``mode``: ``auto``, ``full``, ``rerank``): hits, best first."""
        args = _drop_none({"query": query, "limit": limit, "under": under, "mode": mode,
                           "candidates": candidates})
        if rerank_regions:
            args["rerank_regions"] = [{"path": p, "start": s, "end": e} for p, s, e in rerank_regions]
        return self.call("dense_search", args)["hits"]

    def definitions(self, name: str, limit: Optional[int] = None) -> List[Record]:
        """Definitions whose bare or qualified name is ``name`` (``path``, ``name``,
        ``qualified_name``, ``kind``, ``start``, ``end``)."""
        return self.call("definitions", _drop_none({"name": name, "limit": limit}))["definitions"]

    def graph_neighbours(self, path: str, name: Optional[str] = None,
                         edge_kinds: Optional[Sequence[str]] = None, direction: Optional[str] = None,
                         limit: Optional[int] = None) -> List[Record]:
        """Neighbours of a file (``name`` ``None``) or of a definition in it, by qualified name,
        along ``direction`` edges (``out``, the default; ``in``; ``both``): ``node``, ``edge``,
        ``direction``."""
        args = _drop_none({"node": _drop_none({"path": path, "name": name}), "direction": direction})
        if edge_kinds:
            args["edge_kinds"] = list(edge_kinds)
        if limit is not None:
            args["limit"] = limit
        return self.call("graph_neighbours", args)["neighbours"]

    def personalized_pagerank(self, seeds: Iterable[Union[Tuple[str, Optional[str], float], Dict[str, Any]]],
                              limit: int = 20, damping: Optional[float] = None,
                              edge_kinds: Optional[Sequence[str]] = None) -> List[Record]:
        """PageRank personalised on ``seeds`` (``(path, name or None, weight)``): ranked
        ``node``, ``score``."""
        wire = []
        for seed in seeds:
            if isinstance(seed, dict):
                wire.append(seed)
            else:
                path, name, weight = seed
                wire.append({"node": _drop_none({"path": path, "name": name}), "weight": float(weight)})
        args = _drop_none({"seeds": wire, "limit": limit, "damping": damping})
        if edge_kinds:
            args["edge_kinds"] = list(edge_kinds)
        return self.call("personalized_pagerank", args)["nodes"]

    def issue_clues(self, text: str) -> Record:
        """What the host's issue parser reads out of a text: ``frames``, ``paths``,
        ``identifiers``, ``code_spans``, ``terms``."""
        return self.call("issue_clues", {"text": text})

    def code_search(self, query: str, limit: int = 10, per_file: Optional[int] = None,
                    under: Optional[str] = None, dense: Optional[str] = None) -> Record:
        """The engine's ranked code search for a short query: ``hits``, ``query_kind``,
        ``dense``."""
        return self.call("code_search", _drop_none({"query": query, "limit": limit,
                                                    "per_file": per_file, "under": under,
                                                    "dense": dense}))

    def history_search(self, query: str, limit: int = 10,
                       paths: Optional[Sequence[str]] = None) -> Record:
        """Files ranked by how well their commit messages match ``query`` (BM25 with the
        statistics of ``paths``, or of every file with history): ``hits`` (``path``, ``score``,
        ``similar_commits``: the file's share of the 20 commits most like ``query``,
        ``referenced``: its share of the commits naming an issue ``query`` names, ``#1234``),
        ``commit``, ``commits``, ``similar_coverage`` (how much of ``query`` its most similar
        commit says: that commit's BM25 over the sum of the query terms' inverse document
        frequencies, about 1 when a past message repeats its words). ``unavailable`` for a
        checkout without git history."""
        args = {"query": query, "limit": limit}
        if paths is not None:
            args["paths"] = list(paths)
        return self.call("history_search", args)
