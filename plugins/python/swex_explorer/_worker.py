"""The Python worker: loads an explorer file and serves the host over the worker protocol.

``main(path, args)`` is what ``swex`` runs (``python3 -c <bootstrap> SDK_DIR FILE.py``). The
pieces are also used by :mod:`swex_explorer.testing`, so that a test runs an explorer exactly as
the host does, minus the pipe:

- :func:`load_explorer`: the file becomes an :class:`Explorer` (its ``explore``, name,
  description, optional ``setup(config)``);
- :meth:`Explorer.answer`: one request, in the snapshot as working directory, to a response
  ``{regions, notes}`` (shape errors name the element and what was expected).
"""

import importlib.util
import inspect
import os
import sys
import traceback

from . import _protocol
from ._protocol import PROTOCOL_VERSION, Channel, ProtocolError, ServiceError
from .services import Request, Services

MINIMUM_PYTHON = (3, 9)

# The notes of the call in progress, for the module-level `swex_explorer.note`.
_current_notes = None


def note(text):
    """A remark for the user, returned with the answer of the call in progress."""
    if _current_notes is not None:
        _current_notes.append(str(text))


class ExplorerShapeError(Exception):
    """``explore`` returned something that is not a list of ``(path, start, end)``."""


class Explorer:
    """An explorer file, loaded."""

    def __init__(self, module, path):
        self.module = module
        self.path = path
        stem = os.path.splitext(os.path.basename(path))[0]
        name = getattr(module, "NAME", None)
        self.name = name if isinstance(name, str) and name else stem
        description = getattr(module, "DESCRIPTION", None)
        if not isinstance(description, str):
            doc = (module.__doc__ or "").strip()
            description = doc.splitlines()[0] if doc else ""
        self.description = description
        self.function = getattr(module, "explore", None)
        if not callable(self.function):
            raise LoadError(
                "{} does not define explore: a Python explorer defines "
                "`def explore(issue, instance_id)` returning [(path, start, end), ...] "
                "(or `def explore(request, services)`)".format(path))
        parameters = list(inspect.signature(self.function).parameters)
        # The richer form is chosen by the first parameter's name; anything else is called as
        # the reference calls its explorers, explore(issue, instance_id).
        self.rich = bool(parameters) and parameters[0] == "request"

    def setup(self, config):
        setup = getattr(self.module, "setup", None)
        if callable(setup):
            setup(config)

    def answer(self, request_fields, call):
        """The response to one request: ``{"regions": [...], "notes": [...]}``."""
        global _current_notes
        request = Request(request_fields)
        notes = []
        services = Services(call, notes)
        if request.repo_root:
            os.chdir(request.repo_root)
        _current_notes = notes
        try:
            if self.rich:
                result = self.function(request, services)
            else:
                result = self.function(request.issue, request.instance_id)
        finally:
            _current_notes = None
        regions = normalize_regions(result, request.repo_root, notes)
        return {"regions": regions, "notes": notes}


class LoadError(Exception):
    """The explorer file cannot be loaded."""


def load_explorer(path):
    """Imports an explorer file (its folder is importable, for helper modules next to it)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise LoadError("{}: no such file".format(path))
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(1, folder)
    stem = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(stem, path)
    if spec is None or spec.loader is None:
        raise LoadError("{}: not a Python file".format(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: B902 - anything the file raises is a load failure
        raise LoadError("importing {} failed: {}".format(path, describe(exc))) from exc
    return Explorer(module, path)


_EXPECTED = "expected (path: str, start: int, end: int), a dict with those keys or a Region"


def _field(element, index, key):
    if isinstance(element, dict):
        return element.get(key)
    if isinstance(element, (tuple, list)):
        return element[index] if index < len(element) else None
    return getattr(element, key, None)


def normalize_regions(result, repo_root, notes):
    """Checks ``explore``'s answer and turns it into protocol regions.

    Accepted elements: ``(path, start, end)``, ``(path, start, end, score)``, dicts with
    ``path``, ``start``, ``end`` (``score``, ``why`` optional) and objects with those
    attributes. A wrong shape raises :class:`ExplorerShapeError` naming the element. Absolute
    paths inside ``repo_root`` become relative; regions the host will drop (paths outside the
    snapshot, ``start > end``) are passed on and named in ``notes``.
    """
    if result is None:
        raise ExplorerShapeError("explore returned None; expected a list of (path, start, end)")
    if isinstance(result, (str, bytes, dict)) or not hasattr(result, "__iter__"):
        raise ExplorerShapeError("explore returned {}; expected a list of (path, start, end)"
                                 .format(_short(result)))
    regions = []
    root = os.path.abspath(repo_root) if repo_root else None
    for position, element in enumerate(result):
        what = "explore's element {} ({})".format(position, _short(element))
        if isinstance(element, (tuple, list)) and len(element) not in (3, 4):
            raise ExplorerShapeError("{} has {} fields; {}".format(what, len(element), _EXPECTED))
        if isinstance(element, (str, bytes)) or not (
                isinstance(element, (tuple, list, dict)) or hasattr(element, "path")):
            raise ExplorerShapeError("{} is a {}; {}".format(what, type(element).__name__, _EXPECTED))
        path, start, end = (_field(element, i, k) for i, k in enumerate(("path", "start", "end")))
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise ExplorerShapeError("{}: the path is {}, not a str; {}".format(what, _short(path), _EXPECTED))
        for label, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ExplorerShapeError("{}: {} is {}, not an int; {}".format(
                    what, label, _short(value), _EXPECTED))
        region = {"path": path, "start": start, "end": end}
        score = _field(element, 3, "score")
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            region["score"] = float(score)
        why = element.get("why") if isinstance(element, dict) else getattr(element, "why", None)
        if isinstance(why, str):
            region["why"] = why
        if os.path.isabs(path) and root is not None:
            relative = os.path.relpath(path, root)
            if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
                region["path"] = relative.replace(os.sep, "/")
        shown = "{}:{}-{}".format(region["path"], start, end)
        if os.path.isabs(region["path"]) or ".." in region["path"].replace("\\", "/").split("/"):
            notes.append("region {} ({}) is outside the snapshot: the host drops it".format(position, shown))
        elif end == 0 or end < -1 or (end >= 1 and start > end):
            notes.append("region {} ({}) has start > end or an empty interval: the host drops it"
                         .format(position, shown))
        regions.append(region)
    return regions


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def describe(exc):
    """``Type: message (at file:line in function)`` of an exception, innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    # A shape error names the element already; its frame is the SDK's, not the explorer's.
    if frames and not isinstance(exc, ExplorerShapeError):
        frame = frames[-1]
        where = " (at {}:{} in {})".format(os.path.basename(frame.filename), frame.lineno, frame.name)
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text + where


def _private_streams():
    """The protocol's own copies of descriptors 0 and 1; afterwards descriptor 1 (and
    ``sys.stdout``) is stderr and descriptor 0 reads nothing, so that what an explorer prints or
    reads cannot touch the protocol."""
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)
    return reader, writer


def main(path, args=()):
    """Serves the explorer in ``path`` until ``shutdown`` or the end of the input. Exit status:
    0 after a clean shutdown, 1 when the explorer cannot be loaded or the versions differ, 2 on
    a protocol failure."""
    reader, writer = _private_streams()
    channel = Channel(reader, writer)
    try:
        init = channel.receive()
    except ProtocolError as exc:
        print("swex_explorer worker: {}".format(exc), file=sys.stderr)
        return 2
    if init is None:
        return 0
    if init.get("type") != "init":
        print("swex_explorer worker: expected init, got {!r}".format(init), file=sys.stderr)
        return 2
    if init.get("protocol") != PROTOCOL_VERSION:
        channel.send({"type": "fatal", "message": "the host speaks worker protocol version {}, "
                      "this worker (swex_explorer) speaks version {}".format(
                          init.get("protocol"), PROTOCOL_VERSION)})
        return 1
    if sys.version_info < MINIMUM_PYTHON:
        channel.send({"type": "fatal", "message": "swex_explorer needs Python {}.{} or newer, "
                      "this is {}".format(*MINIMUM_PYTHON, sys.version.split()[0])})
        return 1
    try:
        explorer = load_explorer(path)
        explorer.setup(init.get("config"))
    except BaseException as exc:  # noqa: B902 - reported to the host, never raised
        message = str(exc) if isinstance(exc, LoadError) else "setup failed: " + describe(exc)
        traceback.print_exc()
        channel.send({"type": "fatal", "message": message})
        return 1
    channel.send({"type": "ready", "protocol": PROTOCOL_VERSION, "name": explorer.name,
                  "description": explorer.description})
    return serve(channel, explorer)


def serve(channel, explorer):
    """The request loop after the handshake."""
    next_call = [0]

    def call(service, call_args):
        next_call[0] += 1
        call_id = next_call[0]
        channel.send({"type": "service_call", "id": call_id, "service": service, "args": call_args})
        answer = channel.receive()
        if answer is None:
            raise _protocol.ServiceFailed(service, "the host closed the connection")
        if answer.get("type") != "service_result" or answer.get("id") != call_id:
            raise ProtocolError("expected the result of service call {}, got {!r}".format(call_id, answer))
        if answer.get("error") is not None:
            raise _protocol.service_error(answer["error"])
        if "ok" not in answer:
            raise _protocol.ServiceFailed(service, "the host sent an empty service result")
        return answer["ok"]

    while True:
        try:
            message = channel.receive()
        except ProtocolError as exc:
            print("swex_explorer worker: {}".format(exc), file=sys.stderr)
            return 2
        if message is None or message.get("type") == "shutdown":
            return 0
        if message.get("type") != "explore":
            print("swex_explorer worker: unexpected message {!r}".format(message), file=sys.stderr)
            return 2
        request_id = message.get("id")
        try:
            response = explorer.answer(message.get("request") or {}, call)
            result = {"type": "explore_result", "id": request_id, "response": response}
        except ProtocolError as exc:
            print("swex_explorer worker: {}".format(exc), file=sys.stderr)
            return 2
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: B902 - one failed request, not a dead worker
            traceback.print_exc()
            result = {"type": "explore_result", "id": request_id, "error": describe(exc)}
        channel.send(result)


__all__ = ["main", "note", "load_explorer", "normalize_regions", "Explorer", "ExplorerShapeError",
           "LoadError", "ServiceError"]
