import GeofenceCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A child process (GDAL's `ogr2ogr`, writing a GeoPackage for export),
/// started without a shell so no file name is ever interpreted by one. Its
/// standard output and error go to anonymous temporary files, read after it
/// ends: a pipe nobody reads while the child writes many warnings would block it.
final class Subprocess {
    let program: String
    private(set) var pid: pid_t = 0
    private let errors: UnsafeMutablePointer<FILE>
    private var status: Int32?

    /// Starts `argv[0]` (looked up on PATH) with standard input from /dev/null.
    init(_ argv: [String]) throws {
        program = argv[0]
        guard let err = tmpfile() else { throw InputError("cannot create a temporary file: \(String(cString: strerror(errno)))") }
        errors = err
        guard let out = tmpfile() else { fclose(err); throw InputError("cannot create a temporary file: \(String(cString: strerror(errno)))") }
        captured = out
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fileno(out), 1)
        posix_spawn_file_actions_adddup2(&actions, fileno(errors), 2)
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, program, &actions, nil, &cargs, environ)
        guard rc == 0 else { throw SpawnError(program: program, code: rc) }
        pid = child
    }

    private let captured: UnsafeMutablePointer<FILE>

    deinit {
        if status == nil && pid > 0 { kill(pid, SIGTERM); _ = wait() }
        fclose(errors)
        fclose(captured)
    }

    struct SpawnError: Error { let program: String; let code: Int32 }

    /// Waits for the child; its exit status, or 128 + the signal that ended it.
    @discardableResult
    func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let s = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status = s
        signal = (raw & 0x7F) == 0 ? nil : raw & 0x7F
        return s
    }

    /// The signal that ended the child, if one did (after `wait`).
    private(set) var signal: Int32?

    /// How the child ended, in words: "exit status 1", or "killed by signal 9 (SIGKILL)".
    var ending: String {
        let s = wait()
        guard let signal else { return "exit status \(s)" }
        let name = Self.signalNames[signal].map { " (\($0))" } ?? ""
        return "killed by signal \(signal)\(name)"
    }

    /// The signals a child is commonly ended by: the kernel's out-of-memory
    /// killer and `kill -9`, a crash, a time or file-size limit, a stop.
    private static let signalNames: [Int32: String] = [
        SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS",
        SIGABRT: "SIGABRT", SIGPIPE: "SIGPIPE", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGILL: "SIGILL", SIGFPE: "SIGFPE"]

    /// What the child wrote to standard error (read after it ended).
    var errorText: String { Self.contents(errors) }
    /// What the child wrote to standard output.
    var output: String { Self.contents(captured) }

    /// GDAL's messages without the list of every driver it tried.
    /// (ogrinfo says FAILURE on standard output.)
    var gdalMessage: String {
        (errorText + "\n" + output).split(separator: "\n").map { $0.trimmingCharacters() }
            .filter { !$0.isEmpty && !$0.hasPrefix("-> ") && !$0.hasPrefix("Warning") && $0 != "FAILURE:" }
            .joined(separator: " ")
    }

    private static func contents(_ f: UnsafeMutablePointer<FILE>) -> String {
        fflush(f)
        rewind(f)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        var s = self
        while let c = s.first, c == " " || c == "\t" || c == "\r" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s = s.dropLast() }
        return String(s)
    }
}
