import FarmCoordinator
import FarmCore
import FarmIngest
import FarmLocal
import FarmPipeline
import FarmProtocol
import FarmRuntime
import FarmStore
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

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
        // Paths that are not there at all are reported before anything is made: a mistyped folder leaves no
        // empty store (or lock file) behind.
        if !paths.isEmpty {
            let missing = paths.filter { (try? FileSystem.status($0, followLinks: false)) == nil }
            if missing.count == paths.count {
                for path in missing { Console.error("ocrfarm: \(path): no such file or folder") }
                Console.error("ocrfarm run: nothing to read")
                return .noInput
            }
        }
        let lock = try CoordinatorLocking.take(storePath)
        defer { withExtendedLifetime(lock) {} }
        let store = try Store(path: storePath)
        try store.checkSound()
        let report = paths.isEmpty ? SubmitReport() : try Submitter.submit(paths, options: submitOptions, store: store, verbose: verbose)
        // The run reads everything that is waiting: what it submitted, what it skipped as submitted before but is
        // not read yet, and whatever else was left queued in the store.
        let documents = Array(Set(report.documentIDs + report.skipped.map(\.id) + (try store.documentsWithWork()))).sorted()
        let initial = try store.counts(of: documents)
        let total = initial.values.reduce(0, +)
        if total == 0 {
            Console.error("ocrfarm run: nothing to read")
            return Submitter.exitStatus(report) == .success ? .noInput : Submitter.exitStatus(report)
        }

        let (farm, supervisor) = try startFarm()
        defer { farm.stop() }
        let logPath = storePath + ".log"
        defer { supervisor.stop() }

        let started = Clock.monotonicMilliseconds
        let alreadyDone = (initial[.done] ?? 0) + (initial[.failed] ?? 0)
        let bar = ProgressLine(enabled: Console.errorIsTerminal)
        var lastPlainLine = started
        var lastExactCount = started
        var counts = initial
        while Shutdown.requested == nil {
            // The coordinator's own counters are free to read; the store is asked only now and then, and to confirm
            // the end (another submitter may add pages to the same store meanwhile).
            let counters = farm.counters
            var finished = alreadyDone + counters.completed + counters.failed
            let now = Clock.monotonicMilliseconds
            if finished >= total || now - lastExactCount >= 5000 {
                counts = try store.counts(of: documents)
                finished = (counts[.done] ?? 0) + (counts[.failed] ?? 0)
                lastExactCount = now
            }
            let elapsed = Double(now - started) / 1000
            let rate = elapsed > 0 ? Double(finished - alreadyDone) / elapsed : 0
            let remaining = total - finished
            var line = "pages \(finished)/\(total)"
            let failedSoFar = (initial[.failed] ?? 0) + counters.failed
            if failedSoFar > 0 { line += " (\(failedSoFar) failed)" }
            line += " | \(Format.fixed(rate, 2)) pages/s"
            if rate > 0 && remaining > 0 { line += " | ETA " + Self.duration(Double(remaining) / rate) }
            bar.show(line)
            if !Console.errorIsTerminal && now - lastPlainLine >= 10_000 {
                Console.error(line)
                lastPlainLine = now
            }
            if remaining <= 0 { break }
            // A worker that dies (a crashing page, the OOM killer) is replaced; too many replacements end the run.
            do {
                try supervisor.replaceExited()
            } catch {
                bar.clear()
                throw CommandFailure(.software, "\(error); see \(logPath)")
            }
            if farm.failed { throw CommandFailure(.software, "the coordinator stopped: \(farm.failure ?? "")") }
            Clock.sleep(milliseconds: 50)
        }
        bar.clear()
        let interrupted = Shutdown.requested != nil
        var givenBack = 0
        if interrupted {
            Console.error("interrupted: finishing the pages being read (up to 5 s)…")
            // Workers first: each finishes or hands back the page in hand, and the coordinator records what they
            // send before it stops. Whatever lease is left then is nobody's (this process holds the store's
            // coordinator lock), so it goes back to the queue now rather than at the next start.
            supervisor.stop(graceMilliseconds: 8000)
            farm.stop()
            givenBack = (try? store.recoverLeases()) ?? 0
        }
        // The summary is the store's count, not the progress line's.
        counts = try store.counts(of: documents)
        let elapsed = Double(Clock.monotonicMilliseconds - started) / 1000
        let done = counts[.done] ?? 0
        let failed = counts[.failed] ?? 0
        let read = done + failed - alreadyDone
        var summary = "done \(done) of \(total) pages, \(failed) failed"
        if interrupted {
            let left = (counts[.queued] ?? 0) + (counts[.leased] ?? 0)
            summary += ", \(left) left queued" + (givenBack > 0 ? " (\(givenBack) being read given back)" : "")
        }
        Console.error(summary + ", in \(Format.fixed(elapsed, 1)) s"
                      + " (\(Format.fixed(elapsed > 0 ? Double(read) / elapsed : 0, 2)) pages/s)")
        // Pages whose script no installed language reads came out as garbage: say which package reads them.
        for (note, pages) in try store.missingLanguages(documents: documents) {
            Console.error("ocrfarm run: warning: \(pages) page\(pages == 1 ? "" : "s") in \(note.script) script, which no "
                          + "installed language reads (read with \(note.readWith)); Debian: apt-get install \(note.package), "
                          + "then ocrfarm reread (ocrfarm review lists them)")
        }
        if failed > 0 {
            let pages = try store.pages(of: documents)
            let failures = pages.filter { $0.state == .failed }
            // A page of a multi-page file is named by its page in that file (which page of the TIFF or PDF failed),
            // also when --document put several files into one document.
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
        if interrupted {
            Console.error("interrupted; the rest stays queued in \(storePath): ocrfarm run --store \(storePath) goes on")
            return ExitStatus(rawValue: 130)
        }
        // Pages that failed in an earlier run are named, but do not fail this one again: a run with nothing new
        // would otherwise exit 65 for as long as they stay (issue 36). `requeue --failed` reads them again.
        // (Pages this submit found unusable are recorded as failed before the run starts: they are this run's.)
        let failedBefore = (initial[.failed] ?? 0) - report.added.reduce(0) { $0 + $1.failedPages }
        if failedBefore > 0 {
            Console.error("ocrfarm run: \(failedBefore) page\(failedBefore == 1 ? "" : "s") failed in an earlier run; "
                          + "ocrfarm requeue --failed --store \(storePath) reads \(failedBefore == 1 ? "it" : "them") again")
        }
        return failed > failedBefore || !report.problems.isEmpty ? .dataError : .success
    }

    /// The embedded coordinator and the local worker processes (their log goes to STORE.log); `watch` starts its
    /// farm the same way.
    func startFarm() throws -> (EmbeddedFarm, WorkerSupervisor) {
        let context = try Context()
        var configuration = CoordinatorConfiguration(bind: "tcp://127.0.0.1:*", heartbeatMilliseconds: heartbeat)
        configuration.retry.maxAttempts = maxAttempts
        configuration.retry.baseDelay = retryDelay
        let farm: EmbeddedFarm
        do {
            farm = try EmbeddedFarm(storePath: storePath, context: context, configuration: configuration)
        } catch {
            throw CommandFailure(.software, error.description)
        }
        var workerArguments = ["worker", "--connect", farm.endpoint, "--slots", String(slots),
                               "--engine", engine == .none ? CorrectionOptions.noEngine : submitOptions.pageOptions.engine.rawValue,
                               "--lang", submitOptions.pageOptions.languages.joined(separator: "+"),
                               "--parent", String(getpid()), "--grace", "5", "--heartbeat", String(heartbeat)]
        workerArguments += decodeLimits
        if logLevelGiven { workerArguments += ["--log-level", Log.level.name] }
        if let logFormat { workerArguments += ["--log-format", logFormat] }
        do {
            let supervisor = try WorkerSupervisor(count: workers, executable: FileSystem.executablePath, arguments: workerArguments,
                                                  logPath: storePath + ".log", restartLimit: workers * 20)
            return (farm, supervisor)
        } catch {
            farm.stop()
            throw error
        }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        return "\(s / 3600) h \((s % 3600) / 60) min"
    }
}
