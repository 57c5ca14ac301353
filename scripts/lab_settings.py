"""JupyterLab that asks nothing on screen in lecture: no "official Jupyter news?" toast, no update check.

    python scripts/lab_settings.py                        # JupyterLab's own settings (bash course.sh setup runs this)
    python scripts/lab_settings.py --settings-dir DIR     # another application settings directory (the tests)

Left alone, JupyterLab opens every session with a toast, "Would you like to get notified about official Jupyter
news?", in the corner of the projected notebook until someone answers it. This writes the answer, "never", with
"no update check", as an *override*: a new default for the plugin ``@jupyterlab/apputils-extension:notification``,
which a student's own choice in *Settings* still replaces. jupyterlab_server reads the overrides of
``{application settings dir}/overrides.d/*.json`` (``settings_utils._get_overrides``), then the user's own
``overrides.json``; the course writes its own file there, ``nn-lm-course.json``, and never touches
``overrides.json``. Running it again changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PLUGIN = "@jupyterlab/apputils-extension:notification"
OVERRIDES = {PLUGIN: {"fetchNews": "false", "checkForUpdates": False}}
FILE_NAME = "nn-lm-course.json"


def app_settings_dir() -> Path:
    """JupyterLab's application settings directory as ``jupyter lab`` derives it: ``{app dir}/settings``
    (``LabApp.app_settings_dir``'s default, ``jupyterlab/labapp.py``)."""
    from jupyterlab.commands import get_app_dir

    return Path(get_app_dir()) / "settings"


def overrides_text() -> str:
    """The course's overrides file, as written."""
    return json.dumps(OVERRIDES, indent=2) + "\n"


def install(settings_dir: Path) -> Path:
    """Write the course's overrides into ``settings_dir/overrides.d/`` unless already there; return the file."""
    target = Path(settings_dir) / "overrides.d" / FILE_NAME
    text = overrides_text()
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings-dir", type=Path, default=None,
                        help="application settings directory (default: JupyterLab's, {app dir}/settings)")  # fmt: skip
    args = parser.parse_args(argv)
    settings_dir = args.settings_dir or app_settings_dir()
    try:
        print(install(settings_dir))
    except OSError as error:
        print(f"could not write JupyterLab's settings override into {settings_dir}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
