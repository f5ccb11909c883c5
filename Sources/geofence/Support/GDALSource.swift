import GeofenceCore
import GeofenceSQL
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Any vector source GDAL reads (GeoPackage, Shapefile, FlatGeobuf,
/// GeoJSONSeq, KML, GML, …), streamed into the importer as GeoJSON by
/// `ogr2ogr -f GeoJSON /vsistdout/ FILE LAYER -t_srs EPSG:4326`, so a GDAL
/// source meets exactly the checks, errors and all-or-nothing transaction of
/// a GeoJSON file. The child writes into a pipe the importer's parsing thread
/// reads; at the end of the stream its exit status is checked before anything
/// is committed, so a failing ogr2ogr never imports part of a layer.
final class GDALSource {
    let layer: String
    private let process: Subprocess
    private var readEnd: Int32

    /// Whether `path` goes through GDAL: a layer was asked for, or it is not a
    /// GeoJSON FeatureCollection. `.geojson` and `.json` files are read by the
    /// engine itself (its errors name line and column); so is any other file
    /// that starts with `{`, unless its name says it is a GeoJSON text
    /// sequence (`.geojsonl`, `.geojsons`, `.geojsonseq`, `.ndjson`, `.jsonl`).
    static func isNeeded(path: String, layer: String?) -> Bool {
        if layer != nil { return true }
        var st = stat()
        guard stat(path, &st) == 0 else { return false }  // the engine's reader names the missing file
        if (st.st_mode & S_IFMT) == S_IFDIR { return true }  // a Shapefile folder, a FileGDB
        let lower = path.lowercased()
        // GeoJSON, and GeoJSON sequences: the engine's reader.
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") || FeatureCollectionReader.namesSequence(path) { return false }
        guard let f = fopen(path, "rb") else { return false }
        defer { fclose(f) }
        var head = [UInt8](repeating: 0, count: 4096)
        let n = head.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
        var i = 0
        if n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF { i = 3 }
        while i < n, [0x20, 0x09, 0x0A, 0x0D].contains(head[i]) { i += 1 }
        // Empty, or JSON: the engine's reader (and its error messages).
        return i < n && head[i] != UInt8(ascii: "{")
    }

    /// The layers of a source, as `ogrinfo -ro -q` lists them.
    static func layers(of given: String) throws -> [String] {
        let path = given.hasPrefix("-") ? "./" + given : given
        let info = try start(["ogrinfo", "-ro", "-q", path], stdoutFD: nil, path: path)
        guard info.wait() == 0 else { throw InputError("GDAL cannot read it: \(info.gdalMessage)", file: path) }
        // Lines are "1: name" or "1: name (Polygon)".
        return info.output.split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].allSatisfy(\.isNumber) else { return nil }
            var name = line[line.index(after: colon)...].trimmingCharacters()
            if name.hasSuffix(")"), let open = name.lastIndex(of: "("), open > name.startIndex,
               name[name.index(before: open)] == " " {
                name = String(name[..<name.index(before: open)])
            }
            return name
        }
    }

    /// Starts ogr2ogr on `path`'s `layer` (when nil, its only layer; a source
    /// of several layers needs `--layer`).
    init(path given: String, layer: String?) throws {
        // A name starting with "-" would be read as an option by GDAL's tools.
        let path = given.hasPrefix("-") ? "./" + given : given
        let chosen: String
        if let layer {
            chosen = layer
        } else {
            let all = try Self.layers(of: path)
            guard all.count == 1 else {
                if all.isEmpty { throw InputError("GDAL finds no layer in it", file: path) }
                throw InputError("it has \(all.count) layers (\(all.map { "'\($0)'" }.joined(separator: ", "))): choose one with --layer", file: path)
            }
            chosen = all[0]
        }
        self.layer = chosen
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw InputError("cannot create a pipe: \(String(cString: strerror(errno)))", file: path) }
        // The child gets only the write end; ours must not leak into it.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        readEnd = fds[0]
        do {
            // Coordinates as `ogr2ogr -f GeoJSON` writes them (15 decimals, 0.1 nm): the same
            // areas as the user's own ogr2ogr GeoJSON, and a source's rounding slips such as
            // Natural Earth's longitude 180.00000000000006 come out as the 180 they mean.
            process = try Self.start(["ogr2ogr", "-f", "GeoJSON", "/vsistdout/", path, chosen, "-t_srs", "EPSG:4326"],
                                     stdoutFD: fds[1], path: path)
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
    }

    deinit { finishReading() }

    /// The stream the importer reads, with the check of ogr2ogr's exit status at its end.
    func stream(path: String) -> ImportStream {
        ImportStream(path: "/dev/fd/\(readEnd)", layer: layer) { [process, layer] malformed in
            var status: Int32?
            if malformed {
                // ogr2ogr has stopped writing if it failed: give it a moment to end, then stop it.
                for _ in 0..<200 { status = process.poll(); if status != nil { break }; usleep(10_000) }
                guard let s = status, s != 0, s < 128 else { process.terminate(); return }
            } else {
                status = process.wait()
            }
            if status != 0 {
                let message = process.gdalMessage
                throw InputError("ogr2ogr could not read layer '\(layer)' (exit status \(status ?? -1))"
                                 + (message.isEmpty ? "" : ": \(message)"), file: path)
            }
        }
    }

    /// Closes the pipe and ends the child (it gets SIGPIPE, or SIGTERM, if it was still writing).
    func finishReading() {
        if readEnd >= 0 { close(readEnd); readEnd = -1 }
        process.terminate()
        process.wait()
    }

    private static func start(_ argv: [String], stdoutFD: Int32?, path: String) throws -> Subprocess {
        do {
            return try Subprocess(argv, stdoutFD: stdoutFD)
        } catch let e as Subprocess.SpawnError {
            let why = String(cString: strerror(e.code))
            throw InputError(e.code == ENOENT
                             ? "reading this format needs GDAL's \(e.program), which is not installed (Debian: apt-get install gdal-bin)"
                             : "cannot start GDAL's \(e.program): \(why)", file: path)
        }
    }
}
