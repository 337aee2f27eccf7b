import FarmCore
import FarmStore

/// Counters a coordinator keeps while it runs (also written to the store for `status`).
public struct CoordinatorCounters: Sendable, Equatable {
    public var dispatched = 0
    public var completed = 0
    public var failed = 0
    public var retried = 0
    public var superseded = 0
    public var workersLost = 0
    public var malformed: [String: Int] = [:]
    public var storeErrors = 0
    public var diskFull = false

    public var malformedTotal: Int { malformed.values.reduce(0, +) }

    public init() {}
}

/// The counters: kept by the loop, published for other threads, written to the store for reports.
extension Coordinator {
    /// Writes the counters to the store every 2 s (reports read them); `stopping` marks the last write, so
    /// `status` can tell a coordinator that stopped from one that is running.
    func writeCounters(force: Bool, stopping: Bool = false) {
        let now = time.monotonicMilliseconds
        publish()
        guard force || now - lastCountersWrite >= 2000 else { return }
        lastCountersWrite = now
        let fields: [(String, JSON)] = [
            ("dispatched", JSON(counters.dispatched)), ("completed", JSON(counters.completed)),
            ("failed", JSON(counters.failed)), ("retried", JSON(counters.retried)),
            ("superseded", JSON(counters.superseded)), ("workers_lost", JSON(counters.workersLost)),
            ("malformed", .object(counters.malformed.sorted { $0.key < $1.key }.map { ($0.key, JSON($0.value)) })),
            ("disk_full", JSON(counters.diskFull)), ("pending_writes", JSON(pending.count)),
            ("heartbeat_at", JSON(time.now)),
        ] + (stopping ? [("stopped_at", JSON(time.now))] : [])
        // Workers' last-seen times go with the counters, so reports can tell an idle worker from a silent one.
        let heard = workers.values.map { ($0.id, $0.lastSeenWall) }
        do {
            try store.write {
                try store.setSetting("counters", JSON.object(fields).rendered)
                try store.workersHeard(heard)
            }
            // An idle coordinator learns here that space returned; with writes held, only their commit tells. A
            // small write can fit in the write-ahead log's old space on a full disk, so the disk must agree.
            let stillFull = counters.diskFull && store.diskSpace?.isFull == true
            if pending.isEmpty && !stillFull { storeAccepts(written: (0, 0)) }
        } catch {
            storeFailed(error, assignments: [])
        }
    }

    func publish() {
        let copy = counters
        shared.withLock { $0 = copy }
    }
}
