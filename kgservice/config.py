"""Configuration: the only global state. Read once from env vars and an optional TOML file.

Precedence: explicit CLI flags > environment > config file > defaults. Secrets (Neo4j
password, Qdrant API key, LLM keys) come only from the environment or from a config file
that only its owner can read; they are never printed (``Settings.public()`` masks them).
"""

from __future__ import annotations

from kgservice.errors import ConfigError
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field, fields, replace
from collections.abc import Callable
from pathlib import Path
from typing import Any

SECRET_FIELDS = {"neo4j_password", "qdrant_api_key"}
URI_FIELDS = {"neo4j_uri", "qdrant_url"}  # may carry user:password@ - shown redacted
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def redact_uri(uri: str | None) -> str | None:
    """``scheme://user:***@host`` for a URI with credentials in it; anything else unchanged."""
    if not uri or "@" not in uri:
        return uri
    head, sep, rest = uri.partition("://")
    if not sep:
        head, rest = "", uri
    userinfo, at, host = rest.rpartition("@")
    if not at or "/" in userinfo:
        return uri
    user = userinfo.split(":", 1)[0]
    return f"{head}{sep}{user}:***@{host}" if head else f"{user}:***@{host}"


def check_neo4j_uri(uri: str) -> None:
    """A clear error (never echoing a password) before the driver sees a URI it would choke on."""
    from urllib.parse import urlsplit

    shown = redact_uri(uri)
    scheme = uri.partition("://")[0].lower() if "://" in uri else ""
    supported = ", ".join(s + "://" for s in NEO4J_SCHEMES)
    if not scheme:
        raise ConfigError(f"KG_NEO4J_URI {shown!r} needs a scheme: one of {supported} (e.g. bolt://127.0.0.1:7687)")
    if scheme not in NEO4J_SCHEMES:
        raise ConfigError(f"KG_NEO4J_URI {shown!r}: the scheme {scheme + '://'!r} is not supported; use one of "
                          f"{supported} (e.g. bolt://127.0.0.1:7687)")
    parts = urlsplit(uri)
    if "@" in parts.netloc:
        raise ConfigError(f"KG_NEO4J_URI {shown!r} holds credentials; the driver does not accept them in the URI. "
                          "Put the user in KG_NEO4J_USER and the password in NEO4J_PASSWORD")
    try:
        parts.port
    except ValueError:
        raise ConfigError(f"KG_NEO4J_URI {shown!r}: the port is not a number") from None
    if not parts.hostname:
        raise ConfigError(f"KG_NEO4J_URI {shown!r} names no host (e.g. bolt://127.0.0.1:7687)")


DEFAULT_LLM_MODEL = "kgoffline/scripted"
# drill-down rounds per question (a judge call each): with the key-node call and the answer, 4
# calls at most. On MuSiQue with a capable model a third round cost 1 call on 18 of 30
# questions and found the answer of few (scripts/eval/RESULTS.md, "Answer quality")
DEFAULT_MAX_ROUNDS = 2


DEFAULT_BACKEND = "embedded"  # the in-process store: what `kg demo` always uses
DEFAULT_WORKSPACE = "default"  # the workspace of every store made before workspaces existed
# a workspace name is a directory name, a collection-name suffix and a property value: kept plain
WORKSPACE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
WORKSPACES_DIR = "workspaces"  # <data_dir>/workspaces/<name>/: a named workspace's own files


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path(".kg")
    # the workspace this knowledge base is (docs/workspaces.md): every store, cache, ledger and
    # vector collection opened with these settings is that workspace's own
    workspace: str = DEFAULT_WORKSPACE
    backend: str = DEFAULT_BACKEND  # embedded | neo4j
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = field(default=None, repr=False)  # secret: never in repr/logs
    neo4j_database: str = "neo4j"
    neo4j_stage_units: int = 20_000  # new units per ingest batch above which Neo4j ingest is staged
    # neighbours asked of Neo4j's vector index per search (the neo4j vector backend): recall for
    # latency, the curve is in scripts/bench/RESULTS.md; None = the store's default
    neo4j_vector_candidates: int | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = field(default=None, repr=False)  # secret: never in repr/logs
    qdrant_collection: str = "kg_nodes"
    # auto: a server when qdrant_url is set; else the format already in the data dir, and for a
    # new one qdrant-edge (embedded HNSW) | edge | qdrant (qdrant-client: server url or local mode)
    # | neo4j (Neo4j's vector index in the graph database: shared by every process, needs backend neo4j)
    vector_backend: str = "auto"
    # one kg serve / kg worker uses this deployment: vectors may stay in this process's data dir
    # even on the shared Neo4j backend (otherwise that needs a shared vector store, qdrant_url)
    single_process: bool = False
    store_timeout: float = 5.0  # seconds a request waits for an unreachable graph store before its 503
    # seconds a server may answer a request without a bookmark from the previous store version's
    # cached result while it catches up with another process's change (docs/jobs-and-caches.md); 0 = never
    stale_seconds: float = 5.0
    # seconds before its arrival a version read may have started for a request without a bookmark
    # (its caches then wait for no round trip; 0 = every request reads the version after it arrived)
    stale_read_seconds: float = 1.0
    vector_lock_wait: float = 30.0  # seconds a reader waits for a local vector dir another process writes
    embedder: str = "default"
    llm_model: str = "kgoffline/scripted"  # any litellm model; kgoffline/scripted|rules are offline (kgservice.llm.offline)
    llm_model_chosen: bool = False  # set from env/config/--llm; False = the default nobody chose
    llm_api_base: str | None = None  # e.g. a local OpenAI-compatible server; keys come from litellm's usual env vars
    llm_timeout: float = 60.0  # seconds per provider call
    llm_max_retries: int = 3  # extra attempts on provider errors / timeouts (tenacity, exponential backoff)
    llm_retry_wait: float = 1.0  # backoff base in seconds (0 in tests)
    llm_repair_attempts: int = 2  # follow-up requests that show the model its invalid JSON and the error
    llm_recordings: tuple[Path, ...] = ()  # extra recorded-response files (JSONL) for the kgoffline provider
    llm_record: Path | None = None  # append every completion (request hash + response, no request text) here
    lexicon_files: tuple[Path, ...] = ()
    tau: dict[str, float] = field(default_factory=dict)
    epsilon: float = 0.05
    max_hops: int = 3
    # spreading-activation constraints (SpreadParams.max_fanout / max_fire); None = off
    spread_max_fanout: int | None = None
    spread_max_fire: int | None = None
    # hub damping / seed backflow (SpreadParams); None = the lexicon's "spread" defaults
    spread_degree_damping: float | None = None
    spread_seed_backflow: bool | None = None
    read_only: bool = False
    doc_text_max_bytes: int = 4_194_304  # a document's text kept (compressed) for citations up to this many bytes
    # kg serve / kg mcp (kgservice.server)
    allowed_hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")  # Host headers served ("host", "host:port", "*")
    rate_limit: float = 20.0  # requests per second per API key (token bucket; 0 = off)
    rate_burst: int = 40  # bucket size
    max_body: int = 1_048_576  # bytes; larger request bodies get 413 before they are read
    local_role: str = "reader"  # role of the local operator without a key: `kg mcp` (stdio), `kg serve --no-auth`
    metrics_public: bool = False  # /metrics without a key (for a scraper on a private network)
    # failed authentications (API key or web sign-in) allowed per client address: refill per
    # second and bucket size, for the whole deployment (shared out like rate_limit)
    auth_fail_rate: float = 2.0
    auth_fail_burst: int = 20
    # proxies whose X-Forwarded-For / X-Forwarded-Proto / X-Request-ID are believed (addresses
    # or CIDRs); a request from anywhere else is taken at its peer address (kgservice.server.proxies)
    trusted_proxies: tuple[str, ...] = ()
    # Qdrant server collections, applied when the collection is created (kgservice.vectors.qdrant_store)
    qdrant_shards: int | None = None  # shard_number; None: the server's default (1 per node at creation)
    qdrant_replicas: int | None = None  # replication_factor (>= 2 survives losing a node)
    qdrant_write_consistency: int | None = None  # write_consistency_factor (replicas that must ack a write)
    qdrant_quantization: str = "none"  # none | scalar (int8) | binary: a compressed copy searched in RAM
    qdrant_on_disk: bool = False  # full vectors on disk (memmap) instead of RAM; pairs with quantization

    def __post_init__(self) -> None:
        check_workspace_name(self.workspace)

    @property
    def kb_dir(self) -> Path:
        """This workspace's own directory: the data directory itself for ``default`` (so every
        store made before workspaces is the default workspace, unmoved), else
        ``<data_dir>/workspaces/<name>``. The store, caches, document ledger, jobs, keys and local
        vectors of a knowledge base live here, so no two workspaces share a file."""
        if self.workspace == DEFAULT_WORKSPACE:
            return self.data_dir
        return self.data_dir / WORKSPACES_DIR / self.workspace

    @property
    def vector_collection(self) -> str:
        """The vector collection of this workspace on a shared vector server: ``qdrant_collection``
        for ``default`` (unchanged), ``<qdrant_collection>-ws-<name>`` for another workspace."""
        if self.workspace == DEFAULT_WORKSPACE:
            return self.qdrant_collection
        return f"{self.qdrant_collection}-ws-{self.workspace}"

    @property
    def vectors_in_graph(self) -> bool:
        """The entry vectors live in the graph database itself (its store's ``graph_vectors``)."""
        return self.vector_backend == "neo4j"

    def public(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in SECRET_FIELDS:
                v = "***" if v else None
            elif f.name in URI_FIELDS:
                v = redact_uri(v)
            out[f.name] = str(v) if isinstance(v, Path) else v
        return out

    def with_overrides(self, **kw: Any) -> "Settings":
        kw = {k: v for k, v in kw.items() if v is not None}
        if "llm_model" in kw:
            kw.setdefault("llm_model_chosen", True)
        return replace(self, **kw)


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def parse_list(value: str) -> tuple[str, ...]:
    """A comma-separated setting (hosts, proxy addresses) as its non-empty, stripped items."""
    return tuple(item.strip() for item in value.split(",") if item.strip())


def parse_bool(var: str, value: str) -> bool:
    """Strict: a security switch (KG_READ_ONLY) must never fail open on a typo or stray space."""
    if value.lower() in TRUE_WORDS:
        return True
    if value.lower() in FALSE_WORDS:
        return False
    raise ConfigError(f"environment variable {var}={value!r} is not a boolean; use one of "
                      f"{', '.join(TRUE_WORDS)} (on) or {', '.join(FALSE_WORDS)} (off), any case, no spaces")


def env_read_only(env: dict[str, str] | None = None) -> bool:
    """KG_READ_ONLY alone, strictly parsed: for entry points that write files without opening a
    knowledge base (the standalone ``graphify save-result`` / ``reflect``)."""
    value = (os.environ if env is None else env).get("KG_READ_ONLY", "")
    return bool(value) and parse_bool("KG_READ_ONLY", value)


_ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    "KG_DATA_DIR": ("data_dir", Path),
    "KG_BACKEND": ("backend", str),
    "KG_WORKSPACE": ("workspace", str),
    "KG_NEO4J_URI": ("neo4j_uri", str),
    "KG_NEO4J_USER": ("neo4j_user", str),
    "NEO4J_PASSWORD": ("neo4j_password", str),
    "KG_NEO4J_PASSWORD": ("neo4j_password", str),
    "KG_NEO4J_DATABASE": ("neo4j_database", str),
    "KG_NEO4J_STAGE_UNITS": ("neo4j_stage_units", int),
    "KG_NEO4J_VECTOR_CANDIDATES": ("neo4j_vector_candidates", int),
    "KG_QDRANT_URL": ("qdrant_url", str),
    "KG_QDRANT_API_KEY": ("qdrant_api_key", str),
    "KG_VECTOR_BACKEND": ("vector_backend", str),
    "KG_SINGLE_PROCESS": ("single_process", lambda v: parse_bool("KG_SINGLE_PROCESS", v)),
    "KG_STORE_TIMEOUT": ("store_timeout", float),
    "KG_STALE_SECONDS": ("stale_seconds", float),
    "KG_STALE_READ_SECONDS": ("stale_read_seconds", float),
    "KG_VECTOR_LOCK_WAIT": ("vector_lock_wait", float),
    "KG_EMBEDDER": ("embedder", str),
    "KG_LLM_MODEL": ("llm_model", str),
    "KG_LLM_API_BASE": ("llm_api_base", str),
    "KG_LLM_TIMEOUT": ("llm_timeout", float),
    "KG_LLM_MAX_RETRIES": ("llm_max_retries", int),
    "KG_LLM_RETRY_WAIT": ("llm_retry_wait", float),
    "KG_LLM_REPAIR_ATTEMPTS": ("llm_repair_attempts", int),
    "KG_LLM_RECORD": ("llm_record", Path),
    "KG_EPSILON": ("epsilon", float),
    "KG_MAX_HOPS": ("max_hops", int),
    "KG_SPREAD_MAX_FANOUT": ("spread_max_fanout", lambda v: int(v) if v.strip().lower() not in ("", "off", "none") else None),
    "KG_SPREAD_MAX_FIRE": ("spread_max_fire", lambda v: int(v) if v.strip().lower() not in ("", "off", "none") else None),
    "KG_SPREAD_DEGREE_DAMPING": ("spread_degree_damping", float),
    "KG_SPREAD_SEED_BACKFLOW": ("spread_seed_backflow", lambda v: parse_bool("KG_SPREAD_SEED_BACKFLOW", v)),
    "KG_READ_ONLY": ("read_only", lambda v: parse_bool("KG_READ_ONLY", v)),
    "KG_DOC_TEXT_MAX_BYTES": ("doc_text_max_bytes", int),
    "KG_ALLOWED_HOSTS": ("allowed_hosts", parse_list),
    "KG_RATE_LIMIT": ("rate_limit", float),
    "KG_RATE_BURST": ("rate_burst", int),
    "KG_MAX_BODY": ("max_body", int),
    "KG_LOCAL_ROLE": ("local_role", str),
    "KG_METRICS_PUBLIC": ("metrics_public", lambda v: parse_bool("KG_METRICS_PUBLIC", v)),
    "KG_AUTH_FAIL_RATE": ("auth_fail_rate", float),
    "KG_AUTH_FAIL_BURST": ("auth_fail_burst", int),
    "KG_TRUSTED_PROXIES": ("trusted_proxies", parse_list),
    "KG_QDRANT_SHARDS": ("qdrant_shards", int),
    "KG_QDRANT_REPLICAS": ("qdrant_replicas", int),
    "KG_QDRANT_WRITE_CONSISTENCY": ("qdrant_write_consistency", int),
    "KG_QDRANT_QUANTIZATION": ("qdrant_quantization", str),
    "KG_QDRANT_ON_DISK": ("qdrant_on_disk", lambda v: parse_bool("KG_QDRANT_ON_DISK", v)),
}


def _kind(tp: Any) -> tuple[str, Callable[[Any], bool]]:
    """What a config-file value of type ``tp`` must be (in words) and the test of a TOML value
    for it. TOML has no null, so an optional setting takes its type's values."""
    import types
    from typing import Union, get_args, get_origin

    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _kind(inner[0]) if len(inner) == 1 else ("a value", lambda v: True)
    if tp is bool:
        return "true or false (a TOML boolean)", lambda v: isinstance(v, bool)
    if tp is int:
        return "a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)
    if tp is float:
        return "a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if tp in (str, Path):
        return "a string" if tp is str else "a path (a string)", lambda v: isinstance(v, str)
    if origin is tuple:
        word, ok = _kind(args[0])
        return f"a list of {word.split(' (')[0].removeprefix('a ')}s", \
            lambda v: isinstance(v, list) and all(ok(x) for x in v)
    if origin is dict:
        word, ok = _kind(args[1])
        return f"a table of {word.removeprefix('a ')}s", \
            lambda v: isinstance(v, dict) and all(isinstance(k, str) and ok(x) for k, x in v.items())
    return "a value", lambda v: True


def check_file_types(path: Path, raw: dict[str, Any]) -> None:
    """Each setting of a config file has its setting's type: ``embedder = 5`` or
    ``allowed_hosts = "kg.internal"`` (a string where a list belongs, read letter by letter)
    is an error naming the file and the setting, not an internal error or a silent misreading
    later.

    >>> check_file_types(Path("kg.toml"), {"epsilon": 0.1, "max_hops": 3, "allowed_hosts": ["a"]})
    >>> check_file_types(Path("kg.toml"), {"max_hops": "three"})
    Traceback (most recent call last):
    ...
    kgservice.errors.ConfigError: kg.toml: max_hops must be a whole number, got 'three'
    """
    from typing import get_type_hints

    hints = get_type_hints(Settings)
    for name, value in raw.items():
        if name not in hints:
            continue
        word, ok = _kind(hints[name])
        if not ok(value):
            raise ConfigError(f"{path}: {name} must be {word}, got {value!r}")


def _read_file(path: Path) -> dict[str, Any]:
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the config file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    known = {f.name for f in fields(Settings)}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {sorted(unknown)}; known: {sorted(known)}")
    check_file_types(path, raw)
    if SECRET_FIELDS & set(raw):
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(
                f"{path} holds a secret ({', '.join(sorted(SECRET_FIELDS & set(raw)))}) but is readable by "
                f"group/others (mode {oct(mode & 0o777)}); run: chmod 600 {path}"
            )
    return raw


def load_settings(config_file: Path | None = None, env: dict[str, str] | None = None,
                  flags: dict[str, Any] | None = None) -> Settings:
    """``flags``: command-line values (None: not given), above the environment; they go through
    the same checks, so ``--backend bogus`` is refused as ``KG_BACKEND=bogus`` is."""
    env = dict(os.environ if env is None else env)
    values: dict[str, Any] = {}
    path = config_file or (Path(env["KG_CONFIG"]) if env.get("KG_CONFIG") else None)
    if path is not None:
        if not path.exists():
            raise ConfigError(f"config file not found: {path}")
        values.update(_read_file(path))
    else:
        path = data_dir_config(flags or {}, env)
        if path is not None:
            values.update(_read_file(path))
            if "data_dir" in values:
                raise ConfigError(f"{path}: data_dir cannot be set in the data directory's own {CONFIG_FILE}; "
                                  "give it with --data-dir or KG_DATA_DIR, or in a file named by --config / KG_CONFIG")
    for var, (name, conv) in _ENV.items():
        if env.get(var):
            try:
                values[name] = conv(env[var])
            except ConfigError:
                raise
            except ValueError:
                shown = redact_uri(env[var]) if name in URI_FIELDS else env[var]
                raise ConfigError(f"environment variable {var}={shown!r} is not a valid {name}") from None
    if env.get("KG_LEXICON"):
        values["lexicon_files"] = tuple(Path(p) for p in env["KG_LEXICON"].split(os.pathsep) if p)
    if "lexicon_files" in values:
        values["lexicon_files"] = tuple(Path(p) for p in values["lexicon_files"])
    if env.get("KG_LLM_RECORDINGS"):
        values["llm_recordings"] = tuple(Path(p) for p in env["KG_LLM_RECORDINGS"].split(os.pathsep) if p)
    if "llm_recordings" in values:
        values["llm_recordings"] = tuple(Path(p) for p in values["llm_recordings"])
    if values.get("llm_record") is not None:
        values["llm_record"] = Path(values["llm_record"])
    if "data_dir" in values:
        values["data_dir"] = Path(values["data_dir"])
    if "allowed_hosts" in values:
        values["allowed_hosts"] = tuple(str(h) for h in values["allowed_hosts"])
    if "trusted_proxies" in values:
        values["trusted_proxies"] = tuple(str(h) for h in values["trusted_proxies"])
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    values.update(given)
    if values.get("neo4j_uri") and "backend" not in values:
        values["backend"] = "neo4j"
    if "read_only" in values and not isinstance(values["read_only"], bool):
        raise ConfigError(f"{path}: read_only must be true or false (a TOML boolean), got {values['read_only']!r}")
    if "llm_model" in values:
        values["llm_model_chosen"] = True
    settings = Settings(**values)
    if settings.backend not in ("embedded", "neo4j"):
        where = "--backend" if "backend" in given else "KG_BACKEND" if env.get("KG_BACKEND") else f"backend in {path}"
        raise ConfigError(f"{where} must be 'embedded' or 'neo4j', got {settings.backend!r}")
    if settings.data_dir.exists() and not settings.data_dir.is_dir():
        where = ("--data-dir" if "data_dir" in given else "KG_DATA_DIR" if env.get("KG_DATA_DIR")
                 else f"data_dir in {path}" if path is not None else "the data directory")
        raise ConfigError(f"{where} {str(settings.data_dir)!r} is a file, not a folder: the data directory holds "
                          "the knowledge store (default ./.kg); give a folder, or one to be made")
    if settings.local_role not in ("reader", "writer", "admin"):
        raise ConfigError(f"local_role (KG_LOCAL_ROLE) must be reader, writer or admin, got {settings.local_role!r}")
    if settings.backend == "neo4j" and not settings.neo4j_uri:
        raise ConfigError("backend 'neo4j' needs KG_NEO4J_URI (e.g. bolt://127.0.0.1:7687)")
    if settings.neo4j_uri:
        check_neo4j_uri(settings.neo4j_uri)
    if settings.backend == "neo4j" and not settings.neo4j_password:
        raise ConfigError(NEO4J_NO_PASSWORD)
    check_vector_backend(settings)
    check_cluster_settings(settings)
    check_lexicon(settings, "KG_LEXICON" if env.get("KG_LEXICON") else f"lexicon_files in {path}")
    return settings


def data_dir_config(flags: dict[str, Any], env: dict[str, str]) -> Path | None:
    """``<data dir>/kg.toml`` (the file ``kg init`` writes) when it exists: the config file of
    every command on that data directory unless ``--config`` / ``KG_CONFIG`` names another. The
    data directory is the flag's, else ``KG_DATA_DIR``'s, else ``./.kg``."""
    given = flags.get("data_dir")
    data_dir = Path(given) if given is not None else Path(env["KG_DATA_DIR"]) if env.get("KG_DATA_DIR") else Settings.data_dir
    candidate = data_dir / CONFIG_FILE
    return candidate if candidate.is_file() else None


def check_workspace_name(name: object) -> None:
    """A workspace name is lower-case letters, digits, ``-`` and ``_`` (1-63, starting with a
    letter or digit): it names a directory and a collection, so nothing else is accepted."""
    if not isinstance(name, str) or not WORKSPACE_NAME.fullmatch(name):
        raise ConfigError(f"workspace (--workspace / KG_WORKSPACE) must be 1-63 lower-case letters, digits, "
                          f"'-' or '_', starting with a letter or digit; got {name!r}")


NEO4J_NO_PASSWORD = "Neo4j needs a password: set NEO4J_PASSWORD (or neo4j_password in a chmod-600 config file)"


def check_lexicon(settings: Settings, where: str = "KG_LEXICON") -> None:
    """Load the user lexicon files once up front: a command that never resolves a predicate
    (``kg stats``, a directed ``kg expand``) would otherwise run without them and say nothing."""
    if not settings.lexicon_files and not settings.tau:
        return
    from kgservice.families.lexicon import Lexicon, LexiconError

    try:
        Lexicon.load(list(settings.lexicon_files), settings.tau)
    except LexiconError as exc:
        hint = f"{where} takes JSON lexicon files shaped like kgservice/families/lexicon.json"
        raise ConfigError(f"{exc} ({hint}, separated by {os.pathsep!r})" if settings.lexicon_files else str(exc)) from None


def check_vector_backend(settings: Settings) -> None:
    """The vector backend is one the factory knows, and ``neo4j`` has a Neo4j graph to live in."""
    if settings.vector_backend not in ("auto", "qdrant", "edge", "neo4j"):
        raise ConfigError(f"vector_backend (KG_VECTOR_BACKEND) must be auto, qdrant, edge or neo4j, "
                          f"got {settings.vector_backend!r}")
    if settings.vector_backend == "neo4j" and settings.backend != "neo4j":
        raise ConfigError("KG_VECTOR_BACKEND=neo4j keeps the vectors in the Neo4j graph database: it needs "
                          "KG_BACKEND=neo4j and KG_NEO4J_URI (or use the default vector backend, auto)")
    if settings.vector_backend == "neo4j" and settings.qdrant_url:
        raise ConfigError("KG_VECTOR_BACKEND=neo4j and KG_QDRANT_URL name two vector stores: unset one of them")
    if settings.neo4j_vector_candidates is not None and not 1 <= settings.neo4j_vector_candidates <= 10_000:
        raise ConfigError("neo4j_vector_candidates (KG_NEO4J_VECTOR_CANDIDATES) must be between 1 and 10000 "
                          f"(neighbours asked of Neo4j's vector index per search), got {settings.neo4j_vector_candidates}")


QUANTIZATIONS = ("none", "scalar", "binary")


def check_cluster_settings(settings: Settings) -> None:
    """The settings a deployment of several servers adds (trusted proxies, Qdrant collection
    layout), checked at load so a typo is exit 2 naming the variable, not a surprise later."""
    from kgservice.net import parse_networks

    parse_networks(settings.trusted_proxies, "KG_TRUSTED_PROXIES (trusted_proxies)")
    for name, var in (("qdrant_shards", "KG_QDRANT_SHARDS"), ("qdrant_replicas", "KG_QDRANT_REPLICAS"),
                      ("qdrant_write_consistency", "KG_QDRANT_WRITE_CONSISTENCY")):
        value = getattr(settings, name)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ConfigError(f"{var} ({name}) must be a whole number >= 1, got {value!r}")
    if settings.qdrant_quantization not in QUANTIZATIONS:
        raise ConfigError(f"KG_QDRANT_QUANTIZATION (qdrant_quantization) must be one of {', '.join(QUANTIZATIONS)}, "
                          f"got {settings.qdrant_quantization!r}")
    if settings.auth_fail_rate < 0 or settings.auth_fail_burst < 1:
        raise ConfigError("KG_AUTH_FAIL_RATE must be >= 0 and KG_AUTH_FAIL_BURST >= 1 "
                          f"(got {settings.auth_fail_rate!r}, {settings.auth_fail_burst!r})")


CONFIG_FILE = "kg.toml"
CONFIG_TEMPLATE = (
    "# kgservice settings, read by every kg command on this data directory (unless --config or\n"
    "# KG_CONFIG names another file); env vars and flags override these. Secrets (neo4j_password,\n"
    "# qdrant_api_key) belong in the environment, or here only with `chmod 600`.\n"
    "# backend = \"neo4j\"\n# neo4j_uri = \"bolt://127.0.0.1:7687\"\n"
    "# qdrant_url = \"http://127.0.0.1:6333\"\n# embedder = \"default\"\n"
    "# llm_model = \"kgoffline/scripted\"\n# epsilon = 0.05\n# max_hops = 3\n")


def init_data_dir(settings: Settings) -> Path:
    """Create the data directory and a commented config template in it (never overwritten,
    never holding a secret); returns the template's path."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    settings.kb_dir.mkdir(parents=True, exist_ok=True)  # a named workspace is made here
    cfg = settings.data_dir / CONFIG_FILE
    if not cfg.exists():
        cfg.write_text(CONFIG_TEMPLATE, "utf-8")
    return cfg
