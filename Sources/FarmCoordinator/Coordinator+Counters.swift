import FarmCore
import FarmStore
#if canImport(Glibc)
import Glibc
#endif

/// Counters a coordinator keeps while it runs (also written to the store for `status`).
public struct CoordinatorCounters: Sendable, Equatable {
    public var dispatched = 0
    /// Page bytes sent in JOBs (the page's file or its part; headers and framing not counted).
    public var jobBytes = 0
    public var completed = 0
    public var failed = 0
    public var retried = 0
    public var superseded = 0
    public var workersLost = 0
    public var malformed: [String: Int] = [:]
    public var storeErrors = 0
    public var diskFull = false
    /// The time from reading a slot's CREDIT to sending its JOB, measured inside the coordinator (the commit of
    /// the lease included, the network and the worker's own loop not).
    public var dispatchWait = LatencyHistogram()

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
            ("dispatched", JSON(counters.dispatched)), ("job_bytes", JSON(counters.jobBytes)),
            ("completed", JSON(counters.completed)),
            ("failed", JSON(counters.failed)), ("retried", JSON(counters.retried)),
            ("superseded", JSON(counters.superseded)), ("workers_lost", JSON(counters.workersLost)),
            ("malformed", .object(counters.malformed.sorted { $0.key < $1.key }.map { ($0.key, JSON($0.value)) })),
            ("disk_full", JSON(counters.diskFull)), ("pending_writes", JSON(pending.count)),
            ("dispatch_wait_us", counters.dispatchWait.json),
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

/// Durations counted in buckets four to a doubling (each about 19% wider than the last), from 16 µs up to about
/// 17 s: percentiles to within a bucket, at a fixed cost per sample and a fixed size. Cumulative, so a reader takes
/// the difference of two readings for an interval.
public struct LatencyHistogram: Sendable, Equatable {
    static let bucketCount = 81
    public private(set) var counts = [Int](repeating: 0, count: bucketCount)

    public init() {}

    /// The upper bound of bucket `index`, in microseconds (bucket 0 holds everything up to 16 µs).
    public static func upperBoundMicroseconds(_ index: Int) -> Int {
        Int((16 * pow(2, Double(index) / 4)).rounded(.up))
    }

    public mutating func record(nanoseconds: UInt64) {
        let microseconds = Double(nanoseconds) / 1000
        let index = microseconds <= 16 ? 0 : Int((4 * log2(microseconds / 16)).rounded(.up))
        counts[min(index, Self.bucketCount - 1)] += 1
    }

    public var total: Int { counts.reduce(0, +) }

    /// The bucket upper bound (µs) at or below which `fraction` of the samples lie; nil with no samples.
    public func percentileMicroseconds(_ fraction: Double) -> Int? {
        let total = total
        guard total > 0 else { return nil }
        var seen = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if Double(seen) >= fraction * Double(total) { return Self.upperBoundMicroseconds(index) }
        }
        return Self.upperBoundMicroseconds(Self.bucketCount - 1)
    }

    /// The non-empty buckets, as {"upper bound in µs": count}.
    var json: JSON {
        .object(counts.enumerated().filter { $0.element > 0 }.map { (String(Self.upperBoundMicroseconds($0.offset)), JSON($0.element)) })
    }
}
