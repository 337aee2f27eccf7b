import FarmCore
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// One coordinator per store: an exclusive `flock` on the store file itself and on `STORE-lock`, held for the
/// coordinator's (or `run`'s) life.
///
/// Two coordinators on one store each took the other's live leases back (work done twice); `run` on a store a
/// coordinator served did the same. The kernel drops a flock when its process dies, even by SIGKILL, so a stale lock
/// never blocks: the next coordinator takes it and logs whose it was. The lock on the store file is what makes a
/// store one: it goes with the file (device and inode), so a second coordinator reaching it by a symbolic link, a
/// hard link or another path is refused too (issue 37; `STORE-lock` alone is named by the path as typed). The lock
/// file beside the path the store resolves to says who holds it (host, pid, since) for the message a second
/// coordinator gets; one that came by a hard link finds the holder's pid in /proc/locks. flock is not reliable on network file systems, one reason the store
/// must be on a local disk (docs/operations.md).
///
/// The descriptor of the store file is unlocked but never closed (one per lock taken, for the process's life):
/// closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's own included.
public final class CoordinatorLock {
    /// Who holds a lock, as written in its file.
    public struct Holder: Sendable, Equatable, CustomStringConvertible {
        public let host: String
        public let pid: Int
        public let since: Double

        public init(host: String, pid: Int, since: Double) {
            self.host = host
            self.pid = pid
            self.since = since
        }

        public var description: String { "pid \(pid) on \(host) since \(Clock.iso8601(since))" }

        var line: String { "\(host) \(pid) \(Format.fixed(since, 3))\n" }

        init?(line: String) {
            let parts = line.split(whereSeparator: \.isWhitespace)
            guard parts.count == 3, let pid = Int(parts[1]), let since = Double(parts[2]) else {
                return nil
            }
            self.init(host: String(parts[0]), pid: pid, since: since)
        }
    }

    /// The lock is held by another live process.
    public struct Held: Error, Sendable, Equatable, CustomStringConvertible {
        public let store: String
        public let holder: Holder?

        public init(store: String, holder: Holder?) {
            self.store = store
            self.holder = holder
        }

        public var description: String {
            "store \(store) is already served by a coordinator (\(holder?.description ?? "holder unknown")); "
                + "one coordinator per store: stop it first, or use another --store"
        }
    }

    /// The lock file.
    public let path: String
    /// Whose lock this one replaced: a coordinator that is gone without releasing it (killed, or its host failed).
    public let previous: Holder?
    private let fd: Int32
    /// The store file's descriptor holding its flock; -1 when the file could not be opened (no folder, a log
    /// without a store: `Store` then refuses it with the reason).
    private let storeFile: Int32

    public static func path(for store: String) -> String { store + "-lock" }

    /// Takes the store's lock for `holder`, or throws `Held` naming the live holder. A store file not there yet is
    /// made empty first (SQLite makes a store of an empty file), unless a write-ahead log is there without it
    /// (`Store` refuses that) or its folder is missing (`Store` says so).
    public init(store: String, holder: Holder) throws {
        path = Self.path(for: store)
        storeFile = try Self.lockStoreFile(store)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let error = errno
            Self.unlock(storeFile)
            throw StoreError("store \(store): cannot open its lock file \(path): \(String(cString: strerror(error)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            let holder = Self.read(fd)
            close(fd)
            Self.unlock(storeFile)
            if error == EWOULDBLOCK { throw Held(store: store, holder: holder) }
            throw StoreError("store \(store): cannot lock \(path): \(String(cString: strerror(error)))")
        }
        // Ours now. A holder still written in the file released it without clearing it: it died.
        previous = Self.read(fd)
        let line = Array(holder.line.utf8)
        _ = ftruncate(fd, 0)
        _ = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    /// Releases the lock and empties its file, so the next coordinator does not report a stale holder.
    deinit {
        _ = ftruncate(fd, 0)
        flock(fd, LOCK_UN)
        close(fd)
        Self.unlock(storeFile)
    }

    /// An exclusive flock on the store file (made empty when it is not there), or `Held` naming who has it.
    private static func lockStoreFile(_ store: String) throws -> Int32 {
        var fd = open(store, O_RDONLY | O_CLOEXEC)
        if fd < 0 && errno == ENOENT && !Store.walWithoutStore(at: store) {
            fd = open(store, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { return -1 }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            // Never closed: see the type's note.
            guard error == EWOULDBLOCK else {
                throw StoreError("store \(store): cannot lock the store file: \(String(cString: strerror(error)))")
            }
            var info = stat()
            let named = FileSystem.canonicalPath(store).flatMap { Self.read(path: Self.path(for: $0)) }
            throw Held(store: store, holder: named ?? (fstat(fd, &info) == 0 ? Self.holder(of: info) : nil))
        }
        return fd
    }

    private static func unlock(_ storeFile: Int32) {
        if storeFile >= 0 { flock(storeFile, LOCK_UN) }
    }

    /// The holder written in the lock file at `path`, if any.
    private static func read(path: String) -> Holder? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return read(fd)
    }

    /// Who holds the flock on the file `info` describes, from /proc/locks (its lock file is beside another name:
    /// a hard link): the pid, with this host and the process's start.
    private static func holder(of info: stat) -> Holder? {
        guard let locks = try? FileSystem.readText("/proc/locks") else { return nil }
        let major = ((info.st_dev >> 8) & 0xfff) | ((info.st_dev >> 32) & ~0xfff)
        let minor = (info.st_dev & 0xff) | ((info.st_dev >> 12) & ~0xff)
        let device = String(major, radix: 16) + ":" + String(minor, radix: 16) + ":" + String(info.st_ino)
        // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF"; the device in hex, at least two digits each.
        for line in locks.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE", let pid = Int(fields[4]) else { continue }
            let parts = fields[5].split(separator: ":")
            guard parts.count == 3, let lockMajor = UInt64(parts[0], radix: 16), let lockMinor = UInt64(parts[1], radix: 16)
            else { continue }
            guard "\(String(lockMajor, radix: 16)):\(String(lockMinor, radix: 16)):\(parts[2])" == device else { continue }
            return Holder(host: hostName(), pid: pid, since: processStart(pid) ?? 0)
        }
        return nil
    }

    private static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "this host" }
        return name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// When process `pid` started (Unix time), from /proc.
    private static func processStart(_ pid: Int) -> Double? {
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")"),
              let boot = (try? FileSystem.readText("/proc/stat"))?.split(separator: "\n")
                .first(where: { $0.hasPrefix("btime ") }).flatMap({ Double($0.dropFirst(6)) })
        else { return nil }
        // Field 22 (starttime, in clock ticks after boot); fields after the command start at 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func read(_ fd: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Holder(line: String(decoding: buffer[..<count], as: UTF8.self))
    }
}
