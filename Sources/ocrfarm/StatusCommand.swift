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

    private func render(_ report: FarmReport, framed: Bool, quality: QualitySummary? = nil) -> String {
        switch format {
        case .json:
            var json = report.json
            if let quality, case .object(var fields) = json {
                fields.append(("quality", quality.json))
                json = .object(fields)
            }
            return framed ? json.rendered + "\n" : json.pretty + "\n"
        case .prometheus:
            return (framed ? "# ocrfarm status at \(Clock.iso8601(report.generatedAt))\n" : "") + report.prometheus
        case .text:
            var text = (framed ? "ocrfarm status at \(Clock.iso8601(report.generatedAt)) (every 2 s; Ctrl-C stops)\n" : "")
                + report.text
            if let quality {
                if !text.hasSuffix("\n") { text += "\n" }
                text += quality.text
            }
            return text
        }
    }

    /// `--quality`: the weakest 5 pages of the scope and how many are below 0.5; nil without the option.
    private func qualitySummary(_ store: Store, scope: [DocumentRecord]?) throws -> QualitySummary? {
        guard quality else { return nil }
        return try store.read {
            let ids = scope?.map(\.id)
            return QualitySummary(review: try store.qualityReview(limit: 5, documents: ids),
                                  belowHalf: try store.qualityCount(below: 0.5, documents: ids))
        }
    }

    /// The frame drawn over the previous one: cursor home, each line cleared to its end, the rest of the screen
    /// cleared (no flicker from clearing first).
    /// The frame drawn over the last one. Each line is cut to the terminal's width: a line the terminal wrapped
    /// (mid-word) would push the frame down a row at each redraw.
    static func redrawn(_ frame: String, first: Bool, columns: Int?) -> String {
        let lines = frame.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard let columns, Printable.width(line) > columns else { return String(line) }
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
