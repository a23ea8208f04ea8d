"""Hostile imports, and the memory a thumbnail of a large screenshot costs.

    python bench/bench_hostile_inputs.py            # every hostile input, thumbnails at 4096x4096
    python bench/bench_hostile_inputs.py --quick    # bombs of 64 MiB instead of 1 GiB
    python bench/bench_hostile_inputs.py --api-only --code ../main   # part 3 on another checkout

Part 1 builds hostile inputs (zip and tar.gz bombs, an image header claiming 100,000 x 100,000
pixels, a real PNG over the size limit, a PNG of random pixel data, deeply nested JSON, a
member name no disk can hold, a string longer than its column, a NUL character, ...)
and runs each through the import (what ``manage.py import_trajectories`` and the import job
call) against a throwaway SQLite database. For each it prints whether it was refused cleanly
(a named error, nothing written), the message, the seconds it took and the bytes left unpacked
in the import's folder. A legal screenshot of the largest size is the control: it must import.

Part 2 makes the filmstrip thumbnail of a legal 4096x4096 screenshot (PNG RGBA, PNG RGB, JPEG,
WebP) with the code this branch replaced ("before") and with ``make_thumbnail`` ("after"), each
in a fresh subprocess, and prints the peak RSS the thumbnail added (``ru_maxrss``).

Part 3 sends hostile requests to the API's upload endpoints (memory graph import as a JSON body
or a file, app graph import, the evaluator's predictions and benchmark, a graph build's params)
through a real server (``manage.py runserver --noreload --nothreading``, DEBUG=0, one process
per request, so that its peak RSS is that request's): JSON nested 100,000 deep, an
``embedder.dim`` of 10^12, a benchmark zip of ~0.5 MB that unpacks to 512 MiB, an 800 MB graph
upload, a JSON body over DATA_UPLOAD_MAX_MEMORY_SIZE and a 60 MB task id. For each it prints the
status, whether the answer is JSON with a ``detail``, the bytes of the answer, the seconds and
the peak RSS the request added to the server (VmHWM after it, less after a warm-up request).
``--code DIR`` serves another checkout (e.g. the main branch) for a before/after comparison.

Targets: every hostile input refused cleanly; the control imports; the thumbnail's peak for a
PNG at most the decoded image (64 MiB at 4096x4096 RGBA) plus a few MiB; every hostile request
answered 4xx with a JSON detail of at most a few hundred bytes, none adding more than ~64 MiB
(WAYPOINT_MAX_FILE_BYTES, the most one document may hold) to the server's peak.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import resource
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MiB = 1024**2
SIDE = 4096


def _peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB, macOS: bytes
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


# ---------------------------------------------------------------- building inputs


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header_only(width: int, height: int, pixels: bytes) -> bytes:
    """A PNG with a valid header and chunk checksums around ``pixels`` as its IDAT data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )


def screenshot(width: int, height: int, mode: str = "RGBA", fmt: str = "PNG") -> bytes:
    from PIL import Image, ImageDraw

    fill = (30, 80, 160, 255)[: len(mode)] if mode in ("RGB", "RGBA") else 90
    image = Image.new(mode, (width, height), fill)
    draw = ImageDraw.Draw(image)
    for top in range(0, height, 96):
        bar = (top % 256, 220, 120, 255)[: len(mode)] if mode in ("RGB", "RGBA") else top % 256
        draw.rectangle((24, top, width - 24, top + 40), fill=bar)
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def zip_of_zeros(path: Path, members: int, size: int) -> Path:
    block = bytes(MiB)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for i in range(members):
            with archive.open(f"export/zeros-{i:02}.bin", "w", force_zip64=True) as out:
                for _ in range(size // MiB):
                    out.write(block)
    return path


class _Zeros(io.RawIOBase):
    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def tar_gz_of_zeros(path: Path, members: int, size: int) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=9) as archive:
        for i in range(members):
            info = tarfile.TarInfo(f"export/zeros-{i:02}.bin")
            info.size = size
            archive.addfile(info, io.BufferedReader(_Zeros(size)))
    return path


def zip_folder(folder: Path, path: Path, extra: dict | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            archive.write(file, f"export/{file.relative_to(folder)}")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


def _manifest_set(folder: Path, name: str, data: bytes) -> None:
    import hashlib

    (folder / name).write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def with_first_screenshot(base: Path, dest: Path, data: bytes, size: tuple[int, int]) -> Path:
    """A copy of the export whose first screenshot (and its declared size) is ``data``."""
    import shutil

    shutil.copytree(base, dest)
    lines = [json.loads(line) for line in (dest / "trajectories.jsonl").read_text().splitlines()]
    screen = lines[0]["screens"][0]
    _manifest_set(dest, screen["screenshot"], data)
    screen["width"], screen["height"] = size
    _manifest_set(dest, "trajectories.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode())
    return dest


def with_jsonl(base: Path, dest: Path, text: str) -> Path:
    import shutil

    shutil.copytree(base, dest)
    _manifest_set(dest, "trajectories.jsonl", text.encode())
    return dest


def _line_with(line: str, *path_and_value) -> str:
    """The JSON line with the value at ``path`` replaced (keys and list positions)."""
    record = json.loads(line)
    *path, last, value = path_and_value
    target = record
    for key in path:
        target = target[key]
    target[last] = value
    return json.dumps(record) + "\n"


def build_inputs(base: Path, work: Path, bomb_size: int) -> list[tuple[str, Path, bool]]:
    """(label, path, expected to be refused)."""
    from PIL import Image

    first = json.loads((base / "trajectories.jsonl").read_text().splitlines()[0])
    shot = (base / first["screens"][0]["screenshot"]).read_bytes()
    with Image.open(io.BytesIO(shot)) as image:
        size = image.size
    line = (base / "trajectories.jsonl").read_text().splitlines()[0]
    total = human(16 * bomb_size)
    symlink = zipfile.ZipInfo("export/link")
    symlink.external_attr = 0o120777 << 16
    inputs = [
        (
            f"zip bomb: 16 x {human(bomb_size)} of zeros ({total})",
            zip_of_zeros(work / "bomb.zip", 16, bomb_size),
            True,
        ),
        (
            f"tar.gz bomb: 16 x {human(bomb_size)} of zeros ({total})",
            tar_gz_of_zeros(work / "bomb.tar.gz", 16, bomb_size),
            True,
        ),
        (
            "PNG header claiming 100000x100000 pixels",
            with_first_screenshot(
                base, work / "header-bomb", png_header_only(100_000, 100_000, os.urandom(64)), size
            ),
            True,
        ),
        (
            "real PNG of 8192x8192 pixels (over the side limit)",
            with_first_screenshot(base, work / "huge", screenshot(8192, 8192, "L"), (8192, 8192)),
            True,
        ),
        (
            "PNG whose pixel data (IDAT) is random",
            with_first_screenshot(
                base, work / "random-idat", png_header_only(*size, os.urandom(20_000)), size
            ),
            True,
        ),
        (
            "PNG cut in half",
            with_first_screenshot(base, work / "truncated", shot[: len(shot) // 2], size),
            True,
        ),
        (
            "JSON nested 100,000 deep",
            with_jsonl(base, work / "nested", "[" * 100_000 + "\n"),
            True,
        ),
        (
            "an integer of 5,000 digits",
            with_jsonl(
                base,
                work / "digits",
                line.replace('"width":', '"width":1' + "0" * 5000, 1) + "\n",
            ),
            True,
        ),
        (
            "zip: a file and a folder of the same name",
            zip_folder(base, work / "clash.zip", {"export/screens": b"x"}),
            True,
        ),
        (
            "zip: a member escaping the folder (../)",
            zip_folder(base, work / "escape.zip", {"../../escaped.txt": b"gotcha"}),
            True,
        ),
        (
            "zip: a symbolic link",
            zip_folder(base, work / "symlink.zip", {symlink: b"/etc/passwd"}),
            True,
        ),
        (
            "zip: a member whose file name is 300 bytes long",
            zip_folder(base, work / "long-name.zip", {"export/" + "a" * 300 + ".txt": b"x"}),
            True,
        ),
        (
            "a device model longer than its column (201 characters)",
            with_jsonl(base, work / "long-model", _line_with(line, "device", "model", "m" * 201)),
            True,
        ),
        (
            "a NUL character in a step's thought",
            with_jsonl(base, work / "nul", _line_with(line, "steps", 0, "thought", "a\x00b")),
            True,
        ),
        (
            f"control: a legal {SIDE}x{SIDE} screenshot",
            with_first_screenshot(base, work / "legal", screenshot(SIDE, SIDE), (SIDE, SIDE)),
            False,
        ),
    ]
    return inputs


def human(size: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- phases (in subprocesses)


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def phase_hostile(args) -> list[dict]:
    _setup()
    from django.contrib.auth import get_user_model

    from fixtures.generate import generate_record
    from formats import archive
    from formats.catalogue import export_trajectories, import_trajectories
    from trajectories.models import Screen, Trajectory
    from trajectories.services import do_create_project, do_import_trajectory
    from trajectories.validation import InvalidData

    unpacked = [0]
    copy = archive.UnpackBudget.copy

    def counting_copy(budget, src, target, declared, where):
        try:
            copy(budget, src, target, declared, where)
        finally:
            unpacked[0] += target.stat().st_size if target.exists() else 0

    archive.UnpackBudget.copy = counting_copy
    work = Path(args.work)
    user = get_user_model().objects.create_user("bench")
    source = do_create_project("source", user)
    do_import_trajectory(source, generate_record(1, steps=4, size=(540, 1200)))
    base = work / "base"
    export_trajectories(Trajectory.objects.filter(project=source), base)
    Trajectory.objects.all().delete()
    target = do_create_project("target", user)
    rows = []
    for label, path, hostile in build_inputs(base, work, args.bomb_size):
        unpack = work / f"unpack-{len(rows)}"
        unpack.mkdir()
        unpacked[0] = 0
        before = (Trajectory.objects.count(), Screen.objects.count())
        started = time.perf_counter()
        try:
            import_trajectories(target, path, "auto", actor=user, workdir=unpack)
            outcome, message = "imported", ""
        except InvalidData as exc:
            outcome, message = "refused", str(exc)
        except Exception as exc:  # what the bench is looking for: not a named error
            outcome, message = "internal error", f"{type(exc).__name__}: {exc}"[:200]
        seconds = time.perf_counter() - started
        written = (Trajectory.objects.count(), Screen.objects.count()) != before
        clean = (outcome == "refused" and not written) if hostile else outcome == "imported"
        rows.append(
            {
                "input": label,
                "size": path.stat().st_size if path.is_file() else None,
                "outcome": outcome,
                "clean": clean,
                "message": message,
                "seconds": seconds,
                "unpacked": unpacked[0],
            }
        )
        if not hostile:
            Trajectory.objects.filter(project=target).delete()
    return rows


def _old_thumbnail(data: bytes, width: int) -> bytes:
    """The thumbnail code before this branch (devices/views.py), for comparison."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.draft("RGB", (width, width * 4))
        image = image.convert("RGB")
        image.thumbnail((width, width * 4))
        out = io.BytesIO()
        image.save(out, "WEBP", quality=70, method=2)
    return out.getvalue()


def phase_thumbnail(args) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from trajectories.images import THUMB_WIDTH, make_thumbnail

    data = Path(args.image).read_bytes()
    start = _peak_rss_mib()
    started = time.perf_counter()
    if args.how == "before":
        thumb = _old_thumbnail(data, THUMB_WIDTH)
    else:
        thumb = make_thumbnail(data, THUMB_WIDTH)
    return {
        "peak_mib": _peak_rss_mib(),
        "added_mib": _peak_rss_mib() - start,
        "seconds": time.perf_counter() - started,
        "bytes": len(thumb),
    }


# ---------------------------------------------------------------- part 3: the upload endpoints

DEEP = b"[" * 100_000
BOUNDARY = "waypoint-bench-boundary"


def _multipart(
    path: Path, fields: dict[str, str], files: dict[str, tuple[str, Path | bytes]]
) -> Path:
    """A multipart/form-data body written to ``path``, file contents copied in by chunks."""
    with open(path, "wb") as out:
        for name, value in fields.items():
            out.write(
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                f"{value}\r\n".encode()
            )
        for name, (filename, content) in files.items():
            out.write(
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            )
            if isinstance(content, bytes):
                out.write(content)
            else:
                with open(content, "rb") as src:
                    while chunk := src.read(MiB):
                        out.write(chunk)
            out.write(b"\r\n")
        out.write(f"--{BOUNDARY}--\r\n".encode())
    return path


def _file_of(path: Path, size: int, byte: bytes = b" ") -> Path:
    block = byte * MiB
    with open(path, "wb") as out:
        for _ in range(size // MiB):
            out.write(block)
    return path


def api_cases(work: Path, project: int, big: bool) -> list[tuple[str, str, str, str, Path]]:
    """(label, method, path, content type, body file) for each hostile request."""
    ground_truth = (
        json.dumps({"task_id": "T1", "steps": [{"step_index": 0, "actionForm": {"action": "tap"}}]})
        + "\n"
    ).encode()
    json_body = "application/json"
    form = f"multipart/form-data; boundary={BOUNDARY}"
    base = f"/api/v1/projects/{project}"
    graph = {"format": "waypoint.memory_graph", "format_version": 1, "params": {}}

    def written(name: str, data: bytes) -> Path:
        (work / name).write_bytes(data)
        return work / name

    bomb_size = (512 if big else 64) * MiB
    bomb = work / "benchmark-bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(
            "export/manifest.json",
            json.dumps({"format": "androtmem", "split": {"ratios": {"test": 1}}}),
        )
        # The split's own file: one task, then spaces (what is read, unlike an image).
        with archive.open("export/test.jsonl", "w", force_zip64=True) as out:
            out.write(ground_truth)
            for _ in range(bomb_size // MiB):
                out.write(b" " * MiB)
    upload_size = (800 if big else 80) * MiB
    upload = _file_of(work / "graph-upload.json", upload_size)
    line = (
        b'{"task_id": "'
        + b"y" * ((60 if big else 6) * MiB)
        + b'", "step_index": 0, "output": ""}\n'
    )
    dim = {**graph, "embedder": {"name": "structure", "dim": 10**12, "text_dim": 8}}
    dim["nodes"] = [{"index": 0, "size": 1, "members": [], "sum": "AAAA"}]
    dim["edges"] = []
    predictions = work / "predictions-deep.jsonl"
    predictions.write_bytes(DEEP + b"\n")
    return [
        (
            "graph import, JSON body nested 100,000 deep",
            "POST",
            f"{base}/graphs/import",
            json_body,
            written("deep.json", DEEP),
        ),
        (
            "graph build, params nested 100,000 deep",
            "POST",
            f"{base}/graphs/",
            json_body,
            written("deep-params.json", b'{"params": {"tau": ' + DEEP + b"}}"),
        ),
        (
            "graph import, a file nested 100,000 deep",
            "POST",
            f"{base}/graphs/import",
            form,
            _multipart(work / "m1", {}, {"file": ("g.json", DEEP)}),
        ),
        (
            "app graph import, a file nested 100,000 deep",
            "POST",
            f"{base}/app-graphs/import",
            form,
            _multipart(work / "m2", {}, {"file": ("g.json", DEEP)}),
        ),
        (
            "evaluator, predictions nested 100,000 deep",
            "POST",
            f"{base}/evaluations/",
            form,
            _multipart(
                work / "m3",
                {},
                {"predictions": ("p.jsonl", predictions), "benchmark": ("gt.jsonl", ground_truth)},
            ),
        ),
        (
            "evaluator, benchmark nested 100,000 deep",
            "POST",
            f"{base}/evaluations/",
            form,
            _multipart(
                work / "m4",
                {},
                {"predictions": ("p.jsonl", b"{}\n"), "benchmark": ("gt.jsonl", DEEP)},
            ),
        ),
        (
            "memory graph import, embedder.dim 10^12",
            "POST",
            f"{base}/graphs/import",
            json_body,
            written("dim.json", json.dumps(dim).encode()),
        ),
        (
            f"evaluator, benchmark zip of {human(bomb.stat().st_size)} unpacking to "
            f"{human(bomb_size)}",
            "POST",
            f"{base}/evaluations/",
            form,
            _multipart(
                work / "m5",
                {},
                {"predictions": ("p.jsonl", b"{}\n"), "benchmark": ("bench.zip", bomb)},
            ),
        ),
        (
            f"graph import, a {human(upload_size)} upload",
            "POST",
            f"{base}/graphs/import",
            form,
            _multipart(work / "m6", {}, {"file": ("g.json", upload)}),
        ),
        (
            "graph build, a JSON body of 11 MiB",
            "POST",
            f"{base}/graphs/",
            json_body,
            written("big.json", b'{"params": {}, "note": "' + b"x" * 11 * MiB + b'"}'),
        ),
        (
            f"evaluator, a task id of {human(len(line) - 50)} in predictions",
            "POST",
            f"{base}/evaluations/",
            form,
            _multipart(
                work / "m7",
                {},
                {"predictions": ("p.jsonl", line), "benchmark": ("gt.jsonl", ground_truth)},
            ),
        ),
    ]


PREPARE_API = """
import json, time
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from trajectories.services import do_create_project
user = get_user_model().objects.create_user(f"api-{time.time_ns()}")
project = do_create_project("hostile requests", user)
print(json.dumps({"project": project.pk, "token": Token.objects.create(user=user).key}))
"""


def prepare_api(env: dict[str, str], code: Path) -> dict:
    """Migrate and seed with the checkout that serves: its models may differ from this one's."""
    env = {**env, "PYTHONPATH": str(code)}
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "--verbosity", "0"], ["shell", "-c", PREPARE_API]):
        done = subprocess.run(manage + command, cwd=code, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"preparing the API requests failed:\n{done.stdout}{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM (Linux only)")


def _request(port: int, method: str, path: str, token: str, kind: str | None, body: Path | None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    if body is not None:
        headers |= {"Content-Type": kind, "Content-Length": str(body.stat().st_size)}
        with open(body, "rb") as handle:
            conn.request(method, path, body=handle, headers=headers)
            answer = conn.getresponse()
    else:
        conn.request(method, path, headers=headers)
        answer = conn.getresponse()
    data = answer.read()
    conn.close()
    return answer.status, answer.getheader("Content-Type", ""), data


def run_api_case(env: dict[str, str], code: Path, work: Path, token: str, case) -> dict:
    """One request to a server of its own: status, answer, seconds, peak RSS it added."""
    label, method, path, kind, body = case
    port = _free_port()
    log = work / "server.log"
    command = [
        sys.executable,
        "manage.py",
        "runserver",
        "--noreload",
        "--nothreading",
        f"127.0.0.1:{port}",
    ]
    env = {**env, "PYTHONPATH": str(code), "SECURE_SSL_REDIRECT": "0", "ALLOWED_HOSTS": "127.0.0.1"}
    with open(log, "wb") as out:
        server = subprocess.Popen(command, cwd=code, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        _request(port, "GET", "/api/v1/projects/", token, None, None)  # warm up
        before = _peak_kib(server.pid)
        started = time.perf_counter()
        try:
            status, content_type, data = _request(port, method, path, token, kind, body)
        except (OSError, http.client.HTTPException) as exc:  # the server gave up on the body
            status, content_type, data = 0, "", f"{type(exc).__name__}: {exc}".encode()
        seconds = time.perf_counter() - started
        added = (_peak_kib(server.pid) - before) / 1024
    finally:
        server.kill()
        server.wait()
    try:
        detail = (
            json.loads(data).get("detail") if content_type.startswith("application/json") else None
        )
    except (ValueError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else data[:80].decode(errors="replace")
    return {
        "input": label,
        "status": status,
        "json_detail": isinstance(detail, str),
        "bytes": len(data),
        "message": " ".join(text.split())[:110],
        "seconds": seconds,
        "added_mib": added,
    }


def run_api_part(work: Path, env: dict[str, str], code: Path, big: bool) -> None:
    prepared = prepare_api(env, code)
    cases = api_cases(work, prepared["project"], big)
    print(f"\nHostile requests to the API ({code}; one runserver process per request):")
    print("| request | status | JSON detail | answer bytes | seconds | peak RSS added | message |")
    print("|---|---|---|---|---|---|---|")
    clean = 0
    for case in cases:
        row = run_api_case(env, code, work, prepared["token"], case)
        # A task id nobody knows is scored (200) and named, cut short; the rest are refused.
        scored = "task id" in row["input"]
        answered = row["status"] == 200 if scored else 400 <= row["status"] < 500
        ok = answered and (scored or row["json_detail"]) and row["bytes"] < 1000
        clean += ok
        print(
            f"| {row['input']} | {row['status']} | {'yes' if row['json_detail'] else 'NO'} | "
            f"{row['bytes']:,} | {row['seconds']:.2f} | {row['added_mib']:.0f} MiB | "
            f"{row['message']} |",
            flush=True,
        )
    print(
        f"\n{clean} of {len(cases)} hostile requests answered cleanly "
        "(4xx with a JSON detail, or the scores, in < 1 KB)"
    )


# ---------------------------------------------------------------- driver


def run_phase(phase: str, env: dict[str, str], **options) -> object:
    command = [sys.executable, __file__, "--phase", phase]
    for key, value in options.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"bench phase {phase} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-only-not-secret"),
        DATABASE_URL=f"sqlite:///{work / 'bench.sqlite3'}",  # never a shared database
        WAYPOINT_VAR_DIR=str(work / "var"),
        MEDIA_ROOT=str(work / "blobs"),
        LOG_LEVEL="WARNING",
    )
    env.pop("AWS_STORAGE_BUCKET_NAME", None)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="bombs of 16 x 4 MiB")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--bomb-size", type=int, default=64 * MiB, help=argparse.SUPPRESS)
    parser.add_argument("--image", help=argparse.SUPPRESS)
    parser.add_argument("--how", help=argparse.SUPPRESS)
    parser.add_argument("--api-only", action="store_true", help="part 3 alone")
    parser.add_argument(
        "--code", type=Path, default=REPO, help="the checkout that serves part 3 (default: this)"
    )
    args = parser.parse_args()
    if args.phase:
        result = {"hostile": phase_hostile, "thumbnail": phase_thumbnail}[args.phase](args)
        print(json.dumps(result))
        return

    with tempfile.TemporaryDirectory(prefix="waypoint-bench-hostile-") as tmp:
        work = Path(tmp)
        env = bench_env(work)
        if args.api_only:
            run_api_part(work, env, args.code.resolve(), big=not args.quick)
            return
        bomb = 4 * MiB if args.quick else 64 * MiB
        print(f"Hostile imports (bombs of 16 x {bomb // MiB} MiB) ...", flush=True)
        rows = run_phase("hostile", env, work=work, bomb_size=bomb)
        print()
        print("| input | upload | refused cleanly | seconds | unpacked to disk | message |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            size = human(row["size"]) if row["size"] is not None else "folder"
            clean = "yes" if row["clean"] else f"NO ({row['outcome']})"
            if row["input"].startswith("control"):
                clean = "imported" if row["clean"] else f"NO ({row['outcome']})"
            print(
                f"| {row['input']} | {size} | {clean} | {row['seconds']:.2f} | "
                f"{human(row['unpacked'])} | {row['message']} |"
            )
        hostile = [r for r in rows if not r["input"].startswith("control")]
        print(
            f"\n{sum(r['clean'] for r in hostile)} of {len(hostile)} hostile inputs refused "
            f"cleanly; control {'imported' if rows[-1]['clean'] else 'FAILED'}"
        )

        print(f"\nThumbnail of a legal {SIDE}x{SIDE} screenshot (peak RSS added, fresh process):")
        print("| image | file | before: added (peak) | after: added (peak) | after, s |")
        print("|---|---|---|---|---|")
        for label, mode, fmt in (
            ("PNG RGBA", "RGBA", "PNG"),
            ("PNG RGB", "RGB", "PNG"),
            ("JPEG", "RGB", "JPEG"),
            ("WebP", "RGB", "WEBP"),
        ):
            image = work / f"shot.{fmt.lower()}"
            image.write_bytes(screenshot(SIDE, SIDE, mode, fmt))
            before = run_phase("thumbnail", env, image=image, how="before")
            after = run_phase("thumbnail", env, image=image, how="after")
            print(
                f"| {label} | {human(image.stat().st_size)} | {before['added_mib']:.0f} MiB "
                f"({before['peak_mib']:.0f} MiB) | {after['added_mib']:.0f} MiB "
                f"({after['peak_mib']:.0f} MiB) | {after['seconds']:.2f} |"
            )

        run_api_part(work, env, args.code.resolve(), big=not args.quick)


if __name__ == "__main__":
    main()
