import FarmCore
import FarmRuntime

/// Pages by state.
public struct PageCounts: Sendable, Equatable {
    public var queued = 0
    public var leased = 0
    public var done = 0
    public var failed = 0
    /// Done pages queued or leased again by `ocrfarm reread`: counted in `done` (their current result stands until
    /// the new one lands), not in `queued` or `leased`.
    public var rereading = 0

    public init() {}

    public var total: Int { queued + leased + done + failed }
    /// Pages still to be read: queued (waiting or due), leased, and done pages being read again.
    public var remaining: Int { queued + leased + rereading }

    public subscript(state: PageState) -> Int {
        get {
            switch state {
            case .queued: queued
            case .leased: leased
            case .done: done
            case .failed: failed
            }
        }
        set {
            switch state {
            case .queued: queued = newValue
            case .leased: leased = newValue
            case .done: done = newValue
            case .failed: failed = newValue
            }
        }
    }

    public static func + (a: PageCounts, b: PageCounts) -> PageCounts {
        var sum = PageCounts()
        for state in PageState.allCases { sum[state] = a[state] + b[state] }
        sum.rereading = a.rereading + b.rereading
        return sum
    }
}

/// A snapshot of the farm for `status`, its JSON and the Prometheus exposition: one read transaction.
///
/// Costs stay bounded at a million pages: counts come from indexes, throughput from the `results_finished`
/// index, per-stage times and per-worker rates from the most recent `sampleSize` results only.
public struct FarmReport: Sendable {
    /// One document's progress.
    public struct DocumentProgress: Sendable, Equatable {
        public let id: DocumentID
        public let name: String
        public let pages: PageCounts
    }

    /// Pages finished per second over fixed windows.
    public struct Throughput: Sendable, Equatable {
        /// Pages done in the last 60 s, 600 s and 3,600 s.
        public var lastMinuteCount = 0
        public var last10MinutesCount = 0
        public var lastHourCount = 0
        /// Seconds from the first to the last page done within each window: the time the farm ran in it.
        public var lastMinuteSpan = 0.0
        public var last10MinutesSpan = 0.0
        public var lastHourSpan = 0.0
        /// Pages per second from the first submit to the last page done.
        public var overall = 0.0

        /// Pages per second while the farm ran in the window: an 85 s batch that ended 5 minutes ago shows its own
        /// pace over 10 minutes, not its pages spread over the whole window. One page alone, or pages done at one
        /// instant, count over the whole window.
        public static func rate(_ count: Int, span: Double, window: Double) -> Double {
            guard count >= 2, span >= 1 else { return Double(count) / window }
            return Double(count - 1) / span
        }

        public var lastMinute: Double { Self.rate(lastMinuteCount, span: lastMinuteSpan, window: 60) }
        public var last10Minutes: Double { Self.rate(last10MinutesCount, span: last10MinutesSpan, window: 600) }
        public var lastHour: Double { Self.rate(lastHourCount, span: lastHourSpan, window: 3600) }
    }

    /// One failed page, to show what a failure code means in practice.
    public struct FailureExample: Sendable, Equatable {
        public let page: PageID
        public let document: String
        public let number: Int
        public let source: RawPath
        public let stage: String?
        public let message: String
    }

    /// Failed pages with one code.
    public struct FailureGroup: Sendable, Equatable {
        public let code: String
        public let count: Int
        public let example: FailureExample?
    }

    /// A worker with its condition and recent pace; the record's fields read through (`worker.pagesDone`).
    @dynamicMemberLookup
    public struct WorkerReport: Sendable, Equatable {
        public let record: WorkerRecord
        public let condition: WorkerCondition
        /// Its share of the farm's pace over the last minute (`Throughput.lastMinute`): the share of that minute's
        /// results it finished (from the recent sample when more than `sampleSize` pages finished in it). The
        /// workers' rates add up to the farm's, which the ETA is reckoned from.
        public let pagesPerSecond: Double
        /// Pages leased to it now: those its slots are reading and those it holds ahead (its prefetch, decision
        /// 0014), so a farm's `leased` may pass the sum of its slots.
        public let leased: Int

        public subscript<Value>(dynamicMember field: KeyPath<WorkerRecord, Value>) -> Value { record[keyPath: field] }
    }

    /// Time of one pipeline stage over the sample, in milliseconds.
    public struct StageTime: Sendable, Equatable {
        public let stage: String
        public let p50: Double
        public let p95: Double
        public let sum: Double
        public let count: Int
    }

    public let store: String
    public let generatedAt: Double
    /// The documents the report is limited to (`status --document`), or nil for the whole farm.
    public let scope: [DocumentRecord]?
    /// Documents in the store (in scope).
    public let documents: Int
    public let pages: PageCounts
    /// Documents with pages not done (queued or leased first, then those with only failures), at most
    /// `documentLimit`; with a scope, its documents.
    public let documentProgress: [DocumentProgress]
    /// More documents had pages not done than were listed.
    public let documentProgressTruncated: Bool
    /// The farm's throughput (all documents: workers serve every document at once).
    public let throughput: Throughput
    /// Seconds until the remaining pages (queued and leased, in scope) are done at the last minute's pace; 0
    /// when nothing remains, nil when no page was done in the last minute.
    public let etaSeconds: Double?
    public let failures: [FailureGroup]
    public let workers: [WorkerReport]
    /// How many recent results the stage times and worker rates come from.
    public let sampleSize: Int
    public let stages: [StageTime]
    public let liveness: WorkerLiveness
    /// The coordinator's counters as it last wrote them (JSON), if one ever ran.
    public let coordinatorCounters: JSON?
    /// The space left on the store's file system (nil if it cannot be asked). The coordinator cannot write its
    /// counters to a full disk, so this is how a report tells that the store is full while it runs.
    public var storeDisk: DiskSpace? = nil

    /// When the coordinator last wrote its counters (every 2 s while it runs).
    public var coordinatorLastReport: Double? { coordinatorCounters?["heartbeat_at"]?.doubleValue }

    /// The coordinator wrote its counters within the liveness window, and not as its last words.
    public var coordinatorRunning: Bool {
        Self.coordinatorRunning(counters: coordinatorCounters, now: generatedAt, liveness: liveness)
    }

    static func coordinatorRunning(counters: JSON?, now: Double, liveness: WorkerLiveness) -> Bool {
        guard let last = counters?["heartbeat_at"]?.doubleValue, counters?["stopped_at"] == nil else { return false }
        return now - last <= liveness.silentAfterSeconds
    }
}

/// Percentiles by the nearest-rank method over sorted values.
enum Percentile {
    static func of(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
