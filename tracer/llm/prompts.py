"""Prompts as contracts: `prompts/<name>/system.md` is static text, `prompts/<name>/user.md` is a
jinja2 template that may use exactly the variables declared for `<name>` in `DECLARED`.

`render_prompt(name, variables)` returns the `[system, user]` chat messages. It rejects prompt names
outside ``^[A-Za-z0-9_-]+$``, unregistered prompts, undeclared, missing and reserved variables, and
(through StrictUndefined) any template reference to something not passed in.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Literal, TypedDict

import jinja2
import jinja2.meta


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


class PromptError(ValueError):
    """A prompt name, template or variable set breaks the prompt contract."""


# The declared variables of every prompt: the whole contract between code and templates.
DECLARED: Mapping[str, frozenset[str]] = {
    "recognize": frozenset({"sentences", "language"}),
    "match": frozenset({"sentences", "passages", "max_sources"}),
}

# Names a caller may never pass: jinja2 globals and template-scope names they would shadow.
RESERVED: frozenset[str] = frozenset({
    "range", "dict", "lipsum", "cycler", "joiner", "namespace",
    "loop", "self", "super", "caller", "varargs", "kwargs",
    "true", "false", "none", "True", "False", "None",
})

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ENV_DIR = "SOURCE_TRACER_PROMPTS_DIR"


def default_prompts_dir() -> Path:
    """`$SOURCE_TRACER_PROMPTS_DIR`, else the checkout's `prompts/` directory, else the copy a
    wheel ships as `tracer/_prompts`."""
    override = os.environ.get(_ENV_DIR)
    if override:
        return Path(override)
    here = Path(__file__).resolve()
    checkout = here.parents[2] / "prompts"
    return checkout if checkout.is_dir() else here.parents[1] / "_prompts"


def as_data(value: object) -> str:
    """Quote untrusted text for a tag-delimited prompt: it cannot close or open a tag."""
    return html.escape(_CONTROL.sub(" ", str(value)), quote=False)


class PromptLibrary:
    """Loads, checks and renders the prompts of one directory against a registry."""

    def __init__(self, root: Path, declared: Mapping[str, frozenset[str]] = DECLARED) -> None:
        self.root = root
        self.declared = dict(declared)
        for name, names in self.declared.items():
            check_name(name)
            bad = names & RESERVED
            if bad:
                raise PromptError(f"prompt {name!r} declares reserved variable(s) {sorted(bad)}")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(root)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        self.env.filters["data"] = as_data
        self._checked: set[str] = set()

    def directories(self) -> list[str]:
        """Every prompt directory on disk (registered or not)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def source(self, name: str, part: Literal["system", "user"]) -> str:
        path = self.root / check_name(name) / f"{part}.md"
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PromptError(f"prompt {name!r} has no {part}.md in {self.root}") from None

    def variables(self, name: str, part: Literal["system", "user"]) -> set[str]:
        """The free variables a template uses (jinja2.meta)."""
        ast = self.env.parse(self.source(name, part))
        return set(jinja2.meta.find_undeclared_variables(ast))

    def check(self, name: str) -> None:
        """Raise PromptError unless `name` is registered and its templates honour the contract."""
        check_name(name)
        if name not in self.declared:
            raise PromptError(f"prompt {name!r} is not registered (known: {sorted(self.declared)})")
        if name in self._checked:
            return
        system_vars = self.variables(name, "system")
        if system_vars:
            raise PromptError(f"prompt {name!r}: system.md must be static, uses {sorted(system_vars)}")
        user_vars = self.variables(name, "user")
        if user_vars != self.declared[name]:
            raise PromptError(
                f"prompt {name!r}: user.md uses {sorted(user_vars)}, declared {sorted(self.declared[name])}"
            )
        self._checked.add(name)

    def render(self, name: str, variables: Mapping[str, object]) -> list[ChatMessage]:
        """The `[system, user]` messages of prompt `name` with `variables` filled in."""
        self.check(name)
        keys = set(variables)
        reserved = keys & RESERVED
        if reserved:
            raise PromptError(f"prompt {name!r}: reserved variable(s) {sorted(reserved)}")
        declared = self.declared[name]
        extra = keys - declared
        if extra:
            raise PromptError(f"prompt {name!r}: undeclared variable(s) {sorted(extra)}")
        missing = declared - keys
        if missing:
            raise PromptError(f"prompt {name!r}: missing variable(s) {sorted(missing)}")
        system = self.source(name, "system").strip()
        try:
            user = self._template(name).render(**variables).strip()
        except jinja2.UndefinedError as exc:
            raise PromptError(f"prompt {name!r}: {exc}") from exc
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _template(self, name: str) -> jinja2.Template:
        return self.env.get_template(f"{name}/user.md")


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PromptError(f"invalid prompt name {name!r}: must match ^[A-Za-z0-9_-]+$")
    return name


@lru_cache(maxsize=4)
def _library(root: str) -> PromptLibrary:
    return PromptLibrary(Path(root))


def render_prompt(name: str, variables: Mapping[str, object], root: Path | None = None) -> list[ChatMessage]:
    """Render prompt `name` from `root` (default: `default_prompts_dir()`)."""
    return _library(str(root or default_prompts_dir())).render(name, variables)
