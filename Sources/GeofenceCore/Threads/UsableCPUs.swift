#if canImport(Glibc)
import Glibc
#endif

/// How many CPUs this process may actually use: the CPUs in its affinity
/// mask (`taskset`, a container's cpuset), and no more than its cgroup's CPU
/// quota allows (`cpu.max` in cgroup v2 along the process's cgroup path, or
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us` in v1), rounded up. A machine's
/// core count overstates both: a container given 2 CPUs on a 64-core host
/// would otherwise start 64 threads that take turns.
public enum UsableCPUs {
    public static var count: Int {
        var n = affinityCount ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        if let quota = cgroupQuota { n = min(n, quota) }
        return max(1, n)
    }

    /// The CPUs in the affinity mask, as the kernel lists them in
    /// /proc/self/status (`Cpus_allowed_list: 0-3,8`).
    public static var affinityCount: Int? {
        guard let status = readSmallFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            var n = 0
            for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
                let ends = range.split(separator: "-").map { Int($0.trimmingSpaces) }
                if ends.count == 1, ends[0] != nil { n += 1 }
                else if ends.count == 2, let a = ends[0], let b = ends[1], b >= a { n += min(b - a, 1 << 20) + 1 }
                else { return nil }
            }
            return n > 0 ? n : nil
        }
        return nil
    }

    /// The tightest CPU quota on the way from the process's cgroup to the root, in whole CPUs.
    public static var cgroupQuota: Int? {
        var best: Int?
        func take(_ quota: Int64, _ period: Int64) {
            guard quota > 0, period > 0 else { return }
            let cpus = Int((quota + period - 1) / period)
            best = min(best ?? cpus, max(1, cpus))
        }
        if let cgroups = readSmallFile("/proc/self/cgroup") {
            for line in cgroups.split(separator: "\n") where line.hasPrefix("0::") {
                // cgroup v2: every level's cpu.max ("max 100000" or "200000 100000").
                var path = String(line.dropFirst(3))
                while true {
                    let dir = path == "/" || path.isEmpty ? "/sys/fs/cgroup" : "/sys/fs/cgroup" + path
                    if let text = readSmallFile(dir + "/cpu.max") {
                        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
                        if parts.count >= 2, let q = Int64(parts[0]), let p = Int64(parts[1]) { take(q, p) }
                    }
                    guard let slash = path.lastIndex(of: "/"), path != "/" else { break }
                    path = String(path[..<slash])
                    if path.isEmpty { path = "/" }
                }
            }
        }
        // cgroup v1, at its usual mount point.
        if let q = readSmallFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").flatMap({ Int64($0.split(separator: "\n").first ?? "") }),
           let p = readSmallFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us").flatMap({ Int64($0.split(separator: "\n").first ?? "") }) {
            take(q, p)
        }
        return best
    }

    /// A small text file (under 64 KiB), or nil if it cannot be read.
    public static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
