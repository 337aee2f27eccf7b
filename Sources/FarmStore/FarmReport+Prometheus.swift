#if canImport(Glibc)
import Glibc
#endif
import FarmCore
import SQLite

extension FarmReport {
    /// The report with stage durations as cumulative histograms (`histograms`, over every result seen since it
    /// was made) instead of the summary over the recent results: what a long-running server (`serve`,
    /// `coordinator --metrics-listen`) exposes, so `rate()` works on `_sum`, `_count` and the buckets.
    public func prometheus(histograms: StageHistograms) -> String {
        var out = PrometheusWriter()
        render(into: &out, histograms: histograms)
        return out.text
    }

    /// The report in the Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
    /// collector and `coordinator --metrics-listen`.
    ///
    /// Per-document gauges cover the listed (unfinished) documents only, and workers that are gone appear for an
    /// hour after they were last seen, so the number of series stays bounded on a large farm.
    public var prometheus: String {
        var out = PrometheusWriter()
        render(into: &out, histograms: nil)
        return out.text
    }

    private func render(into out: inout PrometheusWriter, histograms: StageHistograms?) {
        out.family("ocrfarm_pages", .gauge, "Pages in the store by state.")
        for state in PageState.allCases { out.sample("ocrfarm_pages", ["state": state.rawValue], Double(pages[state])) }
        out.family("ocrfarm_pages_rereading", .gauge, "Done pages being read again by ocrfarm reread (counted as done).")
        out.sample("ocrfarm_pages_rereading", [:], Double(pages.rereading))
        out.family("ocrfarm_documents", .gauge, "Documents in the store.")
        out.sample("ocrfarm_documents", [:], Double(documents))

        out.family("ocrfarm_document_pages", .gauge,
                   "Pages of each unfinished document by state (at most the listed documents).")
        for document in documentProgress {
            for state in PageState.allCases {
                out.sample("ocrfarm_document_pages", ["document": document.name, "document_id": String(document.id.rawValue),
                                                      "state": state.rawValue], Double(document.pages[state]))
            }
        }

        out.family("ocrfarm_throughput_pages_per_second", .gauge, "Pages done per second over a window.")
        for (window, rate) in [("1m", throughput.lastMinute), ("10m", throughput.last10Minutes),
                               ("1h", throughput.lastHour), ("overall", throughput.overall)] {
            out.sample("ocrfarm_throughput_pages_per_second", ["window": window], rate)
        }
        if let etaSeconds {
            out.family("ocrfarm_eta_seconds", .gauge, "Seconds until the queued and leased pages are done at the last minute's pace.")
            out.sample("ocrfarm_eta_seconds", [:], etaSeconds)
        }

        out.family("ocrfarm_failed_pages", .gauge, "Failed pages by failure code.")
        for group in failures { out.sample("ocrfarm_failed_pages", ["code": group.code], Double(group.count)) }

        let shown = workers.filter { $0.condition != .gone || generatedAt - $0.record.lastSeen <= 3600 }
        func labels(_ worker: WorkerReport) -> [String: String] { ["worker": worker.record.id.rawValue, "host": worker.record.host] }
        out.family("ocrfarm_worker_slots", .gauge, "Page slots of each worker.")
        for worker in shown { out.sample("ocrfarm_worker_slots", labels(worker), Double(worker.record.slots)) }
        out.family("ocrfarm_worker_pages_done_total", .counter, "Pages each worker finished.")
        for worker in shown { out.sample("ocrfarm_worker_pages_done_total", labels(worker), Double(worker.record.pagesDone)) }
        out.family("ocrfarm_worker_pages_failed_total", .counter, "Pages that failed for good on each worker.")
        for worker in shown { out.sample("ocrfarm_worker_pages_failed_total", labels(worker), Double(worker.record.pagesFailed)) }
        out.family("ocrfarm_worker_pages_per_second", .gauge, "Pages each worker finished per second over the last minute.")
        for worker in shown { out.sample("ocrfarm_worker_pages_per_second", labels(worker), worker.pagesPerSecond) }
        out.family("ocrfarm_worker_last_seen_timestamp_seconds", .gauge, "When the coordinator last heard from each worker.")
        for worker in shown { out.sample("ocrfarm_worker_last_seen_timestamp_seconds", labels(worker), worker.record.lastSeen) }
        out.family("ocrfarm_worker_condition", .gauge, "1 for each worker's condition (alive, silent, gone), 0 for the others.")
        for worker in shown {
            for condition in WorkerCondition.allCases {
                out.sample("ocrfarm_worker_condition", labels(worker).merging(["condition": condition.rawValue]) { a, _ in a },
                           worker.condition == condition ? 1 : 0)
            }
        }

        if let histograms {
            histograms.render(into: &out)
        } else {
            out.family("ocrfarm_stage_duration_seconds", .summary,
                       "Time of each pipeline stage over the most recent \(sampleSize) results (not cumulative).")
            for stage in stages {
                out.sample("ocrfarm_stage_duration_seconds", ["stage": stage.stage, "quantile": "0.5"], stage.p50 / 1000)
                out.sample("ocrfarm_stage_duration_seconds", ["stage": stage.stage, "quantile": "0.95"], stage.p95 / 1000)
                out.sample("ocrfarm_stage_duration_seconds_sum", ["stage": stage.stage], stage.sum / 1000)
                out.sample("ocrfarm_stage_duration_seconds_count", ["stage": stage.stage], Double(stage.count))
            }
        }

        if let storeDisk {
            out.family("ocrfarm_store_disk_available_bytes", .gauge, "Bytes left on the store's file system.")
            out.sample("ocrfarm_store_disk_available_bytes", [:], Double(storeDisk.available))
        }
        out.family("ocrfarm_coordinator_up", .gauge, "1 when the coordinator wrote its counters within the liveness window.")
        out.sample("ocrfarm_coordinator_up", [:], coordinatorRunning ? 1 : 0)
        if let counters = coordinatorCounters {
            if let last = coordinatorLastReport {
                out.family("ocrfarm_coordinator_last_report_timestamp_seconds", .gauge, "When the coordinator last wrote its counters.")
                out.sample("ocrfarm_coordinator_last_report_timestamp_seconds", [:], last)
            }
            for (key, help) in [("dispatched", "Jobs sent to workers"), ("completed", "Results recorded"),
                                ("failed", "Pages failed for good"), ("retried", "Failed attempts queued again"),
                                ("superseded", "Results and failures of superseded attempts, ignored"),
                                ("workers_lost", "Workers declared lost")] {
                guard let value = counters[key]?.doubleValue else { continue }
                let name = "ocrfarm_coordinator_\(key)_total"
                out.family(name, .counter, "\(help) since the coordinator started.")
                out.sample(name, [:], value)
            }
            if let malformed = counters["malformed"]?.objectValue {
                out.family("ocrfarm_coordinator_malformed_messages_total", .counter,
                           "Malformed messages dropped since the coordinator started, by kind.")
                for (kind, value) in malformed {
                    out.sample("ocrfarm_coordinator_malformed_messages_total", ["kind": kind], value.doubleValue ?? 0)
                }
            }
        }
    }
}

/// Stage durations of every result, as Prometheus histograms that only grow: the results are read in the order
/// they were recorded (finished_at, then page id) from a high-water mark, so each scrape reads only what is new
/// and a result is counted once. A result that goes away (its document deleted) stays counted, as a counter must.
/// The counts live in this object: a new server starts from zero, which Prometheus reads as a counter reset.
public final class StageHistograms: @unchecked Sendable {
    /// Upper bounds in seconds: OCR stages run from milliseconds (decode) to a minute (a hard page).
    public static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
    /// Results read per update at most, so a first scrape of a big store answers within its timeout; the rest
    /// are read by the following scrapes.
    public let rowsPerUpdate: Int

    // Thread-safety: everything below is read and written holding `mutex` (scrapes run on several pool threads).
    private var mutex = pthread_mutex_t()
    private var order: [String] = []
    private var buckets: [String: [Int]] = [:]
    private var sums: [String: Double] = [:]
    private var counts: [String: Int] = [:]
    private var mark: (finishedAt: Double, page: Int64) = (-1e300, Int64.min)

    public init(rowsPerUpdate: Int = 50_000) {
        self.rowsPerUpdate = max(1, rowsPerUpdate)
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Adds the results recorded since the last update (up to `rowsPerUpdate` of them).
    public func update(from store: Store) throws {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let statement = try store.connection.cached("""
            SELECT finished_at, page_id, timings FROM results
            WHERE finished_at > ?1 OR (finished_at = ?1 AND page_id > ?2) ORDER BY finished_at, page_id LIMIT ?3
            """)
        var left = rowsPerUpdate
        while left > 0 {
            let batch = min(left, 10_000)
            let rows = try statement.rows([.real(mark.finishedAt), .integer(mark.page), .integer(Int64(batch))]) {
                ($0.double(0), $0.int64(1), $0.text(2))
            }
            for (finishedAt, page, timings) in rows {
                mark = (finishedAt, page)
                guard let fields = (try? JSON.parse(timings))?.objectValue else { continue }
                for (stage, value) in fields {
                    guard let milliseconds = value.doubleValue, milliseconds.isFinite, milliseconds >= 0 else { continue }
                    add(stage, seconds: milliseconds / 1000)
                }
            }
            left -= rows.count
            if rows.count < batch { break }
        }
    }

    private func add(_ stage: String, seconds: Double) {
        if buckets[stage] == nil {
            order.append(stage)
            buckets[stage] = Array(repeating: 0, count: Self.bounds.count)
        }
        // Buckets are kept per bound (not cumulative) and summed when rendered.
        if let index = Self.bounds.firstIndex(where: { seconds <= $0 }) { buckets[stage]![index] += 1 }
        sums[stage, default: 0] += seconds
        counts[stage, default: 0] += 1
    }

    /// The results counted so far, of `stage`.
    public func count(_ stage: String) -> Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return counts[stage] ?? 0
    }

    func render(into out: inout PrometheusWriter) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        out.family("ocrfarm_stage_duration_seconds", .histogram,
                   "Time of each pipeline stage, over every result recorded since this server started reading.")
        for stage in order {
            var cumulative = 0
            for (index, bound) in Self.bounds.enumerated() {
                cumulative += buckets[stage]![index]
                out.sample("ocrfarm_stage_duration_seconds_bucket", ["stage": stage, "le": PrometheusWriter.format(bound)],
                           Double(cumulative))
            }
            out.sample("ocrfarm_stage_duration_seconds_bucket", ["stage": stage, "le": "+Inf"], Double(counts[stage] ?? 0))
            out.sample("ocrfarm_stage_duration_seconds_sum", ["stage": stage], sums[stage] ?? 0)
            out.sample("ocrfarm_stage_duration_seconds_count", ["stage": stage], Double(counts[stage] ?? 0))
        }
    }
}

/// Writes the Prometheus text format: a HELP and TYPE line per family, then its samples, label values escaped.
struct PrometheusWriter {
    enum Kind: String { case gauge, counter, summary, histogram }

    private(set) var text = ""

    mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample; labels in name order, so output is stable.
    mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escapedLabel($0.value))\"" }
                .joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// Label values escape backslash, double quote and line feed.
    static func escapedLabel(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// HELP text escapes backslash and line feed.
    static func escapedHelp(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value.rounded() == value && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
