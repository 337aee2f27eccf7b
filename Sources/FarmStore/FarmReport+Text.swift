import FarmCore

extension FarmReport {
    /// The report for people (`ocrfarm status`): the scope, pages by state, throughput and ETA, the documents not
    /// done, failures, stage times, workers and the coordinator; names and messages made printable.
    public var text: String {
        FarmReportText.summary(self) + FarmReportText.documents(self) + FarmReportText.failures(self)
            + FarmReportText.stageTimes(self) + FarmReportText.workers(self) + FarmReportText.coordinator(self)
    }
}

/// The sections of `FarmReport.text`, each a few lines ending in a line end.
private enum FarmReportText {
    /// The scope, pages by state, throughput and the ETA.
    static func summary(_ report: FarmReport) -> String {
        let pages = report.pages
        var text: String
        if let scope = report.scope, let first = scope.first {
            let ids = scope.map { String($0.id.rawValue) }.joined(separator: ", ")
            text = "document '\(Printable.text(first.name))' (id \(ids)) in \(report.store): \(pages.total) pages\n"
        } else {
            text = "store \(report.store): \(report.documents) document\(report.documents == 1 ? "" : "s"), \(pages.total) pages\n"
        }
        text += "  " + PageState.allCases.map { "\($0.rawValue) \(pages[$0])" }.joined(separator: "   ")
            + (pages.rereading > 0 ? "   rereading \(pages.rereading) (done, read again)" : "") + "\n"

        let throughput = report.throughput
        text += "throughput: \(Format.fixed(throughput.lastMinute, 2)) pages/s over the last minute, "
        text += "\(Format.fixed(throughput.last10Minutes, 2)) over 10 min, \(Format.fixed(throughput.lastHour, 2)) over 1 h, "
        text += "\(Format.fixed(throughput.overall, 2)) overall (since the first submit)\n"
        switch report.etaSeconds {
        case .some(0): text += "ETA: nothing left to read\n"
        case .some(let seconds):
            text += "ETA: \(Format.duration(seconds)) (\(pages.remaining) pages left at \(Format.fixed(throughput.lastMinute, 2)) pages/s)\n"
        case .none where !report.coordinatorRunning:
            text += "ETA: none, no coordinator is running (\(pages.remaining) pages wait for `ocrfarm coordinator` or `ocrfarm run`)\n"
        case .none: text += "ETA: unknown (\(pages.remaining) pages left; no page done in the last minute)\n"
        }
        return text
    }

    /// The documents with pages not done (all of the scope's with --document), a table by state.
    static func documents(_ report: FarmReport) -> String {
        var text = ""
        if !report.documentProgress.isEmpty {
            let shown = report.documentProgress.prefix(report.scope == nil ? 20 : 100)
            let more = report.documentProgress.count - shown.count
            text += report.scope == nil ? "documents with pages not done:\n" : "documents:\n"
            let width = min(40, max(8, shown.map { Printable.width(Printable.text($0.name)) }.max() ?? 0))
            text += "  " + pad("DOCUMENT", width) + "   queued   leased     done   failed\n"
            for document in shown {
                text += "  " + pad(Printable.clipped(document.name, width), width)
                for state in PageState.allCases { text += " " + leftPad(String(document.pages[state]), 8) }
                text += "\n"
            }
            if more > 0 || report.documentProgressTruncated {
                text += "  … more (ocrfarm status --document NAME for one; --json lists up to 100)\n"
            }
        }
        return text
    }

    /// The failures by code with an example, and the pages failed for good.
    static func failures(_ report: FarmReport) -> String {
        let pages = report.pages
        var text = ""
        if !report.failures.isEmpty {
            text += "failures:\n"
            for group in report.failures {
                text += "  \(group.code) \(group.count)"
                if let example = group.example {
                    text += "   e.g. \(Printable.text(example.document)) page \(example.number) (\(example.source)): "
                    text += Printable.clipped(example.message, 160)
                }
                text += "\n"
            }
        }

        if pages[.failed] > 0 {
            // A failed page is not a hole: export shows it as its image or a placeholder, without text.
            let documents = report.documentProgress.filter { $0.pages[.failed] > 0 }
            let named = documents.prefix(5).map { "'\(Printable.text($0.name))' \($0.pages[.failed])" }
            text += "degraded: \(pages[.failed]) page\(pages[.failed] == 1 ? "" : "s") failed for good"
            if !named.isEmpty {
                text += " (" + named.joined(separator: ", ")
                text += documents.count > named.count || report.documentProgressTruncated ? ", …)" : ")"
            }
            text += "; export puts them in the PDF without text (their image, or a placeholder saying why); "
            text += "ocrfarm requeue --failed retries them\n"
        }
        return text
    }

    /// The stage times over the recent results.
    static func stageTimes(_ report: FarmReport) -> String {
        var text = ""
        if !report.stages.isEmpty {
            text += "stage times over the last \(report.sampleSize) results (p50 / p95):\n  "
            text += report.stages.map { "\($0.stage) \(milliseconds($0.p50)) / \(milliseconds($0.p95))" }.joined(separator: "   ")
            text += "\n"
        }
        return text
    }

    /// The workers, those gone long ago in one line.
    static func workers(_ report: FarmReport) -> String {
        let now = report.generatedAt
        var text = ""
        // Workers gone for more than 10 minutes are one line: a farm that restarts its workers would list
        // hundreds of them.
        let longGone = report.workers.filter { $0.condition == .gone && now - $0.record.lastSeen > 600 }
        let goneIDs = Set(longGone.map(\.record.id))
        let shownWorkers = report.workers.filter { !goneIDs.contains($0.record.id) }.prefix(50)
        if shownWorkers.isEmpty && longGone.isEmpty {
            text += "workers: none yet\n"
        } else {
            text += "workers (silent after \(Format.fixed(report.liveness.silentAfterSeconds, 1)) s unheard):\n"
            for worker in shownWorkers {
                let record = worker.record
                text += "  \(record.id)  \(record.host)  \(worker.condition.rawValue)  slots \(record.slots)  leased \(worker.leased)  done \(record.pagesDone)"
                text += "  failed \(record.pagesFailed)  \(Format.fixed(worker.pagesPerSecond, 2)) pages/s"
                text += "  last heard \(Format.fixed(max(0, now - record.lastSeen), 1)) s ago\n"
            }
            let more = report.workers.count - longGone.count - shownWorkers.count
            if more > 0 { text += "  … \(more) more\n" }
            if let latest = longGone.map(\.record.lastSeen).max() {
                let done = longGone.reduce(0) { $0 + $1.record.pagesDone }
                text += "  \(longGone.count) gone more than 10 min ago (\(done) pages done between them; the last heard "
                text += "\(Format.duration(max(0, now - latest))) ago)\n"
            }
        }
        return text
    }

    /// The store's disk when it is full, and the coordinator's last report.
    static func coordinator(_ report: FarmReport) -> String {
        let now = report.generatedAt
        var text = ""
        let diskFull = report.storeDisk?.isFull == true
        if let disk = report.storeDisk, diskFull {
            text += "store disk: FULL, \(disk.description): the store cannot take results; a running coordinator "
            text += "holds them and pauses dispatch until space returns\n"
        }
        if let counters = report.coordinatorCounters {
            let beat = report.coordinatorLastReport.map { Format.fixed(max(0, now - $0), 1) + " s ago" } ?? "never"
            let malformed = counters["malformed"]?.objectValue?.reduce(0) { $0 + ($1.1.intValue ?? 0) } ?? 0
            // A coordinator cannot write its counters to a full disk: silence then does not mean it stopped.
            let silent = diskFull && counters["stopped_at"] == nil
                ? "not heard from (it cannot report to a full disk; `ocrfarm health` tells whether it runs)" : "not running"
            text += "coordinator: \(report.coordinatorRunning ? "running" : silent), last report \(beat), "
            text += "dispatched \(counters["dispatched"]?.intValue ?? 0), malformed messages \(malformed)"
            // Its last report may predate the full disk; the disk itself says a running coordinator is paused now.
            if counters["disk_full"]?.boolValue == true || diskFull && report.coordinatorRunning {
                text += ", DISK FULL: dispatch paused"
            }
            text += "\n"
        } else {
            text += "coordinator: never ran on this store\n"
        }
        return text
    }

    private static func milliseconds(_ value: Double) -> String {
        value >= 1000 ? Format.fixed(value / 1000, 2) + " s" : Format.fixed(value, value < 10 ? 1 : 0) + " ms"
    }

    /// `text` padded with spaces to `width` terminal columns (a Chinese character takes two).
    private static func pad(_ text: String, _ width: Int) -> String {
        let shown = Printable.width(text)
        return shown >= width ? text : text + String(repeating: " ", count: width - shown)
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        let shown = Printable.width(text)
        return shown >= width ? text : String(repeating: " ", count: width - shown) + text
    }
}
