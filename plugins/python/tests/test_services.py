"""Every typed method of `Services` sends exactly the arguments the host's types take: the
arguments of the conformance suite's `every_service_is_callable` case (which the Rust worker
sends unchanged, and whose shapes are the Rust SDK's `*Args` types)."""

import json
import os

import pytest

from swex_explorer import SERVICES, NotFound, Services
from swex_explorer._protocol import service_error

SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "conformance.json")

with open(SUITE, encoding="utf-8") as handle:
    CASE = next(c for c in json.load(handle)["cases"] if c["name"] == "every_service_is_callable")
EXPECTED = {step["expect"]["service"]: step["expect"]["args"]
            for step in CASE["steps"] if "expect" in step and "service" in step["expect"]}

CALLS = {
    "list_files": lambda s: s.list_files(under="src"),
    "file_info": lambda s: s.file_info("src/app.py"),
    "read_lines": lambda s: s.read_lines("src/app.py", 1, 3),
    "chunks": lambda s: s.chunks("src/app.py"),
    "lexical_search": lambda s: s.lexical_search("parse url", limit=3),
    "dense_search": lambda s: s.dense_search("parse url", limit=3),
    "definitions": lambda s: s.definitions("parse_url"),
    "graph_neighbours": lambda s: s.graph_neighbours("src/app.py"),
    "personalized_pagerank": lambda s: s.personalized_pagerank([("src/app.py", None, 1.0)], limit=3),
    "grep": lambda s: s.grep("def ", limit=5),
    "issue_clues": lambda s: s.issue_clues("parse_url drops the port"),
    "code_search": lambda s: s.code_search("parse url", limit=3),
    "history_search": lambda s: s.history_search("parse url", limit=3, paths=["src/app.py"]),
}

# What each result holds, so that the methods can unwrap it.
RESULTS = {"list_files": {"files": []}, "file_info": {"file": {"path": "src/app.py"}},
           "chunks": {"chunks": []}, "lexical_search": {"hits": []}, "dense_search": {"hits": []},
           "definitions": {"definitions": []}, "graph_neighbours": {"neighbours": []},
           "personalized_pagerank": {"nodes": []}}


def test_every_service_has_a_typed_method():
    assert sorted(CALLS) == sorted(SERVICES) == sorted(EXPECTED)


@pytest.mark.parametrize("service", SERVICES)
def test_the_method_sends_the_hosts_arguments(service):
    sent = []

    def call(name, args):
        sent.append((name, args))
        return RESULTS.get(name, {})

    CALLS[service](Services(call))
    assert sent == [(service, EXPECTED[service])]


def test_whole_files_is_sent_only_when_asked():
    sent = []

    def call(name, args):
        sent.append(args)
        return {"hits": []}

    Services(call).lexical_search("parse url", limit=3, whole_files=True)
    Services(call).lexical_search("parse url", limit=3)
    assert sent == [{"query": "parse url", "limit": 3, "whole_files": True},
                    {"query": "parse url", "limit": 3}]


def test_results_are_records_and_errors_are_typed():
    services = Services(lambda name, args: {"files": [{"path": "a.py", "size": 3}]})
    files = services.list_files()
    assert files[0].path == files[0]["path"] == "a.py"

    def failing(name, args):
        raise service_error({"service": name, "kind": "not_found", "message": "no a.py"})

    with pytest.raises(NotFound) as error:
        Services(failing).read_lines("a.py")
    assert (error.value.service, error.value.kind, error.value.message) == ("read_lines", "not_found", "no a.py")
    assert str(error.value) == "service read_lines not_found: no a.py"
