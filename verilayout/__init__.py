"""verilayout: proofs and synthesis for GPU tensor layouts."""
from .errors import LayoutError
from .layout import LinearLayout

__all__ = ["LayoutError", "LinearLayout"]
__version__ = "0.1.0"
