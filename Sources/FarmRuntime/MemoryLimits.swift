import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The memory limits the system puts on this process, and what it uses under each: the address-space limit
/// (`RLIMIT_AS`: `ulimit -v`, `prlimit --as`) against the address space in use (VmSize), and the memory limit of its
/// cgroup (v2 `memory.max`, the lowest along the path to the hierarchy's root; v1 `memory.limit_in_bytes`) against
/// the cgroup's use (`memory.current`, `memory.usage_in_bytes`). A value is nil where there is no limit.
public struct MemoryLimits: Sendable, Equatable {
    public var addressSpace: Int?
    public var addressSpaceUsed: Int
    public var cgroup: Int?
    public var cgroupUsed: Int
    /// The cgroup whose limit is `cgroup` (a file's folder), for messages.
    public var cgroupPath: String?

    public init(addressSpace: Int? = nil, addressSpaceUsed: Int = 0, cgroup: Int? = nil, cgroupUsed: Int = 0,
                cgroupPath: String? = nil) {
        self.addressSpace = addressSpace
        self.addressSpaceUsed = addressSpaceUsed
        self.cgroup = cgroup
        self.cgroupUsed = cgroupUsed
        self.cgroupPath = cgroupPath
    }

    /// The limits of this process now.
    public static func current() -> MemoryLimits {
        var limits = MemoryLimits()
        var rl = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &rl) == 0, rl.rlim_cur != rlim_t.max { limits.addressSpace = Int(clamping: rl.rlim_cur) }
        if let statm = try? FileSystem.readText("/proc/self/statm"), let pages = statm.split(separator: " ").first.flatMap({ Int($0) }) {
            limits.addressSpaceUsed = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        let cgroups = (try? FileSystem.readText("/proc/self/cgroup")) ?? ""
        let mounts = (try? FileSystem.readText("/proc/self/mountinfo")) ?? ""
        if let found = cgroupLimit(cgroups: cgroups, mounts: mounts, read: { try? FileSystem.readText($0) }) {
            (limits.cgroup, limits.cgroupUsed, limits.cgroupPath) = (found.limit, found.used, found.path)
        }
        return limits
    }

    /// Bytes one of `shares` users of this process's memory may still take: the least room under any limit (the
    /// address space is this process's alone; a cgroup's room is shared by `cgroupShares`); nil when unlimited.
    public func room(cgroupShares: Int = 1, addressSpaceShares: Int = 1) -> Int? {
        var rooms: [Int] = []
        if let addressSpace { rooms.append(max(0, addressSpace - addressSpaceUsed) / max(1, addressSpaceShares)) }
        if let cgroup { rooms.append(max(0, cgroup - cgroupUsed) / max(1, cgroupShares)) }
        return rooms.min()
    }

    /// "RLIMIT_AS 300 MB (214 MB in use); cgroup /sys/fs/cgroup/x 768 MB (120 MB in use)", or "none".
    public var description: String {
        var parts: [String] = []
        if let addressSpace {
            parts.append("RLIMIT_AS \(Self.megabytes(addressSpace)) MB (\(Self.megabytes(addressSpaceUsed)) MB in use)")
        }
        if let cgroup {
            parts.append("cgroup \(cgroupPath ?? "") \(Self.megabytes(cgroup)) MB (\(Self.megabytes(cgroupUsed)) MB in use)")
        }
        return parts.isEmpty ? "none" : parts.joined(separator: "; ")
    }

    /// A limit this large is none: cgroup v1 writes "no limit" as a page-rounded 2^63 - 1.
    static let unlimited = 1 << 60

    static func megabytes(_ bytes: Int) -> Int { (bytes + 999_999) / 1_000_000 }

    /// The memory limit and use of the cgroup a process is in, from its `/proc/PID/cgroup` and `/proc/PID/mountinfo`
    /// texts; `read` reads a control file. cgroup v2 first (the lowest `memory.max` from the process's cgroup up to
    /// the mount's root), else v1's memory controller. nil when no limit is set.
    public static func cgroupLimit(cgroups: String, mounts: String, read: (String) -> String?)
        -> (limit: Int, used: Int, path: String)?
    {
        let lines = cgroups.split(separator: "\n")
        let mountLines = mounts.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: false) }
        // mountinfo: id parent major:minor root mount-point options [optional...] - type source super-options
        func mount(type: String, option: String?) -> (root: String, point: String)? {
            for fields in mountLines {
                guard fields.count > 4, let dash = fields.firstIndex(of: "-"), fields.count > dash + 1,
                      fields[dash + 1] == type else { continue }
                if let option, fields.count <= dash + 3 || !fields[dash + 3].split(separator: ",").contains(Substring(option)) {
                    continue
                }
                return (String(fields[3]), String(fields[4]))
            }
            return nil
        }
        func folder(_ mounted: (root: String, point: String), _ path: String) -> String? {
            // The cgroup path is relative to the hierarchy; the mount shows it from `root` down.
            let root = mounted.root == "/" ? "" : mounted.root
            guard root.isEmpty || path == root || path.hasPrefix(root + "/") else { return nil }
            let below = String(path.dropFirst(root.count))
            return mounted.point + (below == "/" ? "" : below)
        }
        func number(_ text: String?) -> Int? {
            guard let text = text?.split(separator: "\n").first.map(String.init), !text.isEmpty, text != "max" else { return nil }
            return Int(text)
        }
        if let line = lines.first(where: { $0.hasPrefix("0::") }), let mounted = mount(type: "cgroup2", option: nil),
           var directory = folder(mounted, String(line.dropFirst(3)))
        {
            var best: (limit: Int, used: Int, path: String)?
            while directory.hasPrefix(mounted.point) {
                if let limit = number(read(directory + "/memory.max")), limit < best?.limit ?? Self.unlimited {
                    best = (limit, number(read(directory + "/memory.current")) ?? 0, directory)
                }
                guard directory != mounted.point, let slash = directory.lastIndex(of: "/") else { break }
                directory = String(directory[..<slash])
            }
            if let best { return best }
        }
        for line in lines {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].split(separator: ",").contains("memory"),
                  let mounted = mount(type: "cgroup", option: "memory"), let directory = folder(mounted, String(fields[2]))
            else { continue }
            guard let limit = number(read(directory + "/memory.limit_in_bytes")) else { return nil }
            return limit < Self.unlimited ? (limit, number(read(directory + "/memory.usage_in_bytes")) ?? 0, directory) : nil
        }
        return nil
    }
}

