"""A throw-away PostGIS server for the benchmarks: initdb into a temporary
folder, start on 127.0.0.1 with a free port, load areas with GDAL's ogr2ogr,
stop and delete on exit. Needs Debian's postgresql-15-postgis-3 (installed by
benchmarks/install-peers.sh) and psycopg (pip, into .venv-test).

    with PostGIS() as pg:
        pg.load_areas("fences.db")          # gf_areas(area_id, geom) -> table fences
        pg.query("SELECT count(*) FROM fences")
"""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

import psycopg

BIN = "/usr/lib/postgresql/15/bin"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostGIS:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gf-pg-")
        self.port = free_port()
        self.user = "postgres"
        self.conn = None

    def _as_postgres(self, *args):
        # initdb and the server refuse to run as root.
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True)

    def __enter__(self):
        if os.geteuid() == 0:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data = os.path.join(self.dir, "data")
        self._as_postgres(f"{BIN}/initdb", "-D", data, "-A", "trust", "-U", self.user, "--no-sync")
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c shared_buffers=1GB -c work_mem=256MB -c max_parallel_workers_per_gather=2 -c jit=off")
        self._as_postgres(f"{BIN}/pg_ctl", "-D", data, "-o", opts, "-l", os.path.join(self.dir, "log"), "-w", "start")
        self.conn = psycopg.connect(host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True)
        self.conn.execute("CREATE EXTENSION postgis")
        return self

    def __exit__(self, *exc):
        if self.conn:
            self.conn.close()
        try:
            self._as_postgres(f"{BIN}/pg_ctl", "-D", os.path.join(self.dir, "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def dsn(self):
        return f"PG:host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"

    def load_areas(self, sqlite_db, table="fences"):
        """gf_areas of a catalog (circles as their enclosing polygons) into `table`,
        with id = gf_areas.id, a GiST index on geom and one on geography(geom)."""
        subprocess.run(["ogr2ogr", "-f", "PostgreSQL", self.dsn, str(sqlite_db), "-nln", table, "-overwrite",
                        "-lco", "GEOMETRY_NAME=geom", "-lco", "FID=id", "-lco", "SPATIAL_INDEX=NONE",
                        "-sql", "SELECT id, area_id, kind, center_lat, center_lon, radius_m, geom FROM gf_areas"],
                       check=True, capture_output=True)
        self.conn.execute(f"ALTER TABLE {table} ADD COLUMN geog geography")
        self.conn.execute(f"UPDATE {table} SET geog = geom::geography")
        self.conn.execute(f"CREATE INDEX ON {table} USING gist (geom)")
        self.conn.execute(f"CREATE INDEX ON {table} USING gist (geog)")
        self.conn.execute(f"VACUUM ANALYZE {table}")

    def query(self, sql, params=None):
        return self.conn.execute(sql, params).fetchall()
