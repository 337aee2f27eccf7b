#if canImport(Glibc)
import Glibc
#endif

/// The store's readers for a server: read-only `Store`s kept in a pool, as GRDB's `DatabasePool` keeps its reader
/// connections. `read` lends one to its caller for one snapshot (a read transaction) and takes it back after, so a
/// connection serves one thread at a time, and a coordinator's writes never wait for them (WAL readers do not
/// block the writer).
///
/// Owns the idle readers (closed when the pool goes, or when more than `keptReaders` are given back at once).
/// Thread-safety: `read` may be called from any number of threads at once; the idle list is guarded by a mutex,
/// and each `Store` it lends is used by one caller at a time.
public final class StoreReaders: @unchecked Sendable {
    public let path: String
    /// How long a reader waits for a lock (a writer's checkpoint) before the request fails.
    let busyTimeoutMilliseconds: Int32
    /// Readers kept for reuse; more callers at once open more and close them after.
    let keptReaders: Int
    private var idle: [Store] = []
    private var lock = pthread_mutex_t()

    public init(path: String, keptReaders: Int = 8, busyTimeoutMilliseconds: Int32 = 2000) {
        self.path = path
        self.keptReaders = max(0, keptReaders)
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        pthread_mutex_init(&lock, nil)
    }

    deinit { pthread_mutex_destroy(&lock) }

    /// Runs `body` with a read-only store in one read transaction (one consistent snapshot of the store).
    public func read<T>(_ body: (Store) throws -> T) throws -> T {
        pthread_mutex_lock(&lock)
        let pooled = idle.popLast()
        pthread_mutex_unlock(&lock)
        let store = try pooled ?? Store(path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer {
            pthread_mutex_lock(&lock)
            if idle.count < keptReaders { idle.append(store) }
            pthread_mutex_unlock(&lock)
        }
        return try store.read { try body(store) }
    }

    /// Readers open and idle now.
    public var idleCount: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return idle.count
    }
}
