"""Profiles and per-chapter parameter schemas, read from the root ``_config.yml``.

``resolve(chapter, profile, **overrides)`` is the first call of every chapter:
it turns the notebook's parameters cell into one validated :class:`Settings`
object. Every bad value fails here, before anything is trained or cached, with
a one-line message that says what is allowed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from . import paths

PROFILES = ("smoke", "quick", "paper")
PROFILE_ENV = "COMPANION_PROFILE"
_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


class ConfigError(ValueError):
    """A bad chapter, parameter or value. Its message is one line, fit for a CLI."""


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> dict:
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data.get("chapters") or {}, dict):
        raise ConfigError(f"{path}: `chapters` must be a mapping")
    return data


def load_config(path: Path | None = None) -> dict:
    """The parsed root ``_config.yml`` (re-read when the file changes)."""
    path = Path(path or paths.config_file())
    return _load(str(path), path.stat().st_mtime)


def active_profile(profile: str | None = None) -> str:
    """Explicit profile, else ``$COMPANION_PROFILE``, else the file's default."""
    chosen = profile or os.environ.get(PROFILE_ENV) or load_config().get("default_profile", "quick")
    if chosen not in PROFILES:
        source = "profile" if profile else PROFILE_ENV
        raise ConfigError(f"unknown {source} {chosen!r}; allowed: {', '.join(PROFILES)}")
    return chosen


@dataclass(frozen=True)
class Param:
    """One chapter parameter as declared in ``_config.yml``."""

    name: str
    type: str
    default: Any
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    nullable: bool = False
    help: str = ""
    items: Any = None  # comma-separated lists: a list of names, or "int" / "float"

    @classmethod
    def from_spec(cls, name: str, spec: Mapping) -> Param:
        if not isinstance(spec, Mapping) or spec.get("type") not in _TYPES:
            raise ConfigError(f"parameter {name!r}: needs `type` in {sorted(_TYPES)}")
        items = spec.get("items")
        if items is not None and (spec["type"] != "str"
                                  or not (isinstance(items, list) or items in ("int", "float"))):
            raise ConfigError(f"parameter {name!r}: `items` needs type str and a list of names, int or float")
        unknown = set(spec) - {"type", "default", "min", "max", "choices", "nullable", "help", "items"}
        if unknown:
            raise ConfigError(f"parameter {name!r}: unknown keys {sorted(unknown)}")
        choices = spec.get("choices")
        return cls(
            name=name,
            type=spec["type"],
            default=spec.get("default"),
            min=spec.get("min"),
            max=spec.get("max"),
            choices=tuple(choices) if choices is not None else None,
            nullable=bool(spec.get("nullable", False)),
            help=str(spec.get("help", "")),
            items=tuple(spec["items"]) if isinstance(spec.get("items"), list) else spec.get("items"),
        )

    def default_for(self, profile: str) -> Any:
        d = self.default
        if isinstance(d, Mapping):
            if profile not in d:
                raise ConfigError(f"parameter {self.name!r} has no default for profile {profile!r}")
            d = d[profile]
        return d

    def _bounds(self) -> str:
        if self.min is not None and self.max is not None:
            return f" in [{self.min}, {self.max}]"
        if self.min is not None:
            return f" >= {self.min}"
        if self.max is not None:
            return f" <= {self.max}"
        return ""

    def allowed(self) -> str:
        """Human description of the allowed values, for error messages."""
        if self.items is not None:
            if isinstance(self.items, tuple):
                text = "comma-separated names from " + ", ".join(repr(c) for c in self.items)
            else:
                text = f"comma-separated {self.items} values{self._bounds()}"
            if self.choices is not None:
                text += ", or one of " + ", ".join(repr(c) for c in self.choices)
        elif self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            text = self.type + self._bounds()
        return text + (" or None" if self.nullable else "")

    def check(self, value: Any, chapter: str) -> Any:
        """Return ``value`` coerced to the declared type, or raise a one-line ConfigError."""
        where = f"{chapter}: parameter {self.name!r}"
        if value is None:
            if self.nullable:
                return None
            raise ConfigError(f"{where} must not be None; allowed: {self.allowed()}")
        kind = _TYPES[self.type]
        ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise ConfigError(f"{where} got {value!r} ({type(value).__name__}); allowed: {self.allowed()}")
        if self.items is not None:
            if not (self.choices is not None and value in self.choices or self._valid_list(value)):
                raise ConfigError(f"{where} got {value!r}; allowed: {self.allowed()}")
            return value
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"{where} got {value!r}; allowed: {self.allowed()}")
        if self.min is not None and value < self.min or self.max is not None and value > self.max:
            raise ConfigError(f"{where} got {value!r}; allowed: {self.allowed()}")
        return value

    def _valid_list(self, value: Any) -> bool:
        """Is ``value`` a comma-separated list of valid items (e.g. "zeroth,second" or "0,0.01")?"""
        if not isinstance(value, str) or not value.strip():
            return False
        parts = [v.strip() for v in value.split(",")]
        if isinstance(self.items, tuple):
            return all(v in self.items for v in parts)
        cast = {"int": int, "float": float}[self.items]
        try:
            nums = [cast(v) for v in parts]
        except ValueError:
            return False
        return all((self.min is None or x >= self.min) and (self.max is None or x <= self.max) for x in nums)

    def parse(self, text: str, chapter: str) -> Any:
        """Parse a command-line string (YAML scalar syntax) and check it."""
        try:
            value = yaml.safe_load(text) if text.strip() else text
        except yaml.YAMLError:
            value = text
        if self.type == "str" and value is not None and not isinstance(value, str):
            value = text  # e.g. `-p data_dir 2024` stays a string
        if self.type == "float" and isinstance(value, str):
            try:  # YAML 1.1 reads `1e-4` (no dot) as a string; Python reads it as the number it is
                value = float(text)
            except ValueError:
                pass
        if text.strip().lower() in ("none", "null"):
            value = None
        return self.check(value, chapter)


def chapter_ids() -> list[str]:
    return list((load_config().get("chapters") or {}).keys())


def shared_runs() -> dict[str, str]:
    """{chapter: group}: chapters that read the same cached training runs (``shared_runs``)."""
    out: dict[str, str] = {}
    known = set(chapter_ids())
    for group, members in (load_config().get("shared_runs") or {}).items():
        for ch in members or []:
            if ch not in known:
                raise ConfigError(f"shared_runs: group {group!r} names {ch!r}, which is not a chapter")
            if ch in out:
                raise ConfigError(f"shared_runs: {ch!r} is in two groups ({out[ch]!r} and {group!r})")
            out[ch] = str(group)
    return out


def schema(chapter: str) -> dict[str, Param]:
    """The declared parameters of one chapter."""
    chapters = load_config().get("chapters") or {}
    if chapter not in chapters:
        allowed = ", ".join(sorted(chapters)) or "(none)"
        raise ConfigError(f"unknown chapter {chapter!r}; allowed: {allowed}")
    specs = chapters[chapter] or {}
    return {name: Param.from_spec(name, spec) for name, spec in specs.items()}


@dataclass(frozen=True)
class Settings(Mapping):
    """The validated parameters of one chapter run (read-only mapping + attributes)."""

    chapter: str
    profile: str
    values: Mapping[str, Any]
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __getattr__(self, key: str) -> Any:
        values = object.__getattribute__(self, "values")
        if key in values:
            return values[key]
        raise AttributeError(f"chapter {self.chapter!r} has no parameter {key!r}; has: {', '.join(values)}")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.values)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"Settings({self.chapter!r}, profile={self.profile!r}, {items})"


def validate_overrides(chapter: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Check names and values of overrides (None = not overridden) without resolving defaults."""
    params = schema(chapter)
    checked = {}
    for name, value in overrides.items():
        if name not in params:
            allowed = ", ".join(["profile", *params]) if params else "profile"
            raise ConfigError(f"{chapter}: unknown parameter {name!r}; allowed: {allowed}")
        if value is not None:
            checked[name] = params[name].check(value, chapter)
    return checked


def resolve(chapter: str, profile: str | None = None, **overrides: Any) -> Settings:
    """Validated settings of ``chapter``: the profile's defaults, then the overrides.

    Overrides whose value is None mean "use the default" (the parameters cell
    sets every parameter to None).
    """
    params = schema(chapter)
    prof = active_profile(profile)
    given = validate_overrides(chapter, overrides)
    values = {}
    for name, p in params.items():
        values[name] = given[name] if name in given else p.check(p.default_for(prof), chapter)
    return Settings(chapter=chapter, profile=prof, values=values, overrides=given)


def resolve_cell(chapter: str, namespace: Mapping[str, Any]) -> Settings:
    """Settings from a chapter's parameters cell: ``config.resolve_cell("fig2", globals())``.

    Takes ``profile`` and every declared parameter of ``chapter`` from ``namespace`` (the
    notebook's globals after the parameters cell and papermill's injected cell ran), so a
    notebook never repeats its parameter names. A declared parameter missing from the
    namespace is an error: the parameters cell and ``_config.yml`` must agree.
    """
    params = schema(chapter)
    missing = [n for n in params if n not in namespace]
    if missing:
        raise ConfigError(f"{chapter}: the parameters cell does not define {', '.join(missing)}")
    return resolve(chapter, namespace.get("profile"), **{n: namespace[n] for n in params})
