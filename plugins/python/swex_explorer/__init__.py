"""swex_explorer: write swex explorers in Python.

An explorer is a Python file that defines ``explore``, in the SWE-Explore reference's shape::

    def explore(issue, instance_id):
        return [("src/app.py", 10, 20), ("src/util.py", 1, -1)]   # (path, start, end)

or in the richer form, with the engine's services (:class:`Services`)::

    def explore(request, services):
        hits = services.lexical_search(request.issue, limit=request.top_k)
        return [(h.path, h.start, h.end) for h in hits]

Run it with ``swex explore --plugin my_explorer.py`` or ``swex bench --plugin my_explorer.py -e
my_explorer``; test it without swex with :mod:`swex_explorer.testing`. The call runs with the
snapshot as working directory. Optional module attributes: ``NAME`` (default: the file's stem),
``DESCRIPTION``, ``setup(config)`` (called once with the explorer's config). Anything printed
goes to stderr. The wire protocol is docs/protocol.md; this package is the Python twin of the
Rust ``swex-plugin`` crate and speaks :data:`PROTOCOL_VERSION`.
"""

from ._protocol import (
    PROTOCOL_VERSION,
    SERVICES,
    InvalidArgs,
    NotFound,
    ServiceError,
    ServiceFailed,
    Unavailable,
)
from ._worker import ExplorerShapeError, LoadError, note
from .services import Record, Request, Services

__version__ = "0.1.0"

__all__ = [
    "PROTOCOL_VERSION",
    "SERVICES",
    "ExplorerShapeError",
    "InvalidArgs",
    "LoadError",
    "NotFound",
    "Record",
    "Request",
    "ServiceError",
    "ServiceFailed",
    "Services",
    "Unavailable",
    "note",
]
