import Allocator
import FarmCoordinator
import FarmCore
import FarmPipeline
import FarmProtocol
import FarmRuntime
import FarmStore
import FarmWeb
import FarmWorker
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Logging options shared by long-running commands.
enum LogOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("--log-level", value: "LEVEL", "debug, info, warn or error (default: info)."),
        OptionSpec("--log-format", value: "FORMAT", "logfmt or json (default: logfmt)."),
    ]

    static func apply(_ arguments: ParsedArguments, role: String) throws(UsageError) {
        let level = try arguments.choice("--log-level", ["debug", "info", "warn", "warning", "error"]).flatMap { Log.Level(name: $0) }
        let format = try arguments.choice("--log-format", ["logfmt", "json"]).flatMap { Log.Format(rawValue: $0) }
        Log.configure(level: level, format: format, role: role)
    }
}

/// `ocrfarm coordinator`: hand out pages to workers and gather results, until SIGTERM.
struct CoordinatorCommand: Command {
    static let name = "coordinator"
    static let abstract = "Serve the queue to workers over ZeroMQ and record their results in the store."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--bind", value: "ENDPOINT", "Where workers connect (default: tcp://*:5555)."),
        OptionSpec("--max-attempts", value: "N", "Tries before a page fails for good (default: 3)."),
        OptionSpec("--heartbeat", value: "MS", "Heartbeat interval in milliseconds (default: 1000; a worker silent for 3 is lost)."),
        OptionSpec("--lease-timeout", value: "SECONDS", "Take a page back from a live worker after this long (default: 3600)."),
        OptionSpec("--max-page-bytes", value: "N", "Largest page file a job carries (default: 67108864)."),
        OptionSpec("--retry-delay", value: "SECONDS", "Wait before the first retry; doubles with each retry (default: 1)."),
        OptionSpec("--metrics-listen", value: "ADDR",
                   "Serve `status --prometheus` over HTTP at http://ADDR/metrics, e.g. 127.0.0.1:9464 (default: off)."),
        OptionSpec("--curve-secret", value: "FILE", "Encrypt with CURVE using this secret key from `ocrfarm keygen` (mode 0600)."),
        OptionSpec("--authorized-workers", value: "DIR", "With --curve-secret: let in only workers whose key is in DIR/*.pub."),
        OptionSpec("--http", value: "ADDR", "Also serve the HTTP API of `ocrfarm serve` at ADDR, e.g. 127.0.0.1:8080 (default: off)."),
    ] + WebServeOptions.specs + LogOptions.specs
    static let discussion = """
    The coordinator runs one poll loop: a lease is written to the store before its job leaves, results are
    committed in batches, and a worker that misses three heartbeats loses its leases at once. Pages submitted or
    requeued while it runs are picked up without a restart. SIGTERM or SIGINT stops dispatching, flushes and exits.

    --metrics-listen answers GET /metrics (404 for other paths) on its own threads (libmicrohttpd) with a read-only
    store connection per scrape; idle connections are closed after 2 s and never delay a scrape, so a slow scraper
    never holds up the poll loop. It has no authentication: keep it on loopback or a private network.

    At start the store is checked (SQLite's quick_check): a damaged store is refused with exit 76, before any page
    is leased. A full disk exits 74. One coordinator per store: it holds STORE-lock for its life, and a second
    coordinator (or `run`) on the same store exits 75 naming the first (host, pid, since); the lock of a coordinator
    that died is taken over, and the log says so.

    With --curve-secret and --authorized-workers every connection is encrypted and a worker whose public key is not
    in DIR fails its handshake: it never gets a page, and its key is logged once. The keys are read at start.
    Without CURVE, binding an address other than loopback prints a warning.

    Exit status: 0 stopped by SIGTERM or SIGINT; 64 bad usage; 66 no store, or not an ocrfarm store; 69 the address
    cannot be bound; 73 the store cannot be made or written; 74 the disk is full or the store was moved or deleted; 75 another coordinator serves the store;
    76 the store is damaged; 78 a bad key file.
    """

    let storePath: String
    let configuration: CoordinatorConfiguration
    let metricsListen: String?
    let curveSecret: String?
    let authorizedWorkers: String?
    let http: String?
    let web: WebOptions
    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "coordinator takes no arguments") }
        http = arguments.string("--http")
        web = try WebServeOptions.options(arguments)
        self.arguments = arguments
        metricsListen = arguments.string("--metrics-listen")
        if let address = metricsListen {
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
                  (0...65535).contains(port)
            else { throw UsageError(message: "--metrics-listen takes HOST:PORT, e.g. 127.0.0.1:9464, not '\(address)'") }
        }
        curveSecret = arguments.string("--curve-secret")
        authorizedWorkers = arguments.string("--authorized-workers")
        guard (curveSecret == nil) == (authorizedWorkers == nil) else {
            throw UsageError(message: "--curve-secret and --authorized-workers go together")
        }
        try LogOptions.apply(arguments, role: "coordinator")
        storePath = StoreOption.path(arguments)
        var configuration = CoordinatorConfiguration(bind: arguments.string("--bind") ?? "tcp://*:5555")
        configuration.retry.maxAttempts = try arguments.int("--max-attempts", range: 1...100) ?? 3
        configuration.heartbeatMilliseconds = try arguments.int("--heartbeat", range: 50...60_000) ?? Wire.heartbeatMilliseconds
        configuration.leaseSeconds = try arguments.double("--lease-timeout", range: 1...604_800) ?? 3600
        configuration.maxPageBytes = try arguments.int("--max-page-bytes", range: 1024...Int(Wire.maxMessageBytes / 2))
            ?? Wire.defaultMaxPageBytes
        configuration.retry.baseDelay = try arguments.double("--retry-delay", range: 0...86_400) ?? 1
        self.configuration = configuration
    }

    /// The end-to-end tests' poison page: with OCRFARM_TEST_CRASH_ON set, a page whose source contains its text
    /// aborts the worker the way a crashing engine would. Only this command reads the variable; the worker library
    /// just runs the hook it is given.
    static func crashHook(trigger: String?) -> (@Sendable (Job) -> Void)? {
        guard let trigger, !trigger.isEmpty else { return nil }
        return { job in if job.source.contains(trigger) { abort() } }
    }

    func run() throws -> ExitStatus {
        Shutdown.install()
        var configuration = configuration
        if let curveSecret, let authorizedWorkers {
            configuration.curve = CurveServerSettings(secretKey: try CurveKeyFiles.secret(curveSecret).secretKey,
                                                      authorizedKeys: try CurveKeyFiles.authorized(authorizedWorkers))
        }
        // One coordinator per store, taken before the store's leases are: a second one exits naming the first.
        let lock = try CoordinatorLocking.take(storePath)
        defer { withExtendedLifetime(lock) {} }
        let store = try Store(path: storePath)
        // A damaged store is refused before any lease is given out (exit 76), not discovered page by page.
        try store.checkSound()
        // Metrics first: a port that cannot be had stops the command before the coordinator takes over the store.
        var metrics: MetricsServer?
        if let metricsListen {
            let path = storePath
            do {
                // Stage durations as histograms that only grow, over every result since the coordinator started.
                let histograms = StageHistograms()
                metrics = try MetricsServer(listen: metricsListen) {
                    // Its own read-only connection per scrape, on the server's thread: never the loop's.
                    let reader = try Store(path: path, readOnly: true)
                    try histograms.update(from: reader)
                    return try reader.report().prometheus(histograms: histograms)
                }
            } catch {
                throw CommandFailure(.unavailable, error.message)
            }
        }
        defer { metrics?.stop() }
        // The HTTP API and the webhook on their own threads, reading the store read-only: the loop never waits.
        let webhook = http == nil ? nil : try WebServeOptions.webhook(arguments, storePath: storePath)
        defer { webhook?.stop() }
        let web = try http.map { try WebServeOptions.server(listen: $0, storePath: storePath, options: self.web, webhook: webhook) }
        defer { web?.stop() }
        if let web { Log.info("serving the HTTP API", ["url": "http://\(web.address)/"]) }
        let context = try Context()
        let coordinator: Coordinator
        do {
            coordinator = try Coordinator(store: store, context: context, configuration: configuration)
        } catch let error as ZMQError {
            throw CommandFailure(.unavailable, "cannot listen on \(configuration.bind): \(error.message)")
        }
        if let metrics { Log.info("serving metrics", ["url": "http://\(metrics.address)/metrics"]) }
        try coordinator.run()
        return .success
    }
}

/// The store's coordinator lock for `coordinator` and `run`.
enum CoordinatorLocking {
    /// Takes the lock of the store at `path`; a live holder ends the command with 75 and its host, pid and start.
    static func take(_ path: String) throws -> CoordinatorLock {
        let lock: CoordinatorLock
        do {
            lock = try CoordinatorLock(store: path, holder: .init(host: HostInfo.hostname, pid: HostInfo.pid, since: Clock.now))
        } catch let error as CoordinatorLock.Held {
            throw CommandFailure(.tryAgain, error.description)
        }
        if let previous = lock.previous {
            Log.warning("took over the store's lock from a coordinator that is gone", [
                "store": path, "host": previous.host, "pid": String(previous.pid), "since": Clock.iso8601(previous.since),
            ])
        }
        return lock
    }
}

/// `ocrfarm worker`: read pages for a coordinator.
struct WorkerCommand: Command {
    static let name = "worker"
    static let abstract = "Read pages for a coordinator: one engine per slot, reconnecting when it goes away."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--connect", value: "ENDPOINT", "The coordinator (default: tcp://127.0.0.1:5555)."),
        OptionSpec("--slots", value: "N", "Pages read at once, one engine each (default: the number of cores)."),
        OptionSpec("--prefetch", value: "N", "Jobs held beyond the slots so a slot never waits (default: 1)."),
        OptionSpec("--engine", value: "ENGINE",
                   "The engine loaded at start: auto (default), tesseract or neural (each page is read by the engine its document names); none returns empty results at once, to measure the farm itself."),
        OptionSpec("--lang", value: "LANGS", "Languages whose engines load at start (default: eng)."),
        OptionSpec("--grace", value: "SECONDS", "On SIGTERM, time to finish pages in hand (default: 30)."),
        OptionSpec("--exit-when-idle", value: "SECONDS", "Leave, exit status 0, once no page has been in hand this long (default: never)."),
    ] + DecodeLimitOptions.specs + [
        OptionSpec("--heartbeat", value: "MS", "Heartbeat interval in milliseconds; match the coordinator's (default: 1000)."),
        OptionSpec("--max-stuck", value: "N", "Slots stuck past a page's time limit before the worker exits with 75 (default: --slots, at least 2)."),
    ] + CurveClientOptions.specs(secretHelp: "Encrypt with CURVE using this worker's secret key (mode 0600).") + [
        OptionSpec("--parent", value: "PID", hidden: true, "Exit when this process is no longer the parent."),
        OptionSpec("--page-reader", hidden: true, "Read the pages of one slot of a worker (PageProcess), on descriptors 3 and 4."),
        OptionSpec("--worker-id", value: "ID", hidden: true, "The worker this page process reads for, in its log lines."),
    ] + LogOptions.specs
    static let discussion = """
    Pages arrive with their bytes, so workers need no shared disk. If the coordinator goes silent, the worker
    reconnects with a backoff from 1 s doubling to 32 s; pages in progress are finished and reported on the new
    connection. SIGTERM finishes the pages in hand within the grace period and gives the rest back.

    --exit-when-idle SECONDS makes a batch worker (a Slurm array task) end on its own when the queue is empty:
    once it has held no page for SECONDS (counted from its start, and whether or not the coordinator answers)
    it says goodbye and exits 0. Make it longer than a coordinator restart takes.

    With --curve-secret and --coordinator-key the connection is encrypted; a coordinator that does not know this
    worker's public key refuses the handshake, and the worker keeps retrying without getting pages.

    A page's --timeout covers its whole stay in a slot. A page still in a stage that cannot be stopped 0.3 s after
    its limit fails with `timeout` at once; its slot is given up (its thread ends when the stage does) and a new
    slot with a new engine takes its place. When more than --max-stuck given-up slots are still running, the
    worker exits with status 75 so that its supervisor (systemd, `ocrfarm run`) starts a fresh one; the
    coordinator requeues the pages it held.

    The neural engine (--engine neural or auto, or pages whose documents ask for it) is looked for in
    OCRFARM_NEURAL_DIR when set, else /usr/local/lib/ocrfarm/neural, then ~/.local/share/ocrfarm/neural, as
    Scripts/install-neural installs it; `ocrfarm version` says where it was found. The segment stage runs the
    project's document mask from the same folder on colour photos (a slot loads it on the first such photo);
    OCRFARM_DOCUMENT_MASK=off leaves the detector alone, and `ocrfarm version` names the mask in use.

    Exit status: 0 stopped by SIGTERM or SIGINT (or its parent is gone, or it was idle for --exit-when-idle);
    64 bad usage; 69 the engine or a language cannot be loaded, or the coordinator's address is bad; 75 too many
    slots stuck past the page timeout (start it again); 78 a bad key file.

    Each slot reads its pages in a process of its own, started with the worker and again after a page ended it: a
    page whose decoding or recognition runs out of memory (a library's failed allocation, or the kernel's OOM killer
    at a cgroup limit) fails as `out-of-memory`, logged, and the worker and its other pages go on. The page memory
    budget (--page-memory) is fitted to the memory limits the page process finds (RLIMIT_AS, the cgroup's
    memory.max) unless --page-memory is given, so a page too large for them is refused before it is decoded.
    """

    let configuration: WorkerConfiguration
    let curve: CurveClientOptions
    /// Set in the process a worker starts for one slot's pages (`--page-reader`).
    let pageReader: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "worker takes no arguments") }
        curve = try CurveClientOptions(arguments)
        try LogOptions.apply(arguments, role: "worker")
        let startEngine = try CorrectionOptions.engine(arguments, allowingNone: true)
        let engine = CorrectionOptions.slotEngine(arguments)
        let languages = (arguments.string("--lang") ?? "eng").split(separator: "+").map(String.init)
        var configuration = WorkerConfiguration(
            connect: arguments.string("--connect") ?? "tcp://127.0.0.1:5555",
            slots: try arguments.int("--slots", range: 1...256) ?? NativeThread.processorCount,
            prefetch: try arguments.int("--prefetch", range: 0...1000) ?? 1,
            engine: engine, startEngine: startEngine ?? .defaultChoice, languages: languages,
            heartbeatMilliseconds: try arguments.int("--heartbeat", range: 50...60_000) ?? Wire.heartbeatMilliseconds,
            graceSeconds: try arguments.double("--grace", range: 0...86_400) ?? 30,
            parentPID: try arguments.int("--parent", range: 1...Int(Int32.max)).map { Int32($0) },
            beforePage: Self.testHook(crashOn: ProcessEnvironment.current["OCRFARM_TEST_CRASH_ON"],
                                      stallOn: ProcessEnvironment.current["OCRFARM_TEST_STALL_ON"]),
            limits: try DecodeLimitOptions.limits(arguments),
            maxStuckSlots: try arguments.int("--max-stuck", range: 1...1024),
            exitWhenIdleSeconds: try arguments.double("--exit-when-idle", range: 0.1...31_536_000))
        pageReader = arguments.flag("--page-reader")
        if pageReader, let id = arguments.string("--worker-id") { configuration.id = WorkerID(id) }
        if !pageReader && engine != .none {
            configuration.pageProcess = PageProcessLaunch(
                executable: Self.executable,
                arguments: Array(CommandLine.arguments.dropFirst()) + ["--page-reader", "--worker-id", configuration.id.rawValue])
        }
        // Every line this worker logs names it, so logs of many workers can be merged and still be told apart.
        Log.configure(context: ["worker": configuration.id.rawValue])
        self.configuration = configuration
    }

    /// This program's path (`/proc/self/exe`), for the page processes.
    static var executable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The page process of one slot: loads the engine, fits the page budget to the memory limits it finds, then
    /// reads the pages the worker hands it until the worker closes the pipe.
    func readPages() throws -> ExitStatus {
        let processor = PageProcessor(engine: configuration.engine, limits: configuration.limits)
        try processor.prepare(languages: configuration.languages, engine: configuration.startEngine)
        let memory = MemoryLimits.current()
        // The cgroup's room is not divided by the slots: one large page at a time may have it (as the default budget
        // assumed of a pod). Two at once may still exceed it; the OOM killer then ends the page process holding the
        // larger, whose page fails as out-of-memory, and the worker goes on.
        processor.limits = configuration.limits.fitted(to: memory, cgroupShares: 1)
        if processor.limits.pageMemory != configuration.limits.pageMemory {
            Log.info("page memory budget fitted to the memory limits", [
                "budget_mb": String((processor.limits.pageMemory + 999_999) / 1_000_000), "limits": memory.description])
        }
        return PageReader.serve(processor: processor)
    }

    /// The end-to-end tests' poison and stuck pages. With OCRFARM_TEST_CRASH_ON set, a page whose source contains
    /// its text aborts the worker the way a crashing engine would. With OCRFARM_TEST_STALL_ON set, such a page holds
    /// its slot for `stallSeconds` before it is read, the way a stage that cannot be interrupted would (the deadline
    /// counts from the slot taking the page, so this is inside it). Only this command reads the variables; the
    /// worker library just runs the hook it is given.
    static func testHook(crashOn: String?, stallOn: String?) -> (@Sendable (Job) -> Void)? {
        let crash = crashOn.flatMap { $0.isEmpty ? nil : $0 }
        let stall = stallOn.flatMap { $0.isEmpty ? nil : $0 }
        guard crash != nil || stall != nil else { return nil }
        return { job in
            if let crash, job.source.contains(crash) { abort() }
            if let stall, job.source.contains(stall) { Clock.sleep(milliseconds: stallSeconds * 1000) }
        }
    }

    static let stallSeconds = 20

    func run() throws -> ExitStatus {
        if pageReader { return try readPages() }
        if pageReader { return try readPages() }
        Shutdown.install()
        var configuration = configuration
        configuration.curve = try curve.keys()
        if configuration.engine == .page { try EngineCheck.engine(configuration.startEngine, languages: configuration.languages) }
        let worker = try Worker(configuration: configuration, context: try Context())
        do {
            return try worker.run()
        } catch let error as WorkerError {
            throw CommandFailure(.unavailable, error.message)
        }
    }
}
