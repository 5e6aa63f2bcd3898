"""The SDK as an explorer author uses it: loading a file, the reference shape and the rich form,
shape errors that name the element, notes, and the plain-files test backend."""

import os
import textwrap

import pytest

from swex_explorer import ExplorerShapeError, LoadError, NotFound, Unavailable
from swex_explorer.testing import FilesBackend, run
from swex_explorer._worker import load_explorer


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "urls.py").write_text("import os\ndef parse_url(url):\n    return url\n")
    (root / "src" / "latin1.txt").write_bytes(b"caf\xe9 cr\xe8me\r\nmain course\n")
    (root / "README.md").write_text("parse_url lives in src/urls.py\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: x\n")
    return root


def explorer_file(tmp_path, source, name="my_explorer.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_a_reference_shaped_explorer_reads_files_relative_to_the_snapshot(tmp_path, repo):
    path = explorer_file(tmp_path, """
        import os
        def explore(issue, instance_id):
            found = []
            for folder, _, files in sorted(os.walk(".")):
                for name in sorted(files):
                    rel = os.path.relpath(os.path.join(folder, name))
                    if not rel.startswith(".git") and "parse_url" in open(rel, errors="ignore").read():
                        found.append((rel, 1, -1))
            print("printing is harmless")
            return found
    """)
    answer = run(path, repo, "parse_url drops the port", instance_id="x-1")
    assert answer == {"regions": [{"path": "README.md", "start": 1, "end": -1},
                                  {"path": "src/urls.py", "start": 1, "end": -1}], "notes": []}


def test_the_rich_form_gets_the_request_and_typed_services(tmp_path, repo):
    path = explorer_file(tmp_path, """
        import swex_explorer
        NAME = "rich-one"
        def explore(request, services):
            lines = services.read_lines("src/urls.py", 2, 3)
            hits = services.grep("def ", path_glob="src/*.py")
            try:
                services.lexical_search(request.issue)
            except swex_explorer.Unavailable as error:
                services.note("no index: " + error.kind)
            try:
                services.file_info("missing.py")
            except swex_explorer.NotFound:
                swex_explorer.note("missing.py is not there")
            return [(m.path, m.line, m.line + len(lines.lines) - 1, 0.5) for m in hits.matches][:request.top_k]
    """)
    explorer = load_explorer(str(path))
    assert (explorer.name, explorer.rich) == ("rich-one", True)
    answer = run(explorer, repo, "parse_url", top_k=3)
    assert answer["regions"] == [{"path": "src/urls.py", "start": 2, "end": 3, "score": 0.5}]
    assert answer["notes"] == ["no index: unavailable", "missing.py is not there"]


@pytest.mark.parametrize("returned, needle", [
    ("None", "returned None"),
    ("'src/urls.py'", "returned 'src/urls.py'"),
    ("[('a.py', 1)]", "element 0 (('a.py', 1)) has 2 fields"),
    ("[('a.py', 1, 2), ('b.py', '3', 4)]", "element 1 (('b.py', '3', 4)): start is '3', not an int"),
    ("[('a.py', 1, 2.0)]", "end is 2.0, not an int"),
    ("[(7, 1, 2)]", "the path is 7, not a str"),
    ("[{'path': 'a.py', 'start': 1}]", "end is None, not an int"),
    ("['a.py']", "element 0 ('a.py') is a str"),
])
def test_a_wrong_shape_is_named(tmp_path, repo, returned, needle):
    path = explorer_file(tmp_path, "def explore(issue, instance_id):\n    return {}\n".format(returned))
    with pytest.raises(ExplorerShapeError) as error:
        run(path, repo, "issue")
    assert needle in str(error.value)


def test_regions_the_host_drops_are_passed_on_and_named(tmp_path, repo):
    path = explorer_file(tmp_path, """
        import os
        def explore(issue, instance_id):
            return [(os.path.abspath("src/urls.py"), 2, 3), ("src/urls.py", 9, 4),
                    ("/etc/passwd", 1, 2), ("../outside.py", 1, 1), {"path": "README.md", "start": 1, "end": 1, "why": "docs"}]
    """)
    answer = run(path, repo, "issue")
    assert [r["path"] for r in answer["regions"]] == ["src/urls.py", "src/urls.py", "/etc/passwd",
                                                      "../outside.py", "README.md"]
    assert answer["regions"][4]["why"] == "docs"
    assert answer["notes"] == [
        "region 1 (src/urls.py:9-4) has start > end or an empty interval: the host drops it",
        "region 2 (/etc/passwd:1-2) is outside the snapshot: the host drops it",
        "region 3 (../outside.py:1-1) is outside the snapshot: the host drops it",
    ]


def test_a_file_without_explore_is_refused(tmp_path):
    path = explorer_file(tmp_path, "def search(issue):\n    return []\n")
    with pytest.raises(LoadError, match="does not define explore"):
        load_explorer(str(path))


def test_an_import_error_is_a_load_error(tmp_path):
    path = explorer_file(tmp_path, "import no_such_module_here\ndef explore(issue, instance_id):\n    return []\n")
    with pytest.raises(LoadError, match="No module named 'no_such_module_here'"):
        load_explorer(str(path))


def test_the_files_backend_answers_like_the_host(repo):
    backend = FilesBackend(repo)
    files = backend.call("list_files", {})["files"]
    assert [f["path"] for f in files] == ["README.md", "src/latin1.txt", "src/urls.py"]
    assert backend.call("list_files", {"under": "src/"})["files"][0] == {"path": "src/latin1.txt", "size": 24}
    assert backend.call("read_lines", {"path": "src/latin1.txt"}) == {
        "start": 1, "lines": ["caf crme", "main course"], "total_lines": 2}
    assert backend.call("read_lines", {"path": "src/urls.py", "start": 2, "end": -1})["lines"] == [
        "def parse_url(url):", "    return url"]
    assert backend.call("read_lines", {"path": "src/urls.py", "start": 3, "end": 2})["lines"] == []
    assert backend.call("file_info", {"path": "src/urls.py"})["file"]["line_count"] == 3
    grep = backend.call("grep", {"pattern": "MAIN", "case_insensitive": True, "limit": 5})
    assert grep == {"matches": [{"path": "src/latin1.txt", "line": 2, "text": "main course"}],
                    "truncated": False}
    for path in ["missing.py", "../repo/README.md", "/etc/passwd", "src"]:
        with pytest.raises(NotFound):
            backend.call("file_info", {"path": path})
    with pytest.raises(Unavailable):
        backend.call("definitions", {"name": "parse_url"})


def test_the_working_directory_is_restored(tmp_path, repo):
    path = explorer_file(tmp_path, "def explore(issue, instance_id):\n    return []\n")
    before = os.getcwd()
    run(path, repo, "issue")
    assert os.getcwd() == before
