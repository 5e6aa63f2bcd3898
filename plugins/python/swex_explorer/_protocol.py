"""The worker protocol's Python side: message framing, version, service names and errors.

One message is one JSON object on one line (UTF-8, ``\\n``-terminated). The protocol is
described in docs/protocol.md and its messages in plugins/protocol/schema.json; the Rust twin
is ``plugins/host/src/isolated.rs`` (types) and ``worker.rs`` (swex's own worker).
"""

import json

#: The version of the worker protocol this SDK speaks (the host's ``PROTOCOL_VERSION``).
PROTOCOL_VERSION = 1

#: Every service of the services table, in table order (``swex_plugin::ServiceId::ALL``).
SERVICES = (
    "list_files",
    "file_info",
    "read_lines",
    "chunks",
    "lexical_search",
    "dense_search",
    "definitions",
    "graph_neighbours",
    "personalized_pagerank",
    "grep",
    "issue_clues",
    "code_search",
    "history_search",
)


class ServiceError(Exception):
    """A service call failed. ``kind`` is one of ``invalid_args``, ``not_found``,
    ``unavailable``, ``failed``, ``panic``; subclasses exist for the common ones."""

    kind = "failed"

    def __init__(self, service, message, kind=None):
        self.service = service
        self.message = message
        if kind is not None:
            self.kind = kind
        super().__init__("service {} {}: {}".format(service, self.kind, message))


class InvalidArgs(ServiceError):
    kind = "invalid_args"


class NotFound(ServiceError):
    kind = "not_found"


class Unavailable(ServiceError):
    """The host's backend does not provide this service (e.g. no index: ``--no-index``)."""

    kind = "unavailable"


class ServiceFailed(ServiceError):
    kind = "failed"


_ERRORS = {
    "invalid_args": InvalidArgs,
    "not_found": NotFound,
    "unavailable": Unavailable,
    "failed": ServiceFailed,
}


def service_error(error):
    """The exception for a protocol ``error`` object ``{service, kind, message}``."""
    kind = error.get("kind", "failed")
    cls = _ERRORS.get(kind, ServiceError)
    return cls(error.get("service", "?"), error.get("message", ""), kind=kind)


def error_object(exc):
    """The protocol ``error`` object of a :class:`ServiceError`."""
    return {"service": exc.service, "kind": exc.kind, "message": exc.message}


class ProtocolError(Exception):
    """The other side sent something that is not a protocol message."""


class Channel:
    """JSON lines over two binary streams."""

    def __init__(self, reader, writer):
        self._reader = reader
        self._writer = writer

    def send(self, message):
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._writer.write(line.encode("utf-8"))
        self._writer.flush()

    def receive(self):
        """The next message, or ``None`` at the end of the input."""
        line = self._reader.readline()
        if not line:
            return None
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            raise ProtocolError("not a JSON line: {!r} ({})".format(line[:200], exc))
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ProtocolError("not a protocol message: {!r}".format(line[:200]))
        return message
