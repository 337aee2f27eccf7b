import FarmCore
import FarmRuntime
import FarmStore
#if canImport(Glibc)
import Glibc
#endif

/// `ocrfarm status`: what the farm is doing.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show pages by state, throughput, ETA, failures, workers and stage times."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--document", value: "NAME", "Only this document's pages, failures and ETA (all documents of that name)."),
        OptionSpec("--json", "Print JSON with stable keys instead of text."),
        OptionSpec("--prometheus", "Print the Prometheus text format (for node_exporter's textfile collector)."),
        OptionSpec("--watch", "Print again every 2 s until Ctrl-C (redrawn in place on a terminal, each line cut to its width)."),
        OptionSpec("--quality", "Also the pages measured, how many are below 0.5, and the 5 weakest (ocrfarm review lists more)."),
        OptionSpec("--check", "First check the store with SQLite's quick_check (reads the whole file): damaged, exit 76."),
    ]
    static let discussion = """
    Reads the store in one read transaction without blocking the coordinator; fast at a million pages.
    Throughput is pages done per second over the last minute, 10 minutes and hour, and overall (from the first
    submit to the last page done); the ETA is the queued and leased pages at the last minute's pace, "unknown"
    when no page was done in the last minute. Workers are alive when heard from within the coordinator's liveness
    window (heartbeat × 3, plus 2 s for the store to catch up: 5 s by default), silent when not (stopped, cut off,
    or no coordinator running), gone when the coordinator saw them leave or declared them lost. Stage times
    (p50/p95) and worker pages/s come from the most recent 2,000 results. Documents listed are those with pages not
    done, at most 100 (queued or leased first); --document shows one document (an unknown name exits 66).
    With --document, throughput, workers and stage times stay the farm's.

    JSON keys: store, generated_at, scope{document, document_ids} (null without --document), documents,
    pages{total, queued, leased, done, failed, rereading}, by_document[{id, name, pages{…}}], by_document_truncated,
    throughput{last_minute, last_10_minutes, last_hour, overall} (pages/s), eta_seconds (0 when nothing is left,
    null when unknown), failures[{code, count, example{page_id, document, page, source, stage, message}}],
    workers[{id, host, pid, slots, engine, state (alive, silent, gone), pages_done, pages_failed,
    pages_per_second (its share of the last minute's pace: the workers' add up to it), leased (pages it holds:
    those its slots read and those it fetched ahead), last_seen, seconds_since_seen}], stage_times{sample, stages[{stage, p50_ms, p95_ms}]},
    liveness{heartbeat_ms, liveness, silent_after_seconds}, store_disk{available_bytes, total_bytes, full} (the
    store's file system; full below 4 MB), coordinator_running, coordinator{…its counters}.
    With --watch, JSON is one line per report. With --quality, also quality{measured, unmeasured, below_half,
    weakest[{document, page, figure}]} (the quality figure: ocrfarm help review).

    Prometheus metrics: ocrfarm_pages{state}, ocrfarm_documents, ocrfarm_document_pages{document, document_id,
    state}, ocrfarm_throughput_pages_per_second{window}, ocrfarm_eta_seconds, ocrfarm_failed_pages{code},
    ocrfarm_worker_{slots, pages_done_total, pages_failed_total, pages_per_second, last_seen_timestamp_seconds,
    condition}{worker, host}, ocrfarm_stage_duration_seconds{stage, quantile} (a summary over the recent results),
    ocrfarm_coordinator_up and the coordinator's counters. `ocrfarm coordinator --metrics-listen` serves the same.

    Counts are read from the store's indexes and count tables, which a damaged file can still answer: --check runs
    SQLite's quick_check over the whole file first (a few seconds per GB) and says "quick_check: ok" (text) before
    the report, or exits 76 naming the first problems.

    Exit status: 0; 64 bad options; 66 no store, or no document of that name; 76 damaged store (--check).
    """

    enum Format { case text, json, prometheus }

    let storePath: String
    let documentName: String?
    let format: Format
    let watch: Bool
    let quality: Bool
    let check: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "status takes no arguments") }
        storePath = StoreOption.path(arguments)
        documentName = arguments.string("--document")
        if arguments.flag("--json") && arguments.flag("--prometheus") {
            throw UsageError(message: "--json and --prometheus cannot be used together")
        }
        format = arguments.flag("--json") ? .json : arguments.flag("--prometheus") ? .prometheus : .text
        watch = arguments.flag("--watch")
        quality = arguments.flag("--quality")
        check = arguments.flag("--check")
        if quality && format == .prometheus { throw UsageError(message: "--quality and --prometheus cannot be used together") }
    }

    func run() throws -> ExitStatus {
        let store = try ReportDocuments.open(storePath)
        if check {
            try store.checkSound()
            if format == .text { Console.out("quick_check: ok (\(storePath))\n") }
        }
        let scope = try documentName.map { try ReportDocuments.named($0, in: store) }
        guard watch else {
            Console.out(render(try store.report(scope: scope), framed: false, quality: try qualitySummary(store, scope: scope)))
            return .success
        }
        Shutdown.install()
        let terminal = Console.outputIsTerminal
        var first = true
        while Shutdown.requested == nil {
            // Opened again for each frame: a store read as immutable (see Store.init) would not show a coordinator
            // that starts meanwhile.
            let current = first ? store : try ReportDocuments.open(storePath)
            let frame = render(try current.report(scope: scope), framed: true, quality: try qualitySummary(current, scope: scope))
            let screen = terminal ? Self.redrawn(frame, first: first, columns: Console.outputColumns)
                : frame + (format == .json ? "" : "\n")
            // A reader that went away (`status --watch | head`) ends the watch.
            guard Self.write(screen) else { break }
            first = false
            let wake = Clock.monotonicMilliseconds + 2000
            while Shutdown.requested == nil && Clock.monotonicMilliseconds < wake { Clock.sleep(milliseconds: 50) }
        }
        if terminal { _ = Self.write("\n") }
        return .success
    }

    private func render(_ report: FarmReport, framed: Bool, quality: (review: QualityReview, belowHalf: Int)? = nil) -> String {
        switch format {
        case .json:
            var json = report.json
            if let quality, case .object(var fields) = json {
                fields.append(("quality", .object([
                    ("measured", JSON(quality.review.measured)), ("unmeasured", JSON(quality.review.unmeasured)),
                    ("below_half", JSON(quality.belowHalf)),
                    ("weakest", .array(quality.review.pages.map {
                        .object([("document", JSON($0.document.name)), ("page", JSON($0.number)),
                                 ("figure", .rounded($0.quality.figure, places: 3))])
                    })),
                ])))
                json = .object(fields)
            }
            return framed ? json.rendered + "\n" : json.pretty + "\n"
        case .prometheus:
            return (framed ? "# ocrfarm status at \(Clock.iso8601(report.generatedAt))\n" : "") + report.prometheus
        case .text:
            var text = (framed ? "ocrfarm status at \(Clock.iso8601(report.generatedAt)) (every 2 s; Ctrl-C stops)\n" : "")
                + StatusText.render(report)
            if let quality {
                if !text.hasSuffix("\n") { text += "\n" }
                text += "quality: \(quality.review.measured) pages measured"
                    + (quality.review.unmeasured > 0 ? " (\(quality.review.unmeasured) not)" : "")
                    + ", \(quality.belowHalf) below 0.5"
                    + (quality.review.pages.isEmpty ? "" : "; weakest: " + quality.review.pages.map {
                        "\(Printable.text($0.document.name)) p\($0.number) \(FarmCore.Format.fixed($0.quality.figure, 2))"
                    }.joined(separator: ", ")) + " (ocrfarm review for more)\n"
            }
            return text
        }
    }

    /// `--quality`: the weakest 5 pages of the scope and how many are below 0.5; nil without the option.
    private func qualitySummary(_ store: Store, scope: [DocumentRecord]?) throws -> (review: QualityReview, belowHalf: Int)? {
        guard quality else { return nil }
        return try store.read {
            let ids = scope?.map(\.id)
            return (try store.qualityReview(limit: 5, documents: ids), try store.qualityCount(below: 0.5, documents: ids))
        }
    }

    /// The frame drawn over the previous one: cursor home, each line cleared to its end, the rest of the screen
    /// cleared (no flicker from clearing first).
    /// The frame drawn over the last one. Each line is cut to the terminal's width: a line the terminal wrapped
    /// (mid-word) would push the frame down a row at each redraw.
    static func redrawn(_ frame: String, first: Bool, columns: Int?) -> String {
        let lines = frame.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard let columns, Console.displayWidth(line) > columns else { return String(line) }
            return Printable.cut(String(line), columns)
        }
        return (first ? "\u{1B}[2J" : "") + "\u{1B}[H" + lines.joined(separator: "\u{1B}[K\n") + "\u{1B}[J"
    }

    /// Writes to standard output; false when the reader is gone.
    private static func write(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}

/// The status report for people.
enum StatusText {
    static func render(_ report: FarmReport) -> String {
        summary(report) + documents(report) + failures(report) + stageTimes(report) + workers(report) + coordinator(report)
    }

    /// The scope, pages by state, throughput and the ETA.
    private static func summary(_ report: FarmReport) -> String {
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
            text += "ETA: \(RunCommand.duration(seconds)) (\(pages.remaining) pages left at \(Format.fixed(throughput.lastMinute, 2)) pages/s)\n"
        case .none where !report.coordinatorRunning:
            text += "ETA: none, no coordinator is running (\(pages.remaining) pages wait for `ocrfarm coordinator` or `ocrfarm run`)\n"
        case .none: text += "ETA: unknown (\(pages.remaining) pages left; no page done in the last minute)\n"
        }
        return text
    }

    /// The documents with pages not done (all of the scope's with --document), a table by state.
    private static func documents(_ report: FarmReport) -> String {
        var text = ""
        if !report.documentProgress.isEmpty {
            let shown = report.documentProgress.prefix(report.scope == nil ? 20 : 100)
            let more = report.documentProgress.count - shown.count
            text += report.scope == nil ? "documents with pages not done:\n" : "documents:\n"
            let width = min(40, max(8, shown.map { Console.displayWidth(Printable.text($0.name)) }.max() ?? 0))
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
    private static func failures(_ report: FarmReport) -> String {
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
    private static func stageTimes(_ report: FarmReport) -> String {
        var text = ""
        if !report.stages.isEmpty {
            text += "stage times over the last \(report.sampleSize) results (p50 / p95):\n  "
            text += report.stages.map { "\($0.stage) \(milliseconds($0.p50)) / \(milliseconds($0.p95))" }.joined(separator: "   ")
            text += "\n"
        }
        return text
    }

    /// The workers, those gone long ago in one line.
    private static func workers(_ report: FarmReport) -> String {
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
                text += "\(RunCommand.duration(max(0, now - latest))) ago)\n"
            }
        }
        return text
    }

    /// The store's disk when it is full, and the coordinator's last report.
    private static func coordinator(_ report: FarmReport) -> String {
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
        let shown = Console.displayWidth(text)
        return shown >= width ? text : text + String(repeating: " ", count: width - shown)
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        let shown = Console.displayWidth(text)
        return shown >= width ? text : String(repeating: " ", count: width - shown) + text
    }
}

/// Names and messages from the store made safe for one line of a terminal.
enum Printable {
    /// Control characters (newlines in file names, C1 controls, line separators) shown escaped.
    static func text(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: \.isControlCharacter) else { return value }
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.isControlCharacter:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value < 0x100 ? "\\x" + hex.leftPadded(to: 2) : "\\u" + hex.leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text(value)` cut to `width` terminal columns with an ellipsis.
    static func clipped(_ value: String, _ width: Int) -> String {
        let printable = text(value)
        return Console.displayWidth(printable) <= width ? printable : cut(printable, width)
    }

    /// `value` cut to at most `width` columns, the last of them an ellipsis (a wide character is not split).
    static func cut(_ value: String, _ width: Int) -> String {
        var out = "", used = 0
        for character in value {
            let columns = Console.displayWidth(String(character))
            if used + columns > max(0, width - 1) { break }
            out.append(character)
            used += columns
        }
        return out + "…"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
