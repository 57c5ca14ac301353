"""scripts/lab_settings.py (run by ``bash course.sh setup``): JupyterLab's notification plugin resolves to "never
fetch news, no update check", read by jupyterlab_server's own override reader and valid against the plugin's schema
as JupyterLab ships it; a user's own ``overrides.json`` is left as it was. tests/notebooks/test_browser_harness.py
checks in a real browser that no toast then asks about news."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jupyterlab
import pytest
from jsonschema import Draft7Validator, ValidationError
from jupyterlab_server.settings_utils import _get_overrides, get_settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import lab_settings  # noqa: E402

PLUGIN = "@jupyterlab/apputils-extension:notification"
QUIET = {"fetchNews": "false", "checkForUpdates": False}
SCHEMAS = Path(jupyterlab.__file__).parent / "schemas"  # the schemas JupyterLab ships


def resolved_defaults(app_settings_dir: Path, tmp_path: Path) -> dict:
    """The plugin's defaults as jupyterlab_server serves them: its schema with the overrides applied."""
    settings, _ = get_settings(str(app_settings_dir), str(SCHEMAS), str(tmp_path / "user-settings"), PLUGIN)
    return {key: spec["default"] for key, spec in settings["schema"]["properties"].items()}


def test_the_override_turns_the_news_question_and_the_update_check_off(tmp_path):
    assert lab_settings.OVERRIDES == {PLUGIN: QUIET}
    written = lab_settings.install(tmp_path)
    assert written == tmp_path / "overrides.d" / "nn-lm-course.json"
    overrides, error = _get_overrides(str(tmp_path))
    assert not error, error
    assert overrides[PLUGIN] == QUIET
    defaults = resolved_defaults(tmp_path, tmp_path)
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults
    assert resolved_defaults(tmp_path / "none", tmp_path)["fetchNews"] == "none"  # JupyterLab's default: it asks


def test_the_keys_and_values_are_valid_for_the_plugins_schema():
    schema_path = SCHEMAS / "@jupyterlab" / "apputils-extension" / "notification.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = Draft7Validator(schema)  # the validator jupyterlab_server uses
    validator.validate(QUIET)  # "additionalProperties": false, so a misspelt key fails too
    assert set(QUIET) <= set(schema["properties"])
    for wrong in ({"fetchNews": False}, {"fetchNews": "no"}, {"fetchNew": "false"}):  # the check can fail
        with pytest.raises(ValidationError):
            validator.validate(wrong)


def test_a_users_overrides_json_is_left_alone_and_wins(tmp_path):
    own = tmp_path / "overrides.json"
    own.write_text('{"%s": {"checkForUpdates": true}}\n' % PLUGIN, encoding="utf-8")
    before = own.read_bytes()
    lab_settings.install(tmp_path)
    lab_settings.install(tmp_path)  # again: nothing changes
    assert own.read_bytes() == before
    assert [path.name for path in (tmp_path / "overrides.d").iterdir()] == ["nn-lm-course.json"]
    defaults = resolved_defaults(tmp_path, tmp_path)
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is True  # the user's own choice wins


def test_the_script_is_idempotent_and_writes_where_jupyterlab_reads(tmp_path):
    run = [sys.executable, str(ROOT / "scripts" / "lab_settings.py"), "--settings-dir", str(tmp_path)]
    first = subprocess.run(run, capture_output=True, text=True, check=True)
    target = Path(first.stdout.strip())
    assert target == tmp_path / "overrides.d" / "nn-lm-course.json"
    stamp = target.stat().st_mtime_ns
    subprocess.run(run, capture_output=True, text=True, check=True)
    assert target.stat().st_mtime_ns == stamp and target.read_text(encoding="utf-8") == lab_settings.overrides_text()
    from jupyterlab.labapp import LabApp

    assert lab_settings.app_settings_dir() == Path(LabApp().app_settings_dir)  # `jupyter lab`'s own default
