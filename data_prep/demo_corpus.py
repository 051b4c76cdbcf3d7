"""The built-in demo corpus: docstrings of the Python standard library, present on every machine.

Each public standard-library module is one document; its module, class and function docstrings are split into
paragraphs, one paragraph per line, with a blank line between documents (the format `electra-build-data`
reads). Sources are parsed with `ast`, never imported, so nothing runs and the output depends only on the Python
installation's files: the same interpreter always gives the same corpus.

`python -m data_prep.commands.demo_corpus --output=demo_output/corpus.txt` writes it.
"""

import ast
import os
import sysconfig

# Directories of the standard library that are tests, tools or vendored code rather than library documentation.
_SKIPPED_DIRS = frozenset(
    {"test", "tests", "idlelib", "lib2to3", "turtledemo", "ensurepip", "site-packages", "dist-packages", "__pycache__"}
)
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
_MIN_PARAGRAPH_CHARS = 20


def standard_library_sources(stdlib_dir=None):
    """Sorted relative paths of public standard-library modules (no leading underscores, no tests)."""
    stdlib_dir = stdlib_dir or sysconfig.get_paths()["stdlib"]
    sources = []
    for root, dirs, files in os.walk(stdlib_dir):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(("_", ".", "config-"))]
        for name in files:
            if name.endswith(".py") and not name.startswith("_") or name == "__init__.py":
                sources.append(os.path.relpath(os.path.join(root, name), stdlib_dir))
    return stdlib_dir, sorted(sources)


def docstring_paragraphs(source):
    """Paragraphs (whitespace-joined lines) of every docstring in a module's source, in source order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = [tree] + [
        node for node in ast.walk(tree) if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    nodes.sort(key=lambda node: getattr(node, "lineno", 0))
    paragraphs = []
    for node in nodes:
        docstring = ast.get_docstring(node, clean=True)
        if not docstring:
            continue
        for block in docstring.split("\n\n"):
            paragraph = " ".join(block.split())
            # Very short fragments ("Args:", "Returns:") carry no sentence structure worth training on.
            if len(paragraph) >= _MIN_PARAGRAPH_CHARS:
                paragraphs.append(paragraph)
    return paragraphs


def demo_documents(max_bytes=DEFAULT_MAX_BYTES, stdlib_dir=None):
    """Yields documents (lists of paragraphs), one per module, until about `max_bytes` of text."""
    stdlib_dir, sources = standard_library_sources(stdlib_dir)
    total = 0
    for relative_path in sources:
        with open(os.path.join(stdlib_dir, relative_path), "rb") as f:
            raw = f.read()
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        paragraphs = docstring_paragraphs(source)
        if len(paragraphs) < 2:
            continue
        yield paragraphs
        total += sum(len(p.encode("utf-8")) + 1 for p in paragraphs) + 1
        if total >= max_bytes:
            return


def write_demo_corpus(output, max_bytes=DEFAULT_MAX_BYTES, stdlib_dir=None):
    """Writes the demo corpus to `output` atomically; returns (num_documents, num_bytes)."""
    text = "\n\n".join("\n".join(paragraphs) for paragraphs in demo_documents(max_bytes, stdlib_dir)) + "\n"
    data = text.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    temporary = f"{output}.tmp-{os.getpid()}"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, output)
    return text.count("\n\n") + 1, len(data)
