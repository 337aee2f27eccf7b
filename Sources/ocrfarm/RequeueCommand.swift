import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm requeue`: return failed or stuck pages to the queue.
struct RequeueCommand: Command {
    static let name = "requeue"
    static let abstract = "Return failed or stuck pages to the queue (a running coordinator picks them up)."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--failed", "Pages that failed for good (the degraded pages `status` counts and `export` lists)."),
        OptionSpec("--stuck", "Pages leased past their deadline, or to a worker not heard from within the liveness window."),
        OptionSpec("--document", value: "NAME", "Only pages of the documents with this name."),
        OptionSpec("--error", value: "CODE", "Only pages whose last failure had this code (e.g. unreadable, timeout)."),
        OptionSpec("--worker", value: "ID", "Only pages leased to this worker, or whose last attempt it made."),
        OptionSpec("--page", value: "ID", repeatable: true, "Only these pages (ids as `requeue --dry-run` lists them; repeat or join with commas)."),
        OptionSpec("--dry-run", "List what would move and count it; change nothing."),
    ]
    static let discussion = """
    At least one selector is required: a bare `requeue` is refused rather than moving everything. --failed and
    --stuck choose kinds of pages (either kind when both are given); without them, failed, stuck and waiting
    pages (queued, in a retry's backoff) are chosen. --document, --error, --worker and --page narrow the choice:
    every one given must hold. A page is stuck when its lease ran past its deadline or its worker was not heard
    from within the coordinator's liveness window (heartbeat × 3 + 2 s, 5 s by default: the window `status` uses
    to call a worker silent). A done page is never requeued (it has a result), nor a page a live worker holds
    within its lease; pages named with --page that are left alone are listed with the reason.

    A requeued page is queued and due at once, with a fresh set of tries (its try counter starts again; the
    coordinator's --max-attempts applies anew). Nothing is deleted: the attempt history keeps every try, a stuck
    page's running attempt is closed as `interrupted`, and the requeue is recorded as an attempt with the outcome
    `requeued`. The attempt number moves on, so a late result from the worker that held a stuck page is ignored
    and the page never gets two results. A running coordinator picks the pages up within a second, without a
    restart; otherwise they wait for the next `ocrfarm coordinator` or `ocrfarm run`.

    Exit status: 0 (also when nothing matched); 64 no selector or a bad option; 66 no store, or no document,
    worker or page of that name.
    """

    let storePath: String
    let selection: RequeueSelection
    let documentName: String?
    let dryRun: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "requeue takes no arguments; name pages with --page ID")
        }
        storePath = StoreOption.path(arguments)
        var selection = RequeueSelection()
        selection.failed = arguments.flag("--failed")
        selection.stuck = arguments.flag("--stuck")
        documentName = arguments.string("--document")
        if let documentName, documentName.isEmpty { throw UsageError(message: "--document needs a name") }
        if let code = arguments.string("--error") {
            guard !code.isEmpty, code.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }) else {
                throw UsageError(message: "--error takes a failure code such as unreadable or decode-failed, not '\(code)'")
            }
            selection.code = code
        }
        selection.worker = arguments.string("--worker").map { WorkerID($0) }
        let pages = arguments.strings("--page")
        if !pages.isEmpty {
            selection.pages = try pages.map { text throws(UsageError) in
                guard let id = Int64(text), id > 0 else { throw UsageError(message: "--page takes page ids (whole numbers), not '\(text)'") }
                return PageID(id)
            }
        }
        dryRun = arguments.flag("--dry-run")
        // A document name is resolved later, against the store; it still counts as a selector here.
        guard !selection.isEmpty || documentName != nil else {
            throw UsageError(message: "say which pages: --failed, --stuck, --document, --error, --worker or --page "
                + "(requeue never moves every page at once)")
        }
        self.selection = selection
    }

    func run() throws -> ExitStatus {
        let reader = try ReportDocuments.open(storePath)
        var selection = self.selection
        if let documentName {
            selection.documents = try ReportDocuments.named(documentName, in: reader).map(\.id)
        }
        if let worker = selection.worker, try !reader.workerExists(worker) {
            throw CommandFailure(.noInput, "no worker '\(Printable.text(worker.rawValue))' in \(storePath) (`ocrfarm status` lists them)")
        }
        var named: [NamedPage] = []
        if let pages = selection.pages {
            named = try reader.namedPages(pages)
            let missing = pages.filter { id in !named.contains { $0.page == id } }
            guard missing.isEmpty else {
                throw CommandFailure(.noInput, "no page with id \(missing.map(\.description).joined(separator: ", ")) in \(storePath)")
            }
        }
        let liveness = try reader.liveness()
        let now = Clock.now
        let listLimit = max(1000, named.count)
        let (listed, preview) = try reader.requeueCandidates(selection, liveness: liveness, now: now, limit: listLimit)
        var out = ""
        let chosen = Set(listed.map(\.page))
        let left = named.filter { !chosen.contains($0.page) }
        if !left.isEmpty {
            // Which of them are of a chosen kind, so the reason can name the other options instead.
            var kindOnly = RequeueSelection()
            (kindOnly.failed, kindOnly.stuck, kindOnly.pages) = (selection.failed, selection.stuck, left.map(\.page))
            let ofKind = Set(try reader.requeueCandidates(kindOnly, liveness: liveness, now: now, limit: left.count).listed.map(\.page))
            for page in left {
                out += "page \(page.page) (\(Printable.text(page.document)) page \(page.number)) "
                out += Self.reasonLeftAlone(page, selection, ofKind: ofKind.contains(page.page)) + ": not requeued\n"
            }
        }

        let summary: RequeueSummary
        if dryRun {
            summary = preview
            if summary.total > 0 {
                out += "would requeue \(Self.describe(summary))\n"
                out += Self.table(listed)
                if summary.total > listed.count { out += "  … and \(summary.total - listed.count) more\n" }
            }
        } else if preview.total == 0 {
            summary = preview
        } else {
            let writer = try Store(path: storePath)
            summary = try writer.requeue(selection, liveness: liveness, now: Clock.now)
            out += "requeued \(Self.describe(summary))\n"
        }
        if summary.total == 0 {
            out += "nothing to requeue: no page matches"
            if let code = selection.code {
                let codes = try reader.failureCodes()
                out += codes.contains(code) ? "" : " (failed pages have the codes: \(codes.isEmpty ? "none" : codes.joined(separator: ", ")))"
            }
            out += "\n"
        } else {
            out += "by failure code: " + summary.codes.map { "\($0.code) \($0.count)" }.joined(separator: ", ") + "\n"
            if dryRun {
                out += "dry run: nothing was changed\n"
            } else {
                out += try Self.coordinatorNote(reader)
            }
        }
        Console.out(out)
        return .success
    }

    private static func describe(_ summary: RequeueSummary) -> String {
        let kinds = RequeueKind.allCases.compactMap { kind in summary.kinds[kind].map { "\($0) \(kind.rawValue)" } }
        return "\(summary.total) page\(summary.total == 1 ? "" : "s"): " + kinds.joined(separator: ", ")
    }

    private static func table(_ listed: [RequeueCandidate]) -> String {
        let width = min(40, max(8, listed.map { Printable.text($0.document).count }.max() ?? 0))
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        var text = "  " + pad("PAGE ID", 9) + " " + pad("DOCUMENT", width) + " " + pad("PAGE", 6) + " " + pad("STATE", 7) + " "
            + pad("CODE", 16) + " WORKER\n"
        for page in listed {
            text += "  " + pad(String(page.page.rawValue), 9) + " " + pad(Printable.clipped(page.document, width), width) + " "
            text += pad(String(page.number), 6) + " " + pad(page.state.rawValue, 7) + " " + pad(page.code ?? "-", 16) + " "
            text += (page.worker.map { Printable.text($0.rawValue) } ?? "-") + "\n"
        }
        return text
    }

    private static func reasonLeftAlone(_ page: NamedPage, _ selection: RequeueSelection, ofKind: Bool) -> String {
        if page.state == .done { return "is done (it has a result; a done page is never requeued)" }
        if ofKind { return "is \(page.state.rawValue) but does not match --document, --error or --worker" }
        switch page.state {
        case .leased where selection.kinds.contains(.stuck):
            let worker = page.leaseWorker.map { Printable.text($0.rawValue) } ?? "a worker"
            return "is being read by \(worker), which is alive and within its lease (not stuck)"
        case .queued where selection.kinds.contains(.waiting): return "is already queued and due"
        default:
            return "is \(page.state.rawValue), not " + selection.kinds.map(\.rawValue).joined(separator: " or ")
        }
    }

    /// Whether a coordinator will see the pages now.
    private static func coordinatorNote(_ store: Store) throws -> String {
        try store.coordinatorRunning()
            ? "the running coordinator picks them up now\n"
            : "no coordinator is running on this store: the pages wait for `ocrfarm coordinator` or `ocrfarm run`\n"
    }
}
