"""constraints.txt pins every dependency the project declares, within its pyproject range, and the
suite runs on exactly those versions (scripts/test installs with `-c constraints.txt`)."""
from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def pins(text: str) -> dict[str, str]:
    """name -> pinned version of a constraints file ("name==1.2.3" lines; comments and blanks
    skipped). Anything else is an error: a range would not fix what a fresh machine installs."""
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, ver = line.partition("==")
        if not sep or not ver.strip() or any(c in name for c in "<>=!~;[ "):
            raise ValueError(f"constraints.txt line {n}: {raw!r} is not 'name==version'")
        key = canonicalize_name(name)
        if key in out:
            raise ValueError(f"constraints.txt line {n}: {name} pinned twice")
        out[key] = ver.strip()
    return out


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in ("test", "ray"):
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return reqs


PINS = pins((ROOT / "constraints.txt").read_text(encoding="utf-8"))


def test_the_pins_parse_strictly() -> None:
    assert pins("# header\n\nfoo==1.0  # why\nBar_Baz==2.0\n") == {"foo": "1.0", "bar-baz": "2.0"}
    for bad in ("foo>=1.0\n", "foo\n", "foo==\n", "foo==1\nFOO==2\n"):
        with pytest.raises(ValueError, match="constraints.txt line"):
            pins(bad)


@pytest.mark.parametrize("req", declared(), ids=str)
def test_every_declared_dependency_is_pinned_within_its_range(req: Requirement) -> None:
    key = canonicalize_name(req.name)
    assert key in PINS, f"{req.name} is declared in pyproject.toml but not pinned in constraints.txt"
    assert req.specifier.contains(Version(PINS[key]), prereleases=True), (
        f"constraints.txt pins {req.name}=={PINS[key]}, outside pyproject's {req}")


@pytest.mark.parametrize("req", declared(), ids=str)
def test_the_suite_runs_on_the_pinned_versions(req: Requirement) -> None:
    key = canonicalize_name(req.name)
    try:
        installed = version(req.name)
    except PackageNotFoundError:  # pragma: no cover - scripts/test installs every extra
        pytest.fail(f"{req.name} is not installed; run scripts/test, which installs constraints.txt")
    assert Version(installed) == Version(PINS[key]), (
        f"{req.name} {installed} is installed, constraints.txt pins {PINS[key]}: "
        "scripts/test installs the pins; move them as docs/operations.md says")


@pytest.mark.parametrize("path", ["scripts/demo", "scripts/test", "Dockerfile"])
def test_every_setup_installs_with_the_pins(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8").replace("\\\n", " ")
    installs = [line for line in text.splitlines() if "pip install" in line and "--upgrade pip" not in line]
    assert installs, f"{path} installs nothing"
    for line in installs:
        assert "-c constraints.txt" in line, f"{path} installs without the pins: {line.strip()}"
    if path == "Dockerfile":  # the file must be in the image before the install reads it
        copied = text.index("constraints.txt")
        assert text.rfind("COPY", 0, copied) > text.rfind("RUN", 0, copied)
        assert copied < text.index("pip install")
