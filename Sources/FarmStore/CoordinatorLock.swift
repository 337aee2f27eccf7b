import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// One coordinator per store: an exclusive `flock` on `STORE-lock`, held for the coordinator's (or `run`'s) life.
///
/// Two coordinators on one store each took the other's live leases back (work done twice); `run` on a store a
/// coordinator served did the same. The kernel drops a flock when its process dies, even by SIGKILL, so a stale lock
/// never blocks: the next coordinator takes it and logs whose it was. The file says who holds it (host, pid,
/// since) for the message a second coordinator gets. flock is not reliable on network file systems, one reason the
/// store must be on a local disk (docs/operations.md).
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

    public static func path(for store: String) -> String { store + "-lock" }

    /// Takes the store's lock for `holder`, or throws `Held` naming the live holder.
    public init(store: String, holder: Holder) throws {
        path = Self.path(for: store)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw StoreError("store \(store): cannot open its lock file \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            let holder = Self.read(fd)
            close(fd)
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
    }

    private static func read(_ fd: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Holder(line: String(decoding: buffer[..<count], as: UTF8.self))
    }
}
