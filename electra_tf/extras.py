"""The check that refuses work needing an optional package before the work starts, naming the extra of this package
that installs it (pyproject.toml's [project.optional-dependencies]). No TensorFlow needed."""

import importlib.util

from electra_tf.errors import ConfigError

# The package to install, where its name is not the module's.
PACKAGE_NAMES = {"sklearn": "scikit-learn"}


def is_installed(module):
    return importlib.util.find_spec(module) is not None


def require_modules(modules, extra, needs, arguments, otherwise=""):
    """Raise a `ConfigError` when a module of `modules` (import names) is not installed: "`needs` <the packages>,
    which are not installed: pip install 'electra-tf[`extra`]'`otherwise`". `needs` names who needs them, with its
    verb ("export_format=onnx needs"); `arguments` are the error's."""
    absent = [PACKAGE_NAMES.get(module, module) for module in modules if not is_installed(module)]
    if absent:
        raise ConfigError(
            f"{needs} {' and '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not "
            f"installed: pip install 'electra-tf[{extra}]'{otherwise}",
            arguments=arguments,
        )
