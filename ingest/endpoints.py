"""The server's own configuration: the judge endpoints a dashboard user may pick (and which
environment variable holds each one's API key), and the base-model folders training may use.

The browser names an endpoint or a model only by its configured name; a key is sent only to the
endpoint it is configured for, and no page can name an environment variable.

The file is `judgeaudit.toml` in the folder of the database, or the path in $JUDGEAUDIT_CONFIG:

    [endpoints.team-vllm]                         # the name the Score page shows
    base_url = "http://gpu-box:8000/v1"           # an OpenAI-compatible server, or several serving the
                                                  # same model: base_urls = ["http://gpu-1:8000/v1", ...]
    models = ["Qwen/Qwen2.5-7B-Instruct"]         # or: model = "..."
    api_key_env = "TEAM_VLLM_KEY"                 # the NAME of the variable holding the key (optional)

    [models]                                      # base models the browser may fine-tune from
    qwen2.5-0.5b = "/srv/models/Qwen2.5-0.5B-Instruct"   # a local folder (relative: to this file)

    [prices.gpt-4o]                               # a judge's price (its name in the store), USD per
    input = 2.50                                  # million input tokens and per million output
    output = 10.00                                # tokens: the leaderboard's cost (`judgeaudit judges`)

    [prices]
    human_label = 0.40                            # USD per human label: what `judgeaudit plan` prices

A missing file means: no endpoints, and only the bundled model. Helpers:
    load_config(db) -> ServerConfig;  endpoints(db) -> {name: Endpoint}
    base_models(db) -> {name: path}   (always holds BUNDLED, the bundled SmolLM2)
    resolve_base_model(db, name) -> str (the bundled spec or a configured folder; else UserError)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .store.database import Database
from ._errors import UserError
from . import settings

CONFIG_ENV = settings.CONFIG
CONFIG_NAME = "judgeaudit.toml"
BUNDLED = "local:smollm2"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r"[\w][\w.\-]*")


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str                       # several servers of one judge: their URLs joined by ','
    models: tuple[str, ...]
    api_key_env: str | None = None      # a variable NAME, never the key

    def judge_spec(self, model: str) -> str:
        """The judge SPEC of this endpoint and one of its models (its key variable is `api_key_env`)."""
        if model not in self.models:
            raise UserError(f"endpoint {self.name!r}: model {model!r} is not configured "
                            f"(configured: {', '.join(self.models)})")
        return f"openai:{model}@{self.base_url}"   # openai:MODEL@URL1,URL2,... for several servers

    @property
    def base_urls(self) -> tuple[str, ...]:
        return tuple(self.base_url.split(","))


@dataclass(frozen=True)
class ServerConfig:
    path: Path
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    models: dict[str, Path] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    label_price: float | None = None        # USD per human label ([prices] human_label)


def config_path(db: str | os.PathLike | None = None) -> Path:
    """$JUDGEAUDIT_CONFIG, else judgeaudit.toml beside the database."""
    if settings.config_file():
        return settings.config_file()
    return Database.of(db).path.parent / CONFIG_NAME


def _endpoint(path: Path, name: str, spec) -> Endpoint:
    at = f"{path}, field 'endpoints.{name}"
    if not isinstance(spec, dict):
        raise UserError(f"{at}': a table (base_url, models, api_key_env)")
    if not _NAME.fullmatch(name):
        raise UserError(f"{at}': use letters, digits, '_', '-' and '.' in endpoint names")
    unknown = set(spec) - {"base_url", "base_urls", "model", "models", "api_key_env"}
    if unknown:
        raise UserError(f"{at}.{sorted(unknown)[0]}': unknown setting (base_url or base_urls, models, api_key_env)")
    if ("base_url" in spec) == ("base_urls" in spec):
        raise UserError(f"{at}.base_url': give base_url = \"URL\" or base_urls = [\"URL1\", \"URL2\", ...], one of them")
    field_name = "base_url" if "base_url" in spec else "base_urls"
    urls = [spec["base_url"]] if field_name == "base_url" else spec["base_urls"]
    if not isinstance(urls, list) or not urls:
        raise UserError(f"{at}.base_urls': a non-empty list of http(s) URLs")
    for url in urls:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")) or "," in url:
            raise UserError(f"{at}.{field_name}': an http(s) URL is required (without ',')")
    urls = [u.rstrip("/") for u in urls]
    if len(set(urls)) < len(urls):
        raise UserError(f"{at}.base_urls': an endpoint is listed twice")
    models = spec.get("models", [spec["model"]] if "model" in spec else None)
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
        raise UserError(f"{at}.models': a non-empty list of model names (or model = \"...\")")
    key_env = spec.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV_NAME.fullmatch(key_env)):
        raise UserError(f"{at}.api_key_env': the NAME of an environment variable, e.g. TEAM_KEY")
    return Endpoint(name, ",".join(urls), tuple(m.strip() for m in models), key_env)


def load_config(db: str | os.PathLike | None = None) -> ServerConfig:
    """Read the server config (an empty one when the file does not exist)."""
    path = config_path(db)
    if not path.exists():
        return ServerConfig(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(doc) - {"endpoints", "models", "prices"}
    if unknown:
        raise UserError(f"{path}, field '{sorted(unknown)[0]}': unknown section (endpoints, models, prices)")
    eps = doc.get("endpoints", {})
    if not isinstance(eps, dict):
        raise UserError(f"{path}, field 'endpoints': a table of [endpoints.NAME] tables")
    models = doc.get("models", {})
    if not isinstance(models, dict):
        raise UserError(f"{path}, field 'models': a table of NAME = \"folder\"")
    folders = {}
    for name, folder in models.items():
        if not isinstance(folder, str) or not folder.strip() or not _NAME.fullmatch(name) or name == BUNDLED:
            raise UserError(f"{path}, field 'models.{name}': NAME = \"a model folder\"")
        p = Path(folder).expanduser()
        folders[name] = (p if p.is_absolute() else path.parent / p).resolve()
    table = doc.get("prices", {})
    label = table.get("human_label") if isinstance(table, dict) else None
    if label is not None and (isinstance(label, bool) or not isinstance(label, (int, float)) or label < 0):
        raise UserError(f"{path}, field 'prices.human_label': a number >= 0 (USD per human label)")
    if isinstance(table, dict):
        table = {k: v for k, v in table.items() if k != "human_label"}
    return ServerConfig(path, {n: _endpoint(path, n, s) for n, s in eps.items()}, folders,
                        _prices(path, table), None if label is None else float(label))


def _prices(path: Path, table) -> dict[str, dict[str, float]]:
    """[prices.JUDGE] tables: {judge: {"input": USD per million input tokens, "output": ...}}."""
    if not isinstance(table, dict):
        raise UserError(f"{path}, field 'prices': a table of [prices.JUDGE] tables (input, output)")
    out = {}
    for judge, spec in table.items():
        at = f"{path}, field 'prices.{judge}"
        if not isinstance(spec, dict) or set(spec) != {"input", "output"}:
            raise UserError(f"{at}': input = USD per million input tokens, output = USD per million output tokens")
        for side in ("input", "output"):
            if isinstance(spec[side], bool) or not isinstance(spec[side], (int, float)) or spec[side] < 0:
                raise UserError(f"{at}.{side}': a number >= 0 (USD per million tokens)")
        out[judge] = {"input": float(spec["input"]), "output": float(spec["output"])}
    return out


def prices(db: str | os.PathLike | None = None) -> dict[str, dict[str, float]]:
    """The judges' prices set in judgeaudit.toml ({} without): USD per million input / output tokens."""
    return load_config(db).prices


def label_price(db: str | os.PathLike | None = None) -> float | None:
    """The price of one human label set in judgeaudit.toml ([prices] human_label, USD), or None."""
    return load_config(db).label_price


def endpoints(db: str | os.PathLike | None = None) -> dict[str, Endpoint]:
    return load_config(db).endpoints


def base_models(db: str | os.PathLike | None = None) -> dict[str, str]:
    """The base models a browser user may choose: {name: what `train --base` takes}."""
    return {BUNDLED: BUNDLED, **{n: str(p) for n, p in load_config(db).models.items()}}


def resolve_base_model(db: str | os.PathLike | None, name: str) -> str:
    """The bundled model or a configured folder, by name; anything else is refused."""
    choices = base_models(db)
    if name not in choices:
        raise UserError(f"base model {name!r}: choose the bundled model or one listed under [models] "
                        f"in {config_path(db)} ({', '.join(choices)})")
    if name != BUNDLED and not Path(choices[name]).is_dir():
        raise UserError(f"{config_path(db)}, field 'models.{name}': {choices[name]} is not a folder")
    return choices[name]
