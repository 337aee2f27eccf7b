import FarmCore
import SQLite

extension Store {
    /// Records a worker's HELLO (a returning worker keeps its first-seen time and counts).
    public func workerJoined(_ id: WorkerID, host: String, pid: Int, slots: Int, engine: String, languages: [String],
                             version: String, now: Double = Clock.now) throws
    {
        try connection.cached("""
            INSERT INTO workers (id, host, pid, slots, engine, languages, version, first_seen, last_seen, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'alive')
            ON CONFLICT(id) DO UPDATE SET host = excluded.host, pid = excluded.pid, slots = excluded.slots,
                engine = excluded.engine, languages = excluded.languages, version = excluded.version,
                last_seen = excluded.last_seen, state = 'alive'
            """).execute([.text(id.rawValue), .text(host), .integer(Int64(pid)), .integer(Int64(slots)), .text(engine),
                          .text(languages.joined(separator: "+")), .text(version), .real(now), .real(now)])
    }

    /// Adds to a worker's counters and moves its last-seen time.
    public func workerProgress(_ id: WorkerID, lastSeen: Double, done: Int, failed: Int) throws {
        try connection.cached("""
            UPDATE workers SET last_seen = max(last_seen, ?), pages_done = pages_done + ?, pages_failed = pages_failed + ?
            WHERE id = ?
            """).execute([.real(lastSeen), .integer(Int64(done)), .integer(Int64(failed)), .text(id.rawValue)])
    }

    public func workerLeft(_ id: WorkerID, state: WorkerExit, now: Double = Clock.now) throws {
        try connection.cached("UPDATE workers SET state = ?, last_seen = max(last_seen, ?) WHERE id = ?")
            .execute([.text(state.rawValue), .real(now), .text(id.rawValue)])
    }

    /// The CURVE key each worker id is bound to (`bindWorkerKey`).
    public func workerKeys() throws -> [WorkerID: String] {
        var keys: [WorkerID: String] = [:]
        for (id, key) in try connection.cached("SELECT worker_id, key FROM worker_keys").rows([], { ($0.text(0), $0.text(1)) }) {
            keys[WorkerID(id)] = key
        }
        return keys
    }

    /// Binds a worker id to the CURVE public key (Z85) it first said HELLO with; a binding made before stays.
    public func bindWorkerKey(_ id: WorkerID, key: String, now: Double = Clock.now) throws {
        try connection.cached("INSERT OR IGNORE INTO worker_keys (worker_id, key, bound_at) VALUES (?, ?, ?)")
            .execute([.text(id.rawValue), .text(key), .real(now)])
    }

    /// Marks every worker not seen since `before` as gone (at coordinator start, all of them).
    public func markWorkersGone(before: Double) throws {
        try connection.cached("UPDATE workers SET state = 'gone' WHERE state != 'gone' AND last_seen < ?").execute([.real(before)])
    }
}
