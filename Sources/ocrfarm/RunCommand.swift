import FarmCoordinator
import FarmCore
import FarmIngest
import FarmLocal
import FarmPipeline
import FarmProtocol
import FarmRuntime
import FarmStore

/// `ocrfarm run`: the whole farm on one machine.
struct RunCommand: Command {
    static let name = "run"
    static let abstract = "Submit files and read them here: an embedded coordinator and local worker processes."
    static let arguments = "[PATH...]"
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--workers", value: "N", "Worker processes (default: the number of cores)."),
        OptionSpec("--slots", value: "N", "Pages each worker reads at once (default: 1)."),
        OptionSpec("--max-attempts", value: "N", "Tries before a page fails for good (default: 3)."),
        OptionSpec("--retry-delay", value: "SECONDS", "Wait before the first retry; doubles with each retry (default: 1)."),
        OptionSpec("--heartbeat", value: "MS", "Heartbeat interval in milliseconds (default: 1000)."),
    ] + DecodeLimitOptions.specs + SubmitOptionSpecs.all + LogOptions.specs
    static let discussion = """
    The same code path as a cluster, on loopback: files are submitted to the store, a coordinator starts in
    this process, and the workers are separate processes of this binary (their log goes to STORE.log). Progress
    (pages done, pages/s, ETA) is shown on a terminal; a summary ends the run. With no paths, the run reads what the
    store has waiting (resuming an interrupted run). Ctrl-C stops it: pages being read are finished or given back to
    the queue, and the summary counts what the store holds.

    Exit status: 0 no page failed in this run (pages that failed in an earlier run are named, not counted); 64 bad usage;
    65 some pages failed in this run, or a file could not be submitted; 66 nothing could be read, or not an ocrfarm
    store; 70 the embedded coordinator or the workers failed (STORE.log says why); 73 the store cannot be made or written
    (its folder is missing or not writable); 74 the disk is full, or the store
    was moved or deleted; 75 a coordinator serves the store; 76 the store is damaged; 130 interrupted.
    """

    let storePath: String
    let paths: [RawPath]
    let submitOptions: SubmitOptions
    let workers: Int
    let slots: Int
    let engine: EngineKind
    let maxAttempts: Int
    let retryDelay: Double
    let heartbeat: Int
    let logLevelGiven: Bool
    let verbose: Bool
    /// --max-pixels and --page-memory as given (checked here), passed on to the workers.
    let decodeLimits: [String]
    /// --log-format as given, passed on to the workers so the whole log file has one format.
    let logFormat: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        storePath = StoreOption.path(arguments)
        guard !arguments.positionals.isEmpty || FileSystem.exists(storePath) else {
            throw UsageError(message: "no files or folders given, and there is no store \(storePath) to resume")
        }
        paths = RawArguments.paths(arguments.positionals)
        submitOptions = try SubmitOptionSpecs.parse(arguments, allowingNoEngine: true)
        workers = try arguments.int("--workers", range: 1...256) ?? NativeThread.processorCount
        slots = try arguments.int("--slots", range: 1...256) ?? 1
        // --engine none: the workers return empty results at once, to measure the farm itself.
        engine = CorrectionOptions.slotEngine(arguments)
        maxAttempts = try arguments.int("--max-attempts", range: 1...100) ?? 3
        retryDelay = try arguments.double("--retry-delay", range: 0...86_400) ?? 1
        heartbeat = try arguments.int("--heartbeat", range: 50...60_000) ?? Wire.heartbeatMilliseconds
        logLevelGiven = arguments.string("--log-level") != nil
        verbose = arguments.flag("--verbose")
        _ = try DecodeLimitOptions.parse(arguments)
        decodeLimits = DecodeLimitOptions.passedOn(arguments)
        logFormat = arguments.string("--log-format")
        try LogOptions.apply(arguments, role: "coordinator")
        // The progress line is the story on a terminal; the coordinator only speaks up about trouble.
        if !logLevelGiven { Log.configure(level: .warning) }
    }

    func run() throws -> ExitStatus {
        Shutdown.install()
        if engine == .page { try EngineCheck.engine(submitOptions.pageOptions.engine, languages: submitOptions.pageOptions.languages) }
        guard anyPathThere() else { return .noInput }
        let lock = try CoordinatorLocking.take(storePath)
        defer { withExtendedLifetime(lock) {} }
        let store = try Store(path: storePath)
        try store.checkSound()
        let scope = try submitted(into: store)
        if scope.total == 0 {
            Console.error("ocrfarm run: nothing to read")
            return Submitter.exitStatus(scope.report) == .success ? .noInput : Submitter.exitStatus(scope.report)
        }
        let farm = try startFarm()
        defer { farm.stop() }
        var progress = RunProgress(scope: scope)
        let interrupted: Bool
        do {
            interrupted = try farm.supervise(pauseMilliseconds: 50) { try progress.show(farm.counters, store: store) }
        } catch {
            progress.bar.clear()
            throw error
        }
        progress.bar.clear()
        var givenBack = 0
        if interrupted {
            Console.error("interrupted: finishing the pages being read (up to 5 s)…")
            givenBack = farm.stop(givingBackLeasesOf: store)
        }
        return try summarize(scope, store: store, started: progress.started, interrupted: interrupted, givenBack: givenBack)
    }

    /// Paths that are not there at all are reported before anything is made: a mistyped folder leaves no empty
    /// store (or lock file) behind. False when none of the paths given is there.
    private func anyPathThere() -> Bool {
        guard !paths.isEmpty else { return true }
        let missing = paths.filter { (try? FileSystem.status($0, followLinks: false)) == nil }
        guard missing.count == paths.count else { return true }
        for path in missing { Console.error("ocrfarm: \(path): no such file or folder") }
        Console.error("ocrfarm run: nothing to read")
        return false
    }

    /// Submits the paths, then gathers what the run reads: everything that is waiting, that is what it submitted,
    /// what it skipped as submitted before but is not read yet, and whatever else was left queued in the store.
    private func submitted(into store: Store) throws -> RunScope {
        let report = paths.isEmpty ? SubmitReport() : try Submitter.submit(paths, options: submitOptions, store: store, verbose: verbose)
        let documents = Array(Set(report.documentIDs + report.skipped.map(\.id) + (try store.documentsWithWork()))).sorted()
        return RunScope(documents: documents, initial: try store.counts(of: documents), report: report)
    }

    /// The embedded coordinator and the local worker processes (their log goes to STORE.log); `watch` starts its
    /// farm the same way, or none (`start` false: `--no-workers`).
    func startFarm(_ start: Bool = true) throws -> FarmSupervisor {
        try FarmSupervisor(starting: start ? farmSettings : nil)
    }

    /// The farm as the options say: the workers' engine, languages and limits, the coordinator's retries.
    var farmSettings: LocalFarmSettings {
        var workerOptions = decodeLimits
        if logLevelGiven { workerOptions += ["--log-level", Log.level.name] }
        if let logFormat { workerOptions += ["--log-format", logFormat] }
        return LocalFarmSettings(
            storePath: storePath, workers: workers, slots: slots,
            engine: engine == .none ? CorrectionOptions.noEngine : submitOptions.pageOptions.engine.rawValue,
            languages: submitOptions.pageOptions.languages, maxAttempts: maxAttempts, retryDelay: retryDelay,
            heartbeatMilliseconds: heartbeat, workerOptions: workerOptions)
    }

    /// The summary: the store's count, not the progress line's; the pages that failed (20 named), the scripts no
    /// installed language reads, and the exit status.
    private func summarize(_ scope: RunScope, store: Store, started: Int64, interrupted: Bool, givenBack: Int) throws -> ExitStatus {
        let counts = try store.counts(of: scope.documents)
        let elapsed = Double(Clock.monotonicMilliseconds - started) / 1000
        let done = counts[.done] ?? 0
        let failed = counts[.failed] ?? 0
        let read = done + failed - scope.alreadyDone
        var summary = "done \(done) of \(scope.total) pages, \(failed) failed"
        if interrupted {
            let left = (counts[.queued] ?? 0) + (counts[.leased] ?? 0)
            summary += ", \(left) left queued" + (givenBack > 0 ? " (\(givenBack) being read given back)" : "")
        }
        Console.error(summary + ", in \(Format.fixed(elapsed, 1)) s"
                      + " (\(Format.fixed(elapsed > 0 ? Double(read) / elapsed : 0, 2)) pages/s)")
        // Pages whose script no installed language reads came out as garbage: say which package reads them.
        for (note, pages) in try store.missingLanguages(documents: scope.documents) {
            Console.error("ocrfarm run: warning: \(pages) page\(pages == 1 ? "" : "s") in \(note.script) script, which no "
                          + "installed language reads (read with \(note.readWith)); Debian: apt-get install \(note.package), "
                          + "then ocrfarm reread (ocrfarm review lists them)")
        }
        if failed > 0 { try nameFailedPages(of: scope.documents, store: store) }
        if interrupted {
            Console.error("interrupted; the rest stays queued in \(storePath): ocrfarm run --store \(storePath) goes on")
            return ExitStatus(rawValue: 130)
        }
        // Pages that failed in an earlier run are named, but do not fail this one again: a run with nothing new
        // would otherwise exit 65 for as long as they stay (issue 36). `requeue --failed` reads them again.
        // (Pages this submit found unusable are recorded as failed before the run starts: they are this run's.)
        let failedBefore = (scope.initial[.failed] ?? 0) - scope.report.added.reduce(0) { $0 + $1.failedPages }
        if failedBefore > 0 {
            Console.error("ocrfarm run: \(failedBefore) page\(failedBefore == 1 ? "" : "s") failed in an earlier run; "
                          + "ocrfarm requeue --failed --store \(storePath) reads \(failedBefore == 1 ? "it" : "them") again")
        }
        return failed > failedBefore || !scope.report.problems.isEmpty ? .dataError : .success
    }

    /// The first 20 failed pages of `documents`, each with its code and message. A page of a multi-page file is
    /// named by its page in that file (which page of the TIFF or PDF failed), also when --document put several
    /// files into one document.
    private func nameFailedPages(of documents: [DocumentID], store: Store) throws {
        let pages = try store.pages(of: documents)
        let failures = pages.filter { $0.state == .failed }
        var pageInFile: [PageID: Int] = [:]
        struct File: Hashable { let document: DocumentID, source: RawPath }
        for file in Dictionary(grouping: pages, by: { File(document: $0.document, source: $0.source) }).values
        where file.count > 1 {
            for (index, page) in file.sorted(by: { $0.number < $1.number }).enumerated() { pageInFile[page.id] = index + 1 }
        }
        for page in failures.prefix(20) {
            let name = pageInFile[page.id].map { "\(page.source) page \($0)" } ?? page.source.description
            Console.error("  \(name): \(page.failureCode ?? "failed"): \(page.failureMessage ?? "")")
        }
        if failures.count > 20 { Console.error("  … and \(failures.count - 20) more (ocrfarm status --store \(storePath))") }
    }
}

/// What a run reads: the documents with work, their pages by state when it started, and what its submit did.
private struct RunScope {
    let documents: [DocumentID]
    let initial: [PageState: Int]
    let report: SubmitReport
    var total: Int { initial.values.reduce(0, +) }
    /// Pages finished before the run started (done or failed).
    var alreadyDone: Int { (initial[.done] ?? 0) + (initial[.failed] ?? 0) }
}

/// `run`'s progress line (pages done, pages/s, ETA) on a terminal, a plain line every 10 s otherwise.
private struct RunProgress {
    let scope: RunScope
    let bar = ProgressLine(enabled: Console.errorIsTerminal)
    let started = Clock.monotonicMilliseconds
    private var lastPlainLine: Int64
    private var lastExactCount: Int64

    init(scope: RunScope) {
        self.scope = scope
        lastPlainLine = started
        lastExactCount = started
    }

    /// Shows the line for the coordinator's `counters`; finished once every page of the run is done or failed.
    mutating func show(_ counters: CoordinatorCounters, store: Store) throws -> FarmSupervisor.Step {
        // The coordinator's own counters are free to read; the store is asked only now and then, and to confirm
        // the end (another submitter may add pages to the same store meanwhile).
        let total = scope.total
        var finished = scope.alreadyDone + counters.completed + counters.failed
        let now = Clock.monotonicMilliseconds
        if finished >= total || now - lastExactCount >= 5000 {
            let counts = try store.counts(of: scope.documents)
            finished = (counts[.done] ?? 0) + (counts[.failed] ?? 0)
            lastExactCount = now
        }
        let elapsed = Double(now - started) / 1000
        let rate = elapsed > 0 ? Double(finished - scope.alreadyDone) / elapsed : 0
        let remaining = total - finished
        var line = "pages \(finished)/\(total)"
        let failedSoFar = (scope.initial[.failed] ?? 0) + counters.failed
        if failedSoFar > 0 { line += " (\(failedSoFar) failed)" }
        line += " | \(Format.fixed(rate, 2)) pages/s"
        if rate > 0 && remaining > 0 { line += " | ETA " + Format.duration(Double(remaining) / rate) }
        bar.show(line)
        if !Console.errorIsTerminal && now - lastPlainLine >= 10_000 {
            Console.error(line)
            lastPlainLine = now
        }
        return remaining <= 0 ? .finished : .goOn
    }
}
