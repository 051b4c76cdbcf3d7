"""An optional package that is not installed is named as pip installs it, with the extra of this package that brings
it, in one error raised before any work."""

import sys

import pytest

from electra_tf.errors import ConfigError
from electra_tf.extras import is_installed, require_modules


def test_missing_packages_are_named_with_the_extra_that_installs_them(monkeypatch):
    require_modules(["json", "numpy"], "analysis", "this needs", ("x",))
    monkeypatch.setitem(sys.modules, "sklearn", None)
    assert not is_installed("sklearn") and is_installed("numpy")
    with pytest.raises(ConfigError) as one:
        require_modules(["numpy", "sklearn"], "analysis", "analyses=representations needs", ("analyses",))
    assert str(one.value) == (
        "analyses=representations needs scikit-learn, which is not installed: pip install 'electra-tf[analysis]'"
    )
    assert one.value.arguments == ("analyses",)
    with pytest.raises(ConfigError) as two:
        require_modules(
            ["no_such_module_here", "sklearn"],
            "onnx",
            "export_format=onnx needs",
            ("export_format",),
            " (or export_format=litert)",
        )
    assert str(two.value) == (
        "export_format=onnx needs no_such_module_here and scikit-learn, which are not "
        "installed: pip install 'electra-tf[onnx]' (or export_format=litert)"
    )
