import FarmCore

extension FarmReport {
    /// The report in the Prometheus text exposition format (version 0.0.4), for node_exporter's textfile
    /// collector and `coordinator --metrics-listen`.
    ///
    /// Per-document gauges cover the listed (unfinished) documents only, and workers that are gone appear for an
    /// hour after they were last seen, so the number of series stays bounded on a large farm.
    public var prometheus: String {
        var out = PrometheusWriter()
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

        out.family("ocrfarm_stage_duration_seconds", .summary,
                   "Time of each pipeline stage over the most recent \(sampleSize) results (not cumulative).")
        for stage in stages {
            out.sample("ocrfarm_stage_duration_seconds", ["stage": stage.stage, "quantile": "0.5"], stage.p50 / 1000)
            out.sample("ocrfarm_stage_duration_seconds", ["stage": stage.stage, "quantile": "0.95"], stage.p95 / 1000)
            out.sample("ocrfarm_stage_duration_seconds_sum", ["stage": stage.stage], stage.sum / 1000)
            out.sample("ocrfarm_stage_duration_seconds_count", ["stage": stage.stage], Double(stage.count))
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
        return out.text
    }
}

/// Writes the Prometheus text format: a HELP and TYPE line per family, then its samples, label values escaped.
struct PrometheusWriter {
    enum Kind: String { case gauge, counter, summary }

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
