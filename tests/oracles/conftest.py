"""Oracle tests import the Triton harness as ``import triton_oracle`` (it lives here)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
