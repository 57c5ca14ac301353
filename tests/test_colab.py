"""The Colab set-up cell and badges are generated from REPO_URL; sync rewrites stale copies."""
import json

from course_utils import colab


def test_setup_cell_is_colab_only_and_idempotent():
    source = colab.setup_cell_source()
    assert 'if "google.colab" in sys.modules' in source
    assert 'if not os.path.isdir("/content/course")' in source  # second run installs nothing
    assert "drive" not in source.lower() and "login" not in source.lower()
    exec(compile(source, "setup-cell", "exec"), {})  # outside Colab: does nothing, raises nothing


def test_badge_points_at_the_notebook_in_the_repository():
    badge = colab.colab_badge("01_x.ipynb")
    assert badge.endswith("/github/" + colab.REPO_URL.removeprefix("https://github.com/") + "/blob/main/notebooks/01_x.ipynb)")


def test_sync_rewrites_a_stale_url(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    stale_cell = colab.setup_cell_source("https://github.com/old/place")
    notebook = {"cells": [{"cell_type": "code", "source": stale_cell, "metadata": {}, "outputs": [], "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "notebooks" / "01_x.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "README.md").write_text("| 01 | " + colab.colab_badge("01_x.ipynb", "https://github.com/old/place") + " |\n")
    changed = colab.sync(tmp_path)
    assert len(changed) == 2
    assert json.loads((tmp_path / "notebooks" / "01_x.ipynb").read_text())["cells"][0]["source"] == colab.setup_cell_source()
    assert colab.colab_badge("01_x.ipynb") in (tmp_path / "README.md").read_text()
    assert colab.sync(tmp_path) == []  # idempotent
