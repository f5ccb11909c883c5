#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Transparent huge pages for the batch commands (judge, locate, import).
///
/// Why: a batch writes hundreds of megabytes of memory it has just asked
/// for (prepared shapes, the plan), and faulting it in 4 KiB at a time is a
/// visible share of its CPU, on a VM above all. With glibc's
/// `glibc.malloc.hugetlb=1` tunable, malloc advises the kernel to back its
/// heaps with 2 MiB pages (MADV_HUGEPAGE), one fault instead of 512
/// (benchmarks/history.md has the measurements).
///
/// glibc reads its tunables once, at start-up, so the command starts itself
/// again with the tunable set (the same process id, arguments and
/// descriptors). It does so only when the kernel gives huge pages on advice
/// (`madvise` mode: `always` needs no advice, `never` ignores it), the
/// caller has not chosen a value, and /proc/self/exe is this program: under
/// valgrind or an emulator it is the tool's own binary, which must not be
/// started in our place. If the exec fails, the command simply runs as it is.
enum HugePages {
    static let tunable = "glibc.malloc.hugetlb"

    static func adviseForThisProcess() {
        guard kernelMode() == "madvise", runsItself() else { return }
        let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
        if let current, current.contains(tunable) { return }
        setenv("GLIBC_TUNABLES", (current.map { $0 + ":" } ?? "") + tunable + "=1", 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Still here: the exec failed. Leave the environment as it was.
        if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
    }

    /// Whether /proc/self/exe, as the kernel will open it, is the file its
    /// link names. Under valgrind the two differ (the link is made to name
    /// the program, the file is the tool), and so they do if the program's
    /// file was replaced since it started: the exec would start another one.
    static func runsItself() -> Bool {
        var exe = stat(), named = stat()
        var link = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &link, link.count - 1)
        guard n > 0, stat("/proc/self/exe", &exe) == 0, stat(link, &named) == 0 else { return false }
        return exe.st_dev == named.st_dev && exe.st_ino == named.st_ino
    }

    /// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled
    /// ("always [madvise] never"), nil if it cannot be read.
    static func kernelMode() -> String? {
        guard let f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let open = line.firstIndex(of: "["), let close = line[open...].firstIndex(of: "]") else { return nil }
        return String(line[line.index(after: open)..<close])
    }
}
