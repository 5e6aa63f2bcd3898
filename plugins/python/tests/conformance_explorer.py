"""The worker protocol's conformance explorer, in Python (its Rust twin is in
plugins/host/tests/protocol.rs; the behaviour is specified in plugins/protocol/conformance.json)."""

from swex_explorer import ServiceError

NAME = "conformance"
DESCRIPTION = "the worker protocol's conformance explorer"


def setup(config):
    if isinstance(config, dict) and config.get("refuse"):
        raise ValueError("config refused")


def explore(request, services):
    config = request.config or {}
    if "print" in config:
        print(config["print"])
    for call in config.get("calls", []):
        try:
            services.call(call["service"], call["args"])
            services.note("{}: ok".format(call["service"]))
        except ServiceError as error:
            services.note("{}: {}".format(call["service"], error.kind))
    if "fail" in config:
        raise RuntimeError(config["fail"])
    return [tuple(region) for region in config.get("regions", [])]
