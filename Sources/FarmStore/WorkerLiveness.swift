import FarmCore

/// When reports call a worker silent: the coordinator's own loss rule (`liveness` heartbeats missed), plus the
/// time the store's `last_seen` may lag behind the coordinator's memory (it writes it every 2 s).
///
/// The coordinator records its settings in the store when it starts (`Store.recordLiveness`), so `status` and
/// `requeue --stuck`, which run as separate processes, judge workers by the same window.
public struct WorkerLiveness: Sendable, Equatable {
    public var heartbeatMilliseconds: Int
    /// Heartbeats a worker may miss before the coordinator declares it lost.
    public var liveness: Int

    /// How far behind the store's `workers.last_seen` may be (the coordinator's counter-write period).
    public static let storeLagSeconds = 2.0

    public init(heartbeatMilliseconds: Int = 1000, liveness: Int = 3) {
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.liveness = liveness
    }

    /// A worker (or the coordinator) not heard from for longer than this is silent: 5 s with the defaults.
    public var silentAfterSeconds: Double {
        Double(heartbeatMilliseconds * liveness) / 1000 + Self.storeLagSeconds
    }
}

/// How a worker's connection ended, as the store keeps it (`workers.state`; a connected worker's is "alive").
public enum WorkerExit: String, Sendable, CaseIterable {
    /// It said BYE.
    case gone
    /// It went silent past the liveness window and was declared lost.
    case lost
}

/// A worker as reports see it.
public enum WorkerCondition: String, Sendable, CaseIterable {
    /// Heard from within the liveness window.
    case alive
    /// Still counted as connected in the store, but not heard from within the window (stopped, cut off, or the
    /// coordinator itself is not running).
    case silent
    /// The coordinator saw it leave or declared it lost.
    case gone
}

extension Store {
    /// The liveness settings of the coordinator that last ran on this store (the defaults if none has).
    public func liveness() throws -> WorkerLiveness {
        let heartbeat = try setting("heartbeat_ms").flatMap { Int($0) }
        let liveness = try setting("liveness").flatMap { Int($0) }
        return WorkerLiveness(heartbeatMilliseconds: max(1, heartbeat ?? 1000), liveness: max(1, liveness ?? 3))
    }

    /// Whether a coordinator is running on this store: it wrote its counters within the liveness window.
    public func coordinatorRunning(now: Double = Clock.now) throws -> Bool {
        let counters = try setting("counters").flatMap { try? JSON.parse($0) }
        return FarmReport.coordinatorRunning(counters: counters, now: now, liveness: try liveness())
    }

    /// Records the coordinator's liveness settings for reports (call inside a write transaction).
    public func recordLiveness(_ liveness: WorkerLiveness) throws {
        try setSetting("heartbeat_ms", String(liveness.heartbeatMilliseconds))
        try setSetting("liveness", String(liveness.liveness))
    }

    /// Moves the last-seen time of connected workers forward, so reports can tell an idle worker from a silent
    /// one (call inside a write transaction; the coordinator does every 2 s).
    public func workersHeard(_ seen: [(WorkerID, Double)]) throws {
        let statement = try connection.cached("UPDATE workers SET last_seen = max(last_seen, ?) WHERE id = ? AND state = 'alive'")
        for (worker, at) in seen {
            try statement.execute([.real(at), .text(worker.rawValue)])
        }
    }
}

extension WorkerRecord {
    /// Alive, silent or gone at `now`, judged by `liveness`.
    public func condition(at now: Double, liveness: WorkerLiveness) -> WorkerCondition {
        guard state == "alive" else { return .gone }
        return now - lastSeen <= liveness.silentAfterSeconds ? .alive : .silent
    }
}
