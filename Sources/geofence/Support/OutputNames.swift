import ArgumentParser
import Glibc
import GeofenceCore

/// Refuses an empty `--out` before a command does anything (it would fail
/// only when its output is put in place, after the work).
func requireOutputName(_ out: String?) throws {
    if out == "" { throw ValidationError("--out needs a file name, or - for standard output") }
}

/// Why no file could be made beside an output, in the user's terms: the
/// output's folder is missing, is not a folder, sits behind a loop of
/// symbolic links, or may not be written. `errno` is mkstemp's.
func outputFolderError(target: String, path: String) -> InputError {
    let code = errno
    let slash = target.lastIndex(of: "/")
    let folder = slash.map { String(target[..<$0]) } ?? "."
    let shown = folder.isEmpty ? "/" : folder
    let why: String
    var st = stat()
    switch code {
    case ENOENT where stat(folder, &st) != 0: why = "its folder \(Echo.quoted(shown)) does not exist"
    case ENOTDIR: why = "\(Echo.quoted(shown)) is not a folder"
    case ELOOP: why = "its folder \(Echo.quoted(shown)) is behind a loop of symbolic links"
    case EACCES, EPERM, EROFS, ENOENT: why = "cannot create a file in its folder \(Echo.quoted(shown)): \(String(cString: strerror(code)))"
    default: why = "cannot create a temporary file beside it: \(String(cString: strerror(code)))"
    }
    return InputError(why, file: path)
}
