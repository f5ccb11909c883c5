"""Writes the wheel of scripts/wheel.sh: python3 scripts/make_wheel.py VERSION DIST [OUTDIR]
(DIST holds the release binaries; the wheel goes to OUTDIR, default DIST).

A wheel is a zip with the package and NAME.dist-info/{METADATA,WHEEL,RECORD,
entry_points.txt} (PEP 427; RECORD lists each file's sha256 and size).
"""
import base64
import hashlib
import platform
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(version: str, dist: str, outdir: str = "") -> None:
    dist_dir = ROOT / dist
    tag = f"py3-none-linux_{platform.machine()}"
    name = f"geofence-{version}-{tag}.whl"
    info = f"geofence-{version}.dist-info"
    files = {}  # archive name -> (bytes, unix mode)
    package = ROOT / "python" / "geofence"
    for path in sorted(package.rglob("*.py")):
        files[f"geofence/{path.relative_to(package)}"] = (path.read_bytes(), 0o644)
    files["geofence/libgeofence.so"] = ((dist_dir / "libgeofence.so").read_bytes(), 0o755)
    files["geofence/bin/geofence"] = ((dist_dir / "geofence").read_bytes(), 0o755)
    # pip writes a `geofence` launcher on PATH that execs the binary above.
    files[f"{info}/entry_points.txt"] = (b"[console_scripts]\ngeofence = geofence.__main__:main\n", 0o644)
    files[f"{info}/METADATA"] = (metadata(version).encode(), 0o644)
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: geofence make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(), 0o644)
    files[f"{info}/licenses/LICENSE"] = ((ROOT / "LICENSE").read_bytes(), 0o644)
    record = [f"{n},sha256={digest(b)},{len(b)}" for n, (b, _) in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = (("\n".join(record) + "\n").encode(), 0o644)

    out = (ROOT / outdir if outdir else dist_dir) / name
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, (b, mode) in files.items():
            zi = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, b)
    tmp.replace(out)
    print(out)


def digest(b: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()


def metadata(version: str) -> str:
    return (
        "Metadata-Version: 2.4\n"
        "Name: geofence\n"
        f"Version: {version}\n"
        "Summary: A geofencing engine inside SQLite: accuracy-aware containment, stay state and notifications in SQL\n"
        "License-Expression: MIT\n"
        "License-File: LICENSE\n"
        "Requires-Python: >=3.9\n"
        "Provides-Extra: pandas\n"
        "Requires-Dist: pandas; extra == \"pandas\"\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Topic :: Database\n"
        "Classifier: Topic :: Scientific/Engineering :: GIS\n"
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
