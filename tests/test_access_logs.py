"""No access log of the production setup (gunicorn behind nginx, Dockerfile and
docker-compose.yml) writes a query string, where a set-password link keeps its token."""

from __future__ import annotations

import json
import re
import shlex
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
LINK = "/set-password/"
TOKEN = "cvq3kz-5f2b1e0c9d8a7b6c5d4e3f2a1b0c9d8e"
QUERY = f"uid=Mg&token={TOKEN}"


def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def dockerfile_command() -> list[str]:
    line = re.search(r"^CMD (\[.*?\])$", (REPO / "Dockerfile").read_text(), re.M | re.S)
    return json.loads(line.group(1).replace("\\\n", ""))


def compose_command() -> list[str]:
    script = compose()["services"]["web"]["command"][-1]
    return shlex.split(script.split("exec ", 1)[1])


def gunicorn_line(argv: list[str], monkeypatch) -> str:
    """The access log line gunicorn, started with ``argv``, writes for the link's request."""
    from gunicorn.app.wsgiapp import WSGIApplication
    from gunicorn.glogging import Logger

    assert argv[0] == "gunicorn", argv
    monkeypatch.chdir(REPO)  # as in the image: WORKDIR /app, the repository's files
    monkeypatch.setattr("sys.argv", argv)
    cfg = WSGIApplication("%(prog)s [OPTIONS] [APP_MODULE]").cfg
    assert (cfg.accesslog, cfg.bind, cfg.workers) == ("-", ["0.0.0.0:8000"], 3)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"{LINK}?{QUERY}",
        "PATH_INFO": LINK,
        "QUERY_STRING": QUERY,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "10.0.0.7",
        "HTTP_USER_AGENT": "Firefox",
    }
    response = SimpleNamespace(status="302 Found", headers=[], sent=0)
    atoms = Logger(cfg).atoms(response, SimpleNamespace(headers=[]), environ, timedelta(0))
    return cfg.access_log_format % atoms


@pytest.mark.parametrize("command", [dockerfile_command, compose_command])
def test_gunicorn_logs_the_path_without_the_query_string(command, monkeypatch):
    line = gunicorn_line(command(), monkeypatch)
    assert f'"GET {LINK} HTTP/1.1" 302' in line
    assert TOKEN not in line and "?" not in line


def test_gunicorn_s_default_format_would_have_logged_the_token(monkeypatch, tmp_path):
    """What the test above guards against: gunicorn's default format writes the query."""
    (tmp_path / "empty.py").write_text("")
    argv = ["gunicorn", "--config", str(tmp_path / "empty.py"), "--bind", "0.0.0.0:8000"]
    argv += ["--workers", "3", "--access-logfile", "-", "config.wsgi:application"]
    assert TOKEN in gunicorn_line(argv, monkeypatch)


def test_nginx_logs_the_path_without_the_query_string():
    conf = compose()["configs"]["nginx"]["content"].replace("$$", "$")
    formats = dict(re.findall(r"log_format\s+(\w+)\s+((?:'[^']*'\s*)+);", conf))
    logs = re.findall(r"access_log\s+(\S+)\s+(\w+);", conf)
    assert logs == [("/var/log/nginx/access.log", "waypoint")], conf
    line = "".join(re.findall(r"'([^']*)'", formats["waypoint"]))
    assert '"$request_method $uri $server_protocol"' in line
    # $request, $request_uri, $args and $query_string all hold the query string.
    assert not re.search(r"\$(request|request_uri|args|query_string|arg_\w+)\b", line), line
    # Every request passes this server: nginx's default format ("main", with $request) is
    # left for none of them.
    assert conf.count("server {") == 1
