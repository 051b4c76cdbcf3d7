"""What the compute-matched experiment's tests share: settings with a few fields set, a check that a file is a PNG
image, and the rows of a table in the experiment's results.md."""

from electra_studies.compute_matched import settings as experiment_settings

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    """`path` holds a PNG image larger than 100 x 100 pixels."""
    import matplotlib.image

    with open(path, "rb") as handle:
        assert handle.read(8) == PNG_SIGNATURE, path
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 100


def experiment_settings_with(tmp_path, **overrides):
    """The experiment's default settings with an output directory under `tmp_path`, placeholder corpus and GLUE paths
    (nothing reads them) and `overrides` on top."""
    values = dict(output_dir=str(tmp_path / "out"), corpus="unused", glue_dir="unused")
    values.update(overrides)
    return experiment_settings.Settings(**values)


def table_rows(text, heading):
    """{first cell: row} of the first Markdown table under `heading` in `text`, its header row included."""
    lines = text.split(heading, 1)[1].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("| "))
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows[line.split(" | ")[0].lstrip("| ")] = line
    return rows
