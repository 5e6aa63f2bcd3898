"""The worker protocol's conformance suite (plugins/protocol/conformance.json) against this SDK's
worker, started as swex starts it: ``python -c <bootstrap> SDK_DIR conformance_explorer.py``."""

import json
import os
import queue
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SDK = os.path.dirname(HERE)
SUITE = os.path.join(SDK, "..", "protocol", "conformance.json")
BOOTSTRAP = ("import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); "
             "from swex_explorer._worker import main; sys.exit(main(sys.argv[2], sys.argv[3:]))")
LIMIT = 30

with open(SUITE, encoding="utf-8") as handle:
    CASES = json.load(handle)["cases"]


def matches(expected, actual, captured):
    """The suite's matching rule; returns the reason of a mismatch, or None."""
    if isinstance(expected, dict):
        if "$capture" in expected:
            captured[expected["$capture"]] = actual
            return None
        if "$contains" in expected:
            ok = isinstance(actual, str) and expected["$contains"] in actual
            return None if ok else "{!r} does not contain {!r}".format(actual, expected["$contains"])
        if not isinstance(actual, dict):
            return "{!r} is not an object".format(actual)
        for key, value in expected.items():
            if key not in actual:
                return "no field {!r}".format(key)
            why = matches(value, actual[key], captured)
            if why:
                return "{}: {}".format(key, why)
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return "{!r} is not a list of {} elements".format(actual, len(expected))
        for index, (e, a) in enumerate(zip(expected, actual)):
            why = matches(e, a, captured)
            if why:
                return "[{}]: {}".format(index, why)
        return None
    return None if expected == actual else "{!r} is not {!r}".format(actual, expected)


def substitute(value, captured):
    if isinstance(value, dict):
        if "$ref" in value:
            return captured.get(value["$ref"])
        return {k: substitute(v, captured) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, captured) for v in value]
    return value


def test_the_suite_checks_something():
    assert len(CASES) >= 10
    assert matches({"a": [1, {"$contains": "x"}]}, {"a": [1, "yxz"], "b": 0}, {}) is None
    assert matches({"a": [1]}, {"a": [1, 2]}, {}) is not None


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_conformance(case):
    worker = subprocess.Popen(
        [sys.executable, "-c", BOOTSTRAP, SDK, os.path.join(HERE, "conformance_explorer.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in worker.stdout] and None, daemon=True).start()
    captured = {}
    try:
        for step in case["steps"]:
            if "send" in step:
                message = json.dumps(substitute(step["send"], captured))
                worker.stdin.write(message.encode("utf-8") + b"\n")
                worker.stdin.flush()
            elif "expect" in step:
                line = lines.get(timeout=LIMIT)
                actual = json.loads(line)
                why = matches(step["expect"], actual, captured)
                assert why is None, "{}\n expected {}\n got {}".format(why, step["expect"], actual)
            elif "close" in step:
                worker.stdin.close()
            elif "exit" in step:
                if not worker.stdin.closed:
                    worker.stdin.close()
                assert worker.wait(timeout=LIMIT) == step["exit"]
            else:
                raise AssertionError("unknown step {}".format(step))
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait()
