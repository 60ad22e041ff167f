"""compose/'s api and worker services run commands the current CLI accepts, with settings the
current config reads (Docker is not available in CI here: this checks the file, not a run)."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import re
import shlex
from pathlib import Path

import pytest
import typer
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _services() -> dict:
    return yaml.safe_load((ROOT / "compose" / "docker-compose.yml").read_text("utf-8"))["services"]


@pytest.mark.parametrize("service", ["api", "worker"])
def test_compose_commands_parse_with_the_current_cli(service):
    from kgservice.cli.app import app

    script = " ".join(_services()[service]["command"][2:])
    (line,) = re.findall(r"exec /venv/bin/kg ([^;]+)", script)
    args = shlex.split(line)
    group = typer.main.get_command(app)
    ctx = group.make_context("kg", list(args), resilient_parsing=False)
    name, cmd, rest = group.resolve_command(ctx, list(args))
    cmd.make_context(name, rest)  # raises on an unknown option or a bad value


def test_compose_environment_names_are_read_by_the_config():
    from kgservice.config import _ENV as ENV

    env = _services()["api"]["environment"]
    assert _services()["worker"]["environment"] == env  # one anchor for both
    kg_names = {k for k in env if k.startswith("KG_")}
    assert kg_names <= set(ENV), f"compose sets KG_ names the config does not read: {kg_names - set(ENV)}"
    assert env["PATH"].startswith("/venv/bin:")  # `docker compose exec api kg ...` finds the CLI


def _interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${NAME:-default}`` / ``${NAME:?message}`` / ``${NAME}`` (what the file uses)."""
    def one(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        got = env.get(name, "")
        if op == ":?" and not got:
            raise AssertionError(f"compose needs {name}: {arg}")
        return got if got or op != ":-" else arg

    return re.sub(r"\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}", one, str(value))


@pytest.mark.neo4j
def test_compose_api_and_worker_run_as_real_processes(tmp_path, neo4j_connection):
    """The api and worker services' own ``command`` and ``environment`` from the compose file,
    run as processes on this machine (no Docker engine here: the image, the volumes and the
    network are not exercised). Mapped, and only these: the container paths /venv (a bin/kg
    that runs this checkout), /src (this checkout) and /data (a directory per service); the
    host names ``neo4j`` -> the test Neo4j on loopback; port 8080 -> a free one. Not mapped:
    KG_QDRANT_URL is left empty (no Qdrant server here: vectors stay in each data dir) and
    KG_EMBEDDER is set to hash:256 (the packaged model is not needed to move a job). Checked:
    /readyz answers 200, and a job submitted through the api is run by the worker."""
    import os
    import stat
    import subprocess
    import sys
    import time

    import httpx

    from tests.processes import free_port, stop, wait_ready

    wipe_all(neo4j_connection)
    uri = os.environ["KG_TEST_NEO4J_URI"]
    bolt = uri.rsplit("//", 1)[1]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    kg_bin = venv / "bin" / "kg"
    kg_bin.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'from kgservice.cli.app import main; main()' \"$@\"\n")
    kg_bin.chmod(kg_bin.stat().st_mode | stat.S_IXUSR)
    port = free_port()
    outer = {"NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", "")}
    procs, logs = {}, {}
    try:
        for name in ("api", "worker"):
            svc = _services()[name]
            env = {k: _interpolate(v, outer) for k, v in svc["environment"].items()}
            env["PATH"] = env["PATH"].replace("/venv/bin", str(venv / "bin"))
            env["KG_NEO4J_URI"] = env["KG_NEO4J_URI"].replace("neo4j:7687", bolt)
            env["KG_DATA_DIR"] = str(tmp_path / f"{name}-data")
            env.pop("KG_QDRANT_URL")
            env["KG_SINGLE_PROCESS"] = "1"  # vectors per data dir without the Qdrant server (refused otherwise)
            env.update({"KG_EMBEDDER": "hash:256", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                        "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
            script = svc["command"][2].replace("/venv", str(venv)).replace("/src", str(ROOT))
            script = script.replace("--port 8080", f"--port {port}")
            assert svc["command"][:2] == ["bash", "-c"] and svc["working_dir"] == "/src"
            logs[name] = open(tmp_path / f"{name}.log", "w+")
            procs[name] = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=logs[name],
                                           stderr=subprocess.STDOUT)
            if name == "api":
                admin_env = env
                base = f"http://127.0.0.1:{port}"
                # the worker's depends_on: api healthy (its healthcheck: /readyz 200)
                ready = wait_ready(base, procs["api"], tmp_path / "api.log", bound=120)
                assert ready.json()["checks"]["graph"] == "ok", ready.json()
        # the file's header: `docker compose exec api kg keys create --user you --role ...`
        made = subprocess.run(["kg", "keys", "create", "--user", "you", "--role", "writer"], env=admin_env,
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert made.returncode == 0, made.stderr
        key = re.search(r"kg_[A-Za-z0-9_\-]+", made.stdout).group(0)
        h = {"Authorization": f"Bearer {key}"}
        r = httpx.post(base + "/v1/ingest", json={"units": "#cw1 {compose} [runs] {worker}\n", "doc": "c.units"},
                       headers=h, timeout=30)
        assert r.status_code == 202, r.text
        job_id = r.json()["job_id"]
        deadline = time.monotonic() + 120
        while (job := httpx.get(base + f"/v1/jobs/{job_id}", headers=h, timeout=30).json())["status"] != "done":
            assert job["status"] in ("queued", "running"), job
            assert procs["worker"].poll() is None, (tmp_path / "worker.log").read_text()
            assert time.monotonic() < deadline, f"job not done: {job}\n{(tmp_path / 'worker.log').read_text()}"
            time.sleep(0.3)
        assert job["user"] == "you"
        assert job["owner"].split(":")[1] == str(procs["worker"].pid)  # run by the worker service's process
        assert httpx.get(base + "/v1/units/cw1", headers=h, timeout=30).status_code == 200
    finally:
        for name, proc in procs.items():
            stop(proc, 30)
            logs[name].close()


# -- the file itself: the Compose Specification's schema, pins, healthchecks, start order -------

def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose" / "docker-compose.yml").read_text("utf-8"))


def _compose_schema() -> dict:
    """The Compose Specification's JSON schema as check-jsonschema vendors it (a dev dependency;
    its licence file sits beside it in that package)."""
    import json
    import os
    from importlib import resources

    try:
        vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    except ModuleNotFoundError:
        if os.environ.get("CI") == "true":
            pytest.fail("check-jsonschema (the dev extra) is not installed: the compose schema check cannot run")
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    return json.loads(vendor.joinpath("compose-spec.json").read_text("utf-8"))


def _schema_errors(doc: dict) -> list[str]:
    from jsonschema.validators import validator_for

    schema = _compose_schema()
    validator = validator_for(schema)(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_compose_file_is_valid_for_the_compose_specification():
    assert _schema_errors(_compose()) == []


def test_the_schema_check_catches_a_broken_file():
    broken = _compose()
    broken["services"]["worker"]["depends_on"]["api"] = {"condition": "service_ready"}
    broken["services"]["api"]["healthcheck"]["interval"] = 10
    errors = _schema_errors(broken)
    assert any("depends_on" in e for e in errors) and any("interval" in e for e in errors), errors


def _default(value: str) -> str:
    """``${NAME:-default}`` -> default (what compose runs with no override)."""
    return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", value)


def test_every_image_is_pinned_to_a_release():
    images = {name: _default(svc["image"]) for name, svc in _compose()["services"].items()}
    dockerfile = (ROOT / "compose" / "Dockerfile").read_text("utf-8")
    images["Dockerfile base"] = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.M).group(1)
    for name, image in images.items():
        repo, _, tag = image.rpartition(":")
        assert repo and re.match(r"v?\d+\.\d+\.\d+", tag), f"{name}: image {image!r} is not pinned to a release"
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    assert images["api"] == images["worker"] == f"kgservice:{version}"


def test_api_and_worker_run_the_image_built_from_the_wheel():
    services = _compose()["services"]
    dockerfile = (ROOT / "compose" / "Dockerfile").read_text("utf-8")
    assert "pip wheel" in dockerfile and "ls /wheels/kgservice-*.whl" in dockerfile
    assert re.search(r"pip install [^\n]*whl\}\[serve\]", dockerfile)  # the built wheel, with the serve extra
    for name in ("api", "worker"):
        svc = services[name]
        assert svc["build"]["dockerfile"] == "compose/Dockerfile" and svc["build"]["context"] == ".."
        assert "pip install" not in " ".join(svc["command"]), f"{name} installs at start"
        assert not any(str(v).startswith("..:") for v in svc.get("volumes", [])), f"{name} mounts the checkout"


def test_every_service_is_healthchecked_and_started_after_what_it_needs():
    services = _compose()["services"]
    one_shot = {dep for svc in services.values() for dep, cond in (svc.get("depends_on") or {}).items()
                if cond.get("condition") == "service_completed_successfully"}
    assert one_shot == {"kg-plugin"}  # builds the plugin jar and exits: done, not healthy
    for name, svc in services.items():
        if name not in one_shot:
            assert "test" in svc.get("healthcheck", {}), f"{name} has no healthcheck"
        for dep, cond in (svc.get("depends_on") or {}).items():
            assert isinstance(cond, dict), f"{name} depends on {dep} without a condition"
            want = "service_completed_successfully" if dep in one_shot else "service_healthy"
            assert cond["condition"] == want, (name, dep, cond)
    assert set(services["worker"]["depends_on"]) == {"neo4j", "qdrant", "api"}
    assert set(services["api"]["depends_on"]) == {"neo4j", "qdrant"}


def test_the_worker_healthcheck_is_a_command_the_cli_accepts():
    from kgservice.cli.app import app

    test = _compose()["services"]["worker"]["healthcheck"]["test"]
    assert test[:2] == ["CMD", "/venv/bin/kg"]
    group = typer.main.get_command(app)
    ctx = group.make_context("kg", list(test[2:]), resilient_parsing=False)
    name, cmd, rest = group.resolve_command(ctx, list(test[2:]))
    cmd.make_context(name, rest)


# -- compose/cluster.yml: several servers behind a balancer (docs/deploy.md) ---------------------

def _cluster() -> dict:
    return yaml.safe_load((ROOT / "compose" / "cluster.yml").read_text("utf-8"))


def test_the_cluster_file_is_valid_for_the_compose_specification():
    assert _schema_errors(_cluster()) == []


def test_the_cluster_pins_its_images_and_builds_kgservice_from_the_wheel():
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    for name, svc in _cluster()["services"].items():
        repo, _, tag = _default(svc["image"]).rpartition(":")
        assert repo and re.match(r"v?\d+\.\d+\.\d+", tag), f"{name}: image {svc['image']!r} is not pinned"
        if repo == "kgservice":
            assert tag == version and svc["build"]["dockerfile"] == "compose/Dockerfile"


def test_the_cluster_starts_each_service_after_what_it_needs():
    services = _cluster()["services"]
    assert services["api"]["deploy"]["replicas"] == 3 and services["worker"]["deploy"]["replicas"] == 2
    for name, svc in services.items():
        if name != "migrate":  # one shot: done, not healthy
            assert "test" in svc.get("healthcheck", {}), f"{name} has no healthcheck"
        for dep, cond in (svc.get("depends_on") or {}).items():
            want = "service_completed_successfully" if dep == "migrate" else "service_healthy"
            assert cond == {"condition": want}, (name, dep, cond)
    for name in ("api", "worker"):  # no server or worker of a new image before its kg migrate
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert [n for n, s in services.items() if s.get("ports")] == ["balancer"]  # the one way in


def test_the_cluster_commands_and_settings_are_the_current_clis():
    from kgservice.cli.app import app
    from kgservice.config import _ENV, load_settings
    from kgservice.net import is_in, parse_networks

    doc = _cluster()
    services = doc["services"]
    group = typer.main.get_command(app)
    for name in ("migrate", "api", "worker"):
        (line,) = re.findall(r"exec /venv/bin/kg ([^;]+)", " ".join(services[name]["command"][2:]))
        args = shlex.split(line)
        ctx = group.make_context("kg", list(args), resilient_parsing=False)
        sub, cmd, rest = group.resolve_command(ctx, list(args))
        cmd.make_context(sub, rest)
        assert services[name]["environment"] == services["api"]["environment"]  # one anchor
    env = services["api"]["environment"]
    assert {k for k in env if k.startswith("KG_")} <= set(_ENV)
    given = {k: _interpolate(v, {"KG_NEO4J_URI": "neo4j+s://db.example:7687", "NEO4J_PASSWORD": "secret-pw"})
             for k, v in env.items()}
    settings = load_settings(env=given)  # every value passes the config's own checks
    assert (settings.qdrant_shards, settings.qdrant_replicas, settings.qdrant_quantization) == (6, 2, "scalar")
    # the servers trust the balancer's fixed address, and only it
    balancer_ip = services["balancer"]["networks"]["kg"]["ipv4_address"]
    subnet = doc["networks"]["kg"]["ipam"]["config"][0]["subnet"]
    assert settings.trusted_proxies == (balancer_ip,) and is_in(balancer_ip, parse_networks([subnet], "subnet"))


def test_the_balancer_forwards_what_the_servers_read():
    conf = _cluster()["configs"]["balancer"]["content"]
    for line in ("proxy_set_header X-Forwarded-For $$proxy_add_x_forwarded_for;",
                 "proxy_set_header X-Forwarded-Proto $$scheme;",
                 "proxy_set_header X-Request-ID $$kg_request_id;",
                 "proxy_buffering off;"):  # SSE (ask, job events) streams through
        assert line in conf, line
    assert "server api:8080;" in conf


def test_the_qdrant_nodes_form_one_cluster():
    services = _cluster()["services"]
    nodes = [n for n in services if n.startswith("qdrant-")]
    assert nodes == ["qdrant-1", "qdrant-2", "qdrant-3"]
    for n in nodes:
        script = " ".join(services[n]["command"][2:])
        assert services[n]["environment"]["QDRANT__CLUSTER__ENABLED"] == "true"
        assert f"--uri http://{n}:6335" in script
        assert ("--bootstrap" in script) == (n != "qdrant-1")
