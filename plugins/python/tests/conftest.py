"""Makes the SDK in this checkout importable without installing it (tests run from any folder)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
