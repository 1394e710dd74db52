#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (fuzz/seeds/<target>/) from the
committed samples, deterministically. Re-run after the samples change:
    python3 fuzz/seeds.py
The bundle and pipeline targets read a first byte that picks the file name
(see fuzz/fuzz_targets/*.rs); the seeds carry it."""
import gzip, io, os, tarfile, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "seeds")


def trim(text, limit):
    """The first lines of a scrape, up to about `limit` bytes."""
    out, n = [], 0
    for line in text.splitlines(keepends=True):
        if n + len(line) > limit:
            break
        out.append(line)
        n += len(line)
    return "".join(out)


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def small_bundle(sample, scrapes=3, limit=4000):
    """(path, bytes) members: the manifest and the first scrapes, trimmed."""
    with zipfile.ZipFile(os.path.join(ROOT, "samples", sample)) as z:
        names = z.namelist()
        members = [(n, z.read(n)) for n in names if n.endswith("manifest.json")]
        for prefix in ("vllm-0/", "dcgm-0/"):
            picked = [n for n in names if prefix in n][:scrapes]
            members += [(n, trim(z.read(n).decode(), limit).encode()) for n in picked]
    return members


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in members:
            info = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
    return buf.getvalue()


def tar_gz_bytes(members):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        with tarfile.open(fileobj=g, mode="w") as t:
            for n, b in members:
                info = tarfile.TarInfo(n)
                info.size = len(b)
                t.addfile(info, io.BytesIO(b))
    return buf.getvalue()


HOSTILE = (
    '# HELP vllm:num_requests_running <script>alert("help")</script>\n'
    "# TYPE vllm:num_requests_running gauge\n"
    'vllm:num_requests_running{model_name="<vllm-lens-fuzz onload=alert(1)>",engine="0"} 3.0\n'
    'vllm:num_requests_waiting{model_name="</script><script>alert(2)</script>",engine="0"} NaN\n'
    'vllm:generation_tokens_total{model_name="\\"><img src=x>",engine="0"} +Inf\n'
)

bundles = {
    "ramp": small_bundle("a10g-qwen3b-ramp.zip"),
    "v0": small_bundle("v0-legacy.zip"),
    "errors": small_bundle("errors-aborts.zip"),
}
for key, members in bundles.items():
    z = zip_bytes(members)
    write("bundle", f"{key}.zip", b"\x00" + z)
    write("bundle", f"{key}.tar.gz", b"\x01" + tar_gz_bytes(members))
    write("pipeline", f"{key}.zip", b"\x00" + z)
    for n, b in members:
        if n.endswith(".prom"):
            write("parse", f"{key}-{os.path.basename(os.path.dirname(n))}.prom", b)
            write("pipeline", f"{key}-{os.path.basename(os.path.dirname(n))}.prom", b"\x01" + b)
            write("bundle", f"{key}-scrape.prom.gz", b"\x03" + gzip.compress(b, mtime=0))
            write("bundle", f"{key}-scrape.prom", b"\x05" + b)
            break
    manifest = next(b for n, b in members if n.endswith("manifest.json"))
    write("bundle", f"{key}-manifest.json", b"\x04" + manifest)
for f in sorted(os.listdir(os.path.join(ROOT, "tests", "data", "scrapes"))):
    with open(os.path.join(ROOT, "tests", "data", "scrapes", f), "rb") as fh:
        write("parse", f, trim(fh.read().decode(), 6000).encode())
write("parse", "hostile.prom", HOSTILE.encode())
write("pipeline", "hostile.prom", b"\x01" + HOSTILE.encode())
write("parse", "openmetrics.prom", b'# TYPE foo counter\nfoo_total 17.0 # {trace_id="abc"} 1.0 1520879607.789\nfoo_created 1520430000.123\nx 5 1767225600.5\n# EOF\n')
