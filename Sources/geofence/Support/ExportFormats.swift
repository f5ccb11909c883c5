import ArgumentParser
import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What `geofence export --format` writes.
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    /// One FeatureCollection (with the set's `updated_at` member).
    case geojson
    /// GeoJSON text sequence: one Feature per line (RFC 8142 without the RS
    /// byte, as GDAL's GeoJSONSeq and NDJSON tools read it); it has no place
    /// for `updated_at`.
    case geojsonseq
    /// A GeoPackage with one layer, `areas`, written by GDAL's ogr2ogr from the GeoJSON.
    case gpkg
}

/// Writes a GeoPackage at `out` from `geojson` (a FeatureCollection): ogr2ogr
/// writes it in a temporary folder beside `out`, which is renamed over `out`
/// only when complete, so a failure leaves the old file or none. When
/// ogr2ogr fails on a file system left with less free space than the
/// GeoJSON took (and at least 1 MiB), the error says the disk is full. Times stay
/// strings (`DATE_AS_STRING`): a GeoPackage DateTime keeps only milliseconds.
func writeGeoPackage(_ geojson: String, to out: String, database: Connection) throws {
    // OutputFile's checks (never the database or its -wal, -shm, -journal, under any name).
    try OutputFile(out, database: database).discard()
    var st = stat()
    if stat(out, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
        throw InputError("a GeoPackage is written as a regular file; this is not one", file: out)
    }
    // Every path handed to ogr2ogr starts with "/" or "./", so none can be read as an option.
    let base = out.hasPrefix("/") ? out : "./" + out
    var template = Array((base + ".partial-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw InputError("cannot create a temporary folder beside it: \(String(cString: strerror(errno)))", file: out)
    }
    let folder = String(cString: made)
    let source = folder + "/areas.geojson", target = folder + "/areas.gpkg"
    defer {
        unlink(source); unlink(target); unlink(target + "-journal"); unlink(target + "-wal"); unlink(target + "-shm")
        rmdir(folder)
    }
    guard let f = fopen(source, "wb") else { throw InputError("cannot write: \(String(cString: strerror(errno)))", file: source) }
    let bytes = Array(geojson.utf8)
    let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
    guard fclose(f) == 0, written == bytes.count else { throw InputError("cannot write: \(String(cString: strerror(errno)))", file: out) }
    let child: Subprocess
    do {
        child = try Subprocess(["ogr2ogr", "-f", "GPKG", target, source, "-nln", "areas", "-oo", "DATE_AS_STRING=YES"])
    } catch let e as Subprocess.SpawnError {
        throw InputError(e.code == ENOENT ? "writing a GeoPackage needs GDAL's ogr2ogr, which is not installed (Debian: apt-get install gdal-bin)"
                                          : "cannot start ogr2ogr: \(String(cString: strerror(e.code)))", file: out)
    }
    let status = child.wait()
    guard status == 0 else {
        // Asked before the partial files are removed: a full disk is the
        // cause to name, not the cascade of errors SQLite's full disk makes in ogr2ogr.
        if let free = freeBytes(folder), free < max(UInt64(bytes.count), 1 << 20) {
            var st = stat()
            let kept = stat(out, &st) == 0 ? "; the file already there is unchanged" : ""
            throw InputError("no space left on device: ogr2ogr could not write the GeoPackage, and the file system it goes to "
                             + "has only \(free) bytes free\(kept)", file: out)
        }
        let message = child.gdalMessage
        throw InputError("ogr2ogr could not write the GeoPackage (\(child.ending))" + (message.isEmpty ? "" : ": " + message), file: out)
    }
    guard rename(target, out) == 0 else { throw InputError("cannot rename the finished file into place: \(String(cString: strerror(errno)))", file: out) }
}

/// The bytes free to this user on the file system holding `path`, nil when it cannot be asked.
private func freeBytes(_ path: String) -> UInt64? {
    var fs = statvfs()
    guard statvfs(path, &fs) == 0 else { return nil }
    return UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
}
