"""Optional dependencies (the package's extras), checked when settings load rather than halfway
through a stage."""

from __future__ import annotations

import importlib.util
import sys

EXTRAS = {
    "ray": ("ray", "ray"),
    "faiss": ("faiss", "faiss"),
    "onnx": ("onnxruntime", "onnx"),
    "openvino": ("openvino", "openvino"),
}
"""What each optional feature imports, and the pip extra that installs it."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def require(feature: str) -> None:
    """Raise ``ValueError`` (a settings error at the key being validated) when ``feature``'s
    package is missing, saying which pip extra brings it."""
    module, extra = EXTRAS[feature]
    if not installed(module):
        raise ValueError(
            f"needs the {module!r} package, which is not installed: "
            f"pip install 'benchsmith[{extra}]'"
        )
