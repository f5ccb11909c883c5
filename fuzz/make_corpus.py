#!/usr/bin/python3
"""Writes the seed corpus of the fuzzing harnesses into fuzz/corpus/.

    /usr/bin/python3 fuzz/make_corpus.py

Needs Debian's python3 (it loads mod_spatialite to make real SpatiaLite
BLOBs) and tzdata. The output is committed; rerun only to change the seeds.
Every seed starts with the selector byte its harness reads first (the chunk
size for FuzzGeoJSON, the parser for FuzzTime, the format and chunk size for
FuzzFixes); FuzzBlob takes raw BLOBs.
"""
import hashlib
import json
import pathlib
import sqlite3
import struct

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def write(target, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def geojson_seeds():
    sample = (HERE.parent / "samples" / "areas.geojson").read_bytes()
    for chunk in (0, 1, 3, 7, 16):
        write("geojson", bytes([chunk]) + sample)

    def fc(*features, **members):
        return json.dumps({"type": "FeatureCollection", **members, "features": list(features)}).encode()

    def feature(geometry, **props):
        return {"type": "Feature", "properties": props, "geometry": geometry}

    square = [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0.2, 0.2], [0.4, 0.2], [0.4, 0.4], [0.2, 0.2]]]
    seeds = [
        fc(feature({"type": "Point", "coordinates": [139.7, 35.7]}, area_id="c", radius_m=250.5)),
        fc(feature({"type": "Polygon", "coordinates": square}, area_id="p", in_confirm_count=2,
                   valid_from="2026-01-01T00:00:00+09:00", valid_until="2026-12-31T23:59:59Z",
                   confidence=0.68, timezone="Asia/Tokyo", tags=["a", {"b": None}], n=1e300)),
        fc(feature({"type": "MultiPolygon", "coordinates": [
            [[[179, -17], [180, -17], [180, -16], [179, -16], [179, -17]]],
            [[[-180, -17], [-179, -17], [-179, -16], [-180, -16], [-180, -17]]]]}, area_id="fiji"),
           updated_at="2026-11-01T09:00:00+09:00"),
        fc(feature({"type": "Polygon", "coordinates": [[[-180, 80], [180, 80], [180, 90], [-180, 90], [-180, 80]]]},
                   area_id="cap", name="caf\u00e9 \\u00e9 \"q\"")),
        b'{"type":"FeatureCollection","features":[{"type":"Feature","id":7,"properties":{"area_id":"x"},'
        b'"geometry":{"type":"Polygon","coordinates":[[[1e-7,-0.0],[1E2,0],[1,1.5e1],[1e-7,-0.0]]]}}]}',
    ]
    for s in seeds:
        write("geojson", bytes([0]) + s)
        write("geojson", bytes([5]) + s)


def blob_seeds():
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension("mod_spatialite")
    wkts = [
        "POLYGON((139.76 35.70, 139.78 35.70, 139.78 35.72, 139.76 35.72, 139.76 35.70))",
        "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 4, 2 2))",
        "MULTIPOLYGON(((179 -17, 180 -17, 180 -16, 179 -16, 179 -17)), ((-180 -17, -179 -17, -179 -16, -180 -16, -180 -17)))",
        "POLYGON((-180 80, 180 80, 180 90, -180 90, -180 80))",
    ]
    for wkt in wkts:
        for expr in ("GeomFromText(?, 4326)", "CompressGeometry(GeomFromText(?, 4326))",
                     "CastToXYZ(GeomFromText(?, 4326))", "CastToXYM(GeomFromText(?, 4326))",
                     "CastToXYZM(GeomFromText(?, 4326))", "CompressGeometry(CastToXYZM(GeomFromText(?, 4326)))",
                     "CastToMultiPolygon(GeomFromText(?, 0))"):
            (blob,) = db.execute(f"SELECT {expr}", (wkt,)).fetchone()
            write("blob", bytes(blob))
    # gf_circle's BLOB: "GFC1", then lat, lon, radius as little-endian doubles.
    for lat, lon, r in ((35.7, 139.7, 300.0), (89.99, 0.0, 5000.0), (-16.5, 179.999, 1e6)):
        write("blob", b"GFC1" + struct.pack("<3d", lat, lon, r))


def time_seeds():
    for text in ("2026-11-22T09:00:00+09:00", "2026-11-22 00:00:00.123456Z", "2026-11-22T09:00:00+0900",
                 "1795219200", "1795219200.25", "2026-02-29T00:00:00Z", "  2026-11-22t09:00:00-03:30 "):
        write("time", b"\x00" + text.encode())
    for zone in ("Asia/Tokyo", "America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Sao_Paulo"):
        write("time", b"\x01" + pathlib.Path("/usr/share/zoneinfo", zone).read_bytes())


def fixes_seeds():
    # First byte: bit 0 the format (0 CSV, 1 NDJSON), the rest the chunk size - 1.
    sample = (HERE.parent / "samples" / "fixes.csv").read_bytes()
    for chunk in (0, 2, 6, 126):
        write("fixes", bytes([chunk << 1]) + sample)
    odd = ('subject_id,ts,lat,lon,accuracy_m\r\n"a ""b""",1.7e9,+35.5,.5,5.\r\n'
           '"multi\nline",2026-11-22T09:00:00+09:00,-90,180,0\n'
           ' u1 ,1700000000.1234567,35,139,1e3\n"ab"c,1,2,3,4\n,,,,\n\n').encode()
    write("fixes", bytes([3 << 1]) + odd)
    ndjson = ('{"subject_id":"u1","ts":"2026-11-22T09:00:00Z","lat":35.6,"lon":139.7,"accuracy_m":10}\n'
              '{"subject_id":7,"ts":1.7E9,"lat":-0.0,"lon":1e-7,"accuracy_m":0}\n'
              '{"subject_id":"\\u00e9","ts":"x","lat":null}\n[1]\n').encode()
    for chunk in (0, 5):
        write("fixes", bytes([chunk << 1 | 1]) + ndjson)


if __name__ == "__main__":
    geojson_seeds()
    blob_seeds()
    time_seeds()
    fixes_seeds()
    for d in sorted(CORPUS.iterdir()):
        print(d.name, len(list(d.iterdir())), "seeds")
