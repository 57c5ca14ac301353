"""Colab's runtime, modelled, and the Colab lock: what the notebooks' set-up cell installs there.

    python scripts/colab_lock.py model pip-freeze.txt --source "googlecolab/backend-info a724079 (2026-08-19)"
    python scripts/colab_lock.py lock

``model`` reads a ``pip freeze`` of Colab's runtime (googlecolab/backend-info's ``pip-freeze.txt``) and writes
``requirements/colab-runtime.metadata``: each package's name, version, Requires-Python and Requires-Dist, read by
pip from the package index (``pip install --dry-run --no-deps --report`` under Python 3.13 on Linux x86_64, which
reads the wheel's METADATA, or builds an sdist's). No code is kept, only those fields.

``lock`` builds a Colab-like venv from that file (``runtime_venv``: real pip and packaging, every other package a
dist-info holding its real metadata), asks pip there (``--dry-run --report``) what the set-up cell's install brings,
and writes ``requirements/colab.txt``: every package pip would install or upgrade, pinned at the release CI tested
(``requirements/floor.txt`` for transformers, tokenizers and huggingface-hub, ``requirements/lock.txt`` for the
rest; a package Colab has that pip would upgrade is pinned too, and pip asked again), with the course's packages
each is for. Left out is what pip adds only for a package Colab already has (jedi, for Colab's IPython). The cell
installs those pins with ``--no-deps``, and passes the file as constraints (``-c``) where it must let pip resolve.
Then run the slow tests, which install it for real: ``python -m pytest -p no:xdist tests/core/test_colab.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_utils.colab_install import colab_requirements, lacking  # noqa: E402

MODEL = ROOT / "requirements" / "colab-runtime.metadata"
COLAB_LOCK = ROOT / "requirements" / "colab.txt"
LOCK = ROOT / "requirements" / "lock.txt"
FLOOR = ROOT / "requirements" / "floor.txt"
VENV = ROOT / "build" / "colab-venv"

# Installed for real in the Colab-like venv: the set-up cell runs pip and imports packaging.
REAL = ("pip", "packaging")
# Colab's own, or already imported by its kernel: the cell must never move them.
UNMOVED = ("torch", "ipykernel", "ipywidgets", "numpy", "matplotlib", "pillow")
# The CPU runtime's torch wheels come from download.pytorch.org: PyPI's release, less its CUDA-only requirements.
CUDA_ONLY = re.compile(r"^(nvidia-|cuda-|triton\b)", re.I)
# google-colab is built from googlecolab/colabtools (setup.py, "kept in-sync with the versions specified in the
# docker container"): those names, pinned at the freeze's versions.
GOOGLE_COLAB_REQUIRES = ("google-auth", "ipykernel", "ipyparallel", "ipython", "pandas", "jupyter-server",
                         "portpicker", "requests", "tornado")  # fmt: skip
# googlecolab/kernel_gateway at the freeze's commit (b134e99): version 2.5.2, setup.py's install_requires.
KERNEL_GATEWAY = {"version": "2.5.2", "requires_python": ">=3.7",
                  "requires_dist": ["jupyter_core>=4.4.0", "jupyter_client>=5.2.0,<8.0", "notebook>=5.7.6,<7.0",
                                    "traitlets>=4.2.0", "tornado>=4.2.0", "requests>=2.7,<3.0"]}  # fmt: skip


def canonical(name: str) -> str:
    """PEP 503's normal form of a package name."""
    return re.sub(r"[-_.]+", "-", name).lower()


# The pip settings of this machine that only say how to reach the index; the others (a config file's constraints,
# local wheels to find) are not Colab's, and are dropped.
PIP_NETWORK = ("PIP_CERT", "PIP_CLIENT_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_INDEX_URL", "PIP_PROXY", "PIP_TRUSTED_HOST")


def pip_env() -> dict[str, str]:
    """The environment for pip: no pip settings from this machine but how it reaches the index."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_") or key in PIP_NETWORK}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def find_python(minor: str) -> str | None:
    """A working interpreter of Python ``minor`` ("3.13"): ``$PYTHON313`` (as course.sh reads it), on the PATH, or
    pyenv's."""
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{minor}.*/bin/python{minor}"), reverse=True)
    candidates = [os.environ.get("PYTHON" + minor.replace(".", "")), shutil.which(f"python{minor}"), *map(str, pyenv)]
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() == minor:
            return candidate
    return None


# --- the model: requirements/colab-runtime.metadata ------------------------------------------------------------------


def read_freeze(path: Path) -> list[tuple[str, str, str]]:
    """``(name, version, url)`` for each line of a pip freeze (``url`` is "" for a release from the index)."""
    packages = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^([\w.-]+)==(\S+)$", line.strip()):
            packages.append((match[1], match[2], ""))
        elif match := re.match(r"^([\w.-]+) @ (\S+)$", line.strip()):
            packages.append((match[1], url_version(match[2]), match[2]))
    return packages


def url_version(url: str) -> str:
    """The version in a direct reference's file name (``torch-2.11.0%2Bcpu-cp313...whl``), or "" (a git URL)."""
    name = url.rsplit("/", 1)[-1].replace("%2B", "+")
    match = re.match(r"^[\w.]+?-(\d[\w.+]*?)(?:-py\d|-cp\d|\.tar\.gz)", name)
    return match[1] if match else ""


def index_metadata(python: str, pins: list[str]) -> dict[str, dict]:
    """``{canonical name: pip's report metadata}`` for each ``name==version``, read by pip from the index."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = [python, "-I", "-m", "pip", "install", "-q", "--dry-run", "--no-deps", "--ignore-installed",
                   "--report", str(report), *pins]  # fmt: skip
        done = subprocess.run(command, env=pip_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pip could not read {pins}: {done.stderr.strip()[-500:]}")
        return {
            canonical(item["metadata"]["name"]): item["metadata"] for item in json.loads(report.read_text())["install"]
        }


def sdist_metadata(pin: str) -> dict:
    """A release's metadata read from its sdist's PKG-INFO (and egg-info's requires.txt), where pip cannot build it
    here (a C library it needs is missing)."""
    import email.parser
    import tarfile
    from urllib.request import Request, urlopen

    name, version = pin.split("==")
    index = Request(
        f"https://pypi.org/simple/{canonical(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urlopen(index, timeout=60) as answer:
        files = json.load(answer)["files"]
    url = next(f["url"] for f in files if f["filename"].endswith(".tar.gz") and f"-{version}.tar.gz" in f["filename"])
    with tempfile.TemporaryDirectory() as tmp, urlopen(url, timeout=120) as answer:
        archive = Path(tmp) / "sdist.tar.gz"
        archive.write_bytes(answer.read())
        with tarfile.open(archive) as sdist:
            members = {member.name.split("/", 1)[-1]: member for member in sdist.getmembers()}
            pkg_info = email.parser.Parser().parsestr(sdist.extractfile(members["PKG-INFO"]).read().decode())
            requires = pkg_info.get_all("Requires-Dist") or []
            egg_requires = next((m for path, m in members.items() if path.endswith(".egg-info/requires.txt")), None)
            if not requires and egg_requires:
                requires = egg_info_requires(sdist.extractfile(egg_requires).read().decode())
    return {"name": pkg_info["Name"], "version": version, "requires_python": pkg_info.get("Requires-Python") or "",
            "requires_dist": requires, "from_sdist": True}  # fmt: skip


def egg_info_requires(text: str) -> list[str]:
    """An egg-info ``requires.txt`` as Requires-Dist lines (a ``[extra:marker]`` section becomes a marker)."""
    requires, marker = [], ""
    for line in filter(None, map(str.strip, text.splitlines())):
        if line.startswith("["):
            extra, _, condition = line.strip("[]").partition(":")
            parts = ([f'extra == "{extra}"'] if extra else []) + ([f"({condition})"] if condition else [])
            marker = " and ".join(parts)
        else:
            requires.append(f"{line}; {marker}" if marker else line)
    return requires


def metadata_in_batches(python: str, pins: list[str], size: int = 50) -> dict[str, dict]:
    """``index_metadata`` for many pins, a batch at a time; one by one in a batch that fails, and from the sdist's
    PKG-INFO for a pin that pip cannot read."""
    found = {}
    for start in range(0, len(pins), size):
        batch = pins[start : start + size]
        try:
            found.update(index_metadata(python, batch))
        except RuntimeError:
            for pin in batch:
                try:
                    found.update(index_metadata(python, [pin]))
                except RuntimeError:
                    found[canonical(pin.split("==")[0])] = sdist_metadata(pin)
        print(f"read {min(start + size, len(pins))}/{len(pins)}", flush=True)
    return found


def direct_reference(name: str, version: str, url: str, python: str, freeze: dict[str, str]) -> dict:
    """The metadata of a package the freeze names by URL (not on the index, or not as that build)."""
    if canonical(name) == "google-colab":
        requires = [f"{dep}=={freeze[dep]}" for dep in GOOGLE_COLAB_REQUIRES]
        return {"name": name, "version": version, "requires_python": "", "requires_dist": requires}
    if canonical(name) == "jupyter-kernel-gateway":
        return {"name": name, **KERNEL_GATEWAY}
    if "/whl/cpu/" in url:
        release = index_metadata(python, [f"{name}=={version.split('+')[0]}"])[canonical(name)]
        requires = [r for r in release.get("requires_dist", []) if not CUDA_ONLY.match(r)]
        return {"name": name, "version": version, "requires_python": release.get("requires_python", ""),
                "requires_dist": requires}  # fmt: skip
    return {"name": name, "version": version, "requires_python": "", "requires_dist": []}  # e.g. a spaCy model


def metadata_block(name: str, version: str, requires_python: str, requires_dist: list[str]) -> str:
    """One package's fields, as a METADATA file writes them."""
    lines = [f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Python: {requires_python}"] if requires_python else []
    return "\n".join(lines + [f"Requires-Dist: {r}" for r in requires_dist])


MODEL_HEADER = """\
# Colab's runtime, modelled: every package in the pip-freeze.txt of {source}
# (Python {python}), with the Name, Version, Requires-Python and Requires-Dist of its METADATA, one block a package.
# Nothing else is kept.
# Written by: python scripts/colab_lock.py model pip-freeze.txt --source "{source}" --python {python}
# How: for a release on PyPI, pip read its metadata from the index (pip install --dry-run --no-deps --report, under
# Python 3.13 on Linux x86_64: the wheel's METADATA that Colab's pip would pick, or a built sdist's).
# Packages the freeze names by URL: torch, torchaudio, torchvision and torchcodec (+cpu builds from
# download.pytorch.org) carry PyPI's release metadata less its CUDA-only requirements (nvidia-*, cuda-*, triton);
# google-colab (built from googlecolab/colabtools) requires the names in colabtools' setup.py, pinned at this freeze's
# versions as that file says they are kept; jupyter_kernel_gateway is googlecolab/kernel_gateway at b134e99 (2.5.2,
# its setup.py); any other (en_core_web_sm, from GitHub) is listed without requirements.
# Read from the sdist's PKG-INFO instead (no wheel for Python 3.13, and pip cannot build its metadata without a C
# library): {from_sdist}.
# tests/core/test_colab.py and scripts/colab_lock.py write each block as a dist-info into a Python 3.13 venv.
"""


def write_model(freeze_path: Path, source: str, python_version: str) -> None:
    """``requirements/colab-runtime.metadata`` from a pip freeze."""
    python = find_python(python_version.rsplit(".", 1)[0])
    packages = read_freeze(freeze_path)
    freeze = {canonical(name): version for name, version, _ in packages}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([python, "-m", "venv", tmp], check=True)
        venv_python = str(Path(tmp) / "bin" / "python")
        indexed = metadata_in_batches(venv_python, [f"{n}=={v}" for n, v, url in packages if not url])
        blocks = []
        for name, version, url in sorted(packages, key=lambda package: canonical(package[0])):
            meta = direct_reference(name, version, url, venv_python, freeze) if url else indexed[canonical(name)]
            requires = meta.get("requires_dist") or []
            blocks.append(metadata_block(name, meta["version"], meta.get("requires_python") or "", requires))
    from_sdist = ", ".join(sorted(meta["name"] for meta in indexed.values() if meta.get("from_sdist"))) or "none"
    header = MODEL_HEADER.format(source=source, python=python_version, from_sdist=from_sdist)
    MODEL.write_text(header + "\n" + "\n\n".join(blocks) + "\n", encoding="utf-8")
    print(f"wrote {MODEL.relative_to(ROOT)}: {len(blocks)} packages")


def read_model(path: Path = MODEL) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The model's header fields (``source``, ``python``) and its blocks, each ``{field: text}`` with its lines."""
    text = path.read_text(encoding="utf-8")
    header = re.search(r'--source "(?P<source>[^"]+)" --python (?P<python>[\d.]+)', text).groupdict()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    blocks = []
    for chunk in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines() if not line.startswith("Requires-Dist"))
        blocks.append({**fields, "metadata": chunk})
    return header, blocks


# --- the Colab-like venv ------------------------------------------------------------------------------------------


def write_dist_info(site: Path, block: dict[str, str]) -> None:
    """A dist-info folder as pip leaves one, holding the block's metadata and no code."""
    info = site / f"{canonical(block['Name']).replace('-', '_')}-{block['Version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\n" + block["metadata"] + "\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    record = [f"{info.name}/{file},," for file in ("METADATA", "INSTALLER", "RECORD")]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")  # so that pip can uninstall it


def runtime_venv(venv: Path, model: Path = MODEL) -> Path:
    """A venv like Colab's runtime: real pip and packaging at Colab's versions, the rest dist-infos; its python."""
    header, blocks = read_model(model)
    minor = header["python"].rsplit(".", 1)[0]
    python = find_python(minor)
    if python is None:
        raise FileNotFoundError(f"no Python {minor} here (Colab's runtime runs {header['python']})")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    venv_python = venv / "bin" / "python"
    versions = {canonical(block["Name"]): block["Version"] for block in blocks}
    real = [f"{name}=={versions[name]}" for name in REAL]
    subprocess.run([venv_python, "-I", "-m", "pip", "install", "-q", *real], env=pip_env(), check=True)
    site = Path(subprocess.check_output([venv_python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                        text=True).strip())  # fmt: skip
    for block in blocks:
        if canonical(block["Name"]) not in REAL:
            write_dist_info(site, block)
    return venv_python


def installed(python: Path) -> dict[str, str]:
    """``{canonical name: version}`` of every distribution ``python`` sees (``-I``: not the current folder's)."""
    code = "import json, importlib.metadata as m; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    found = json.loads(subprocess.check_output([python, "-I", "-c", code], text=True))
    return {canonical(name): version for name, version in found.items()}


# --- the Colab lock: requirements/colab.txt ----------------------------------------------------------------------


def pins_of(path: Path, environment: dict[str, str] | None = None) -> dict[str, str]:
    """``{canonical name: version}`` of a requirements file's ``==`` pins whose markers hold in ``environment``."""
    from packaging.requirements import Requirement

    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split(" #")[0].strip()
        if line[:1].isalnum():
            pin = Requirement(line)
            if pin.marker is None or pin.marker.evaluate(environment):
                pins[canonical(pin.name)] = str(pin.specifier).removeprefix("==")
    return pins


def colab_markers(python_version: str) -> dict[str, str]:
    """The marker environment of Colab's runtime (Linux x86_64, CPython ``python_version``)."""
    from packaging.markers import default_environment

    short = python_version.rsplit(".", 1)[0]
    return {**default_environment(), "python_version": short, "python_full_version": python_version,
            "implementation_version": python_version, "sys_platform": "linux", "platform_system": "Linux",
            "platform_machine": "x86_64", "os_name": "posix", "implementation_name": "cpython",
            "platform_python_implementation": "CPython"}  # fmt: skip


def tested_pins(python_version: str) -> dict[str, str]:
    """The release CI tested of each package, for Colab's Python: the floor's transformers, tokenizers and hub,
    the lock's for the rest."""
    return {**pins_of(LOCK, colab_markers(python_version)), **pins_of(FLOOR)}


def dry_run(python: Path, request: list[str], constraints: dict[str, str]) -> dict[str, dict]:
    """``{canonical name: metadata}`` of what pip would install or upgrade for ``request`` under ``constraints``."""
    with tempfile.TemporaryDirectory() as tmp:
        constraint_file, report = Path(tmp) / "constraints.txt", Path(tmp) / "report.json"
        constraint_file.write_text("".join(f"{name}=={version}\n" for name, version in constraints.items()))
        command = [str(python), "-I", "-m", "pip", "install", "-q", "--dry-run", "--report", str(report), *request,
                   "-c", str(constraint_file)]  # fmt: skip
        done = subprocess.run(command, env=pip_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pip could not resolve {request}: {done.stderr.strip()[-1500:]}")
        return {
            canonical(item["metadata"]["name"]): item["metadata"] for item in json.loads(report.read_text())["install"]
        }


def needed_for(requested: list[str], brought: dict[str, dict], environment: dict[str, str]) -> dict[str, list[str]]:
    """``{name: [requested packages that need it]}``, following requirements among what pip brings, but not into
    another requested package (the cell installs that one, and what it brings, only where the runtime lacks it).

    A package pip brings that none of them needs is there only for a package Colab already has, which Colab's
    runtime ships without it (IPython 7.34 requires jedi; Colab has never had jedi)."""
    from packaging.requirements import Requirement

    roots: dict[str, list[str]] = {}
    for root in requested:
        stack = [root]
        while stack:
            name = stack.pop()
            if root in roots.setdefault(name, []):
                continue
            roots[name].append(root)
            for requirement in map(Requirement, brought[name].get("requires_dist") or []):
                marker_holds = requirement.marker is None or requirement.marker.evaluate({**environment, "extra": ""})
                dependency = canonical(requirement.name)
                if dependency in brought and dependency not in requested and marker_holds:
                    stack.append(dependency)
    return roots


def resolve(python: Path, python_version: str) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """What the set-up cell installs on the runtime: ``{name: tested version}``, what each is for, and the names pip
    would add only for Colab's own packages (left out: the cell installs with ``--no-deps``).

    It starts from the tested pins of what Colab lacks (and the floor's triple); a package Colab has that pip
    still upgrades is pinned at its tested release too, and pip asked again, until nothing floats."""
    tested, versions = tested_pins(python_version), installed(python)
    requested = [canonical(re.match(r"[\w.-]+", r)[0]) for r in colab_requirements() if lacking(r, versions)]
    constraints = {name: version for name, version in tested.items() if name not in versions or name in pins_of(FLOOR)}
    while True:
        brought = dry_run(python, [f"{name}=={tested[name]}" for name in requested], constraints)
        roots = needed_for(requested, brought, colab_markers(python_version))
        floating = sorted(set(roots) - set(constraints))
        if not floating:
            gaps = sorted(set(brought) - set(roots))
            return {name: brought[name]["version"] for name in roots}, roots, gaps
        untested = [name for name in floating if name not in tested]
        if untested:
            raise RuntimeError(f"pip brings {untested}, which requirements/lock.txt does not pin for Colab's Python")
        constraints.update({name: tested[name] for name in floating})


COLAB_LOCK_HEADER = """\
# The Colab lock: every package that the notebooks' set-up cell installs or upgrades on Colab's runtime, each at the
# release CI tested (requirements/floor.txt for transformers, tokenizers and huggingface-hub; requirements/lock.txt
# for the rest), and the course's packages it is for. When the runtime lacks any of the course's packages, the cell
# installs those of these that the runtime does not have at this version, with --no-deps: exactly this set, nothing
# floating. Packages Colab has and pip leaves alone (torch, numpy, matplotlib, pillow, ipywidgets...) are not here.
# Left out: {gaps}, which pip would add only because a package Colab already has requires it and Colab's runtime
# ships without it (the cell leaves Colab's runtime as it is there).
# Resolved by python scripts/colab_lock.py lock: pip {pip} (--dry-run --report) on Python {here} (Colab's: {python}),
# in a venv made from requirements/colab-runtime.metadata ({source}).
"""


def write_colab_lock(pins: dict[str, str], roots: dict[str, list[str]], gaps: list[str], header: dict[str, str],
                     python: Path) -> None:  # fmt: skip
    """``requirements/colab.txt``, each line saying where its pin comes from and what it is for."""
    floor = pins_of(FLOOR)
    lines = [f"{name}=={version}  # {'floor' if name in floor else 'lock'}, for {', '.join(sorted(roots[name]))}"
             for name, version in sorted(pins.items())]  # fmt: skip
    here = subprocess.check_output([python, "-c", "import platform; print(platform.python_version())"], text=True)
    pip = installed(python)["pip"]
    text = COLAB_LOCK_HEADER.format(pip=pip, here=here.strip(), gaps=", ".join(gaps) or "nothing", **header)
    COLAB_LOCK.write_text(text + "\n".join(lines) + "\n", encoding="utf-8")
    print(text + "\n".join(lines))


def write_lock() -> None:
    """Build the Colab-like venv, resolve the cell's install there, and write ``requirements/colab.txt``."""
    header, _ = read_model()
    python = runtime_venv(VENV)
    pins, roots, gaps = resolve(python, header["python"])
    moved = sorted(set(pins) & set(UNMOVED))
    if moved:
        raise RuntimeError(f"the cell's install would move {moved}, which Colab's kernel holds: nothing written")
    write_colab_lock(pins, roots, gaps, header, python)
    print("Now run the slow test, which installs it for real: python -m pytest -p no:xdist tests/core/test_colab.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    model = commands.add_parser("model", help="write requirements/colab-runtime.metadata from a pip freeze")
    model.add_argument("freeze", type=Path, help="Colab's pip-freeze.txt")
    model.add_argument("--source", required=True, help='where it comes from: "owner/repo commit (date)"')
    model.add_argument("--python", required=True, help="Colab's Python (os-info.txt), e.g. 3.13.15")
    commands.add_parser("lock", help="write requirements/colab.txt from the model")
    args = parser.parse_args(argv)
    if args.command == "model":
        write_model(args.freeze, args.source, args.python)
    else:
        write_lock()
    return 0


if __name__ == "__main__":
    sys.exit(main())
