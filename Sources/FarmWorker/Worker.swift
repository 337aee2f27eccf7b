import FarmCore
import FarmPipeline
import FarmProtocol
import FarmRuntime
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// How a worker behaves.
public struct WorkerConfiguration: Sendable {
    public var connect: String
    /// Pages recognized at once, one engine each.
    public var slots: Int
    /// Jobs taken beyond the slots, so a slot never waits on the network.
    public var prefetch: Int
    /// Whether the slots read pages (each with the engine its document names) or return empty results at once.
    public var engine: EngineKind
    /// The engine made at start for `languages` (others on first use), and the one the worker names itself by.
    public var startEngine: ReadingEngine
    /// Languages whose engine is made at start (others on first use).
    public var languages: [String]
    public var heartbeatMilliseconds: Int
    public var liveness: Int
    public var reconnectMinimumMilliseconds: Int
    public var reconnectMaximumMilliseconds: Int
    /// On SIGTERM, how long pages in hand may take to finish before the worker leaves without them.
    public var graceSeconds: Double
    public var id: WorkerID
    /// Exit when this process is no longer our parent (`ocrfarm run` started us and is gone).
    public var parentPID: Int32?
    /// Called by a slot with each job before it reads the page; nil in production. Tests set it (e.g. to make a
    /// page crash its worker the way a crashing engine would).
    public var beforePage: (@Sendable (Job) -> Void)?
    public var limits: DecodeLimits
    /// CURVE keys for an encrypted, authenticated connection; nil connects in clear text.
    public var curve: CurveClientKeys?
    /// Slots given up past a page's time limit whose threads may still be running (each keeps its engine and page
    /// until its stage ends). One more and the worker exits with `ExitStatus.tryAgain` (75) for its supervisor to
    /// start a fresh process. Default: the number of slots, at least 2 (a worker's memory at most doubles, or
    /// triples for one slot).
    public var maxStuckSlots: Int
    /// Where each slot reads its pages: in a process of its own started so (`PageProcess`: a library that runs out
    /// of memory ends that process and fails its page as `out-of-memory`, not the worker), or in the slot's thread
    /// (nil).
    public var pageProcess: PageProcessLaunch?
    /// Leave (as on SIGTERM, exit status 0) once no page has been in hand for this many seconds: a batch job
    /// (a Slurm array task) ends when the queue is empty. nil: serve until stopped.
    public var exitWhenIdleSeconds: Double?

    /// The engine the worker names itself by (HELLO, logs): "none", or the engine made at start.
    public var engineName: String { engine == .none ? EngineKind.none.rawValue : startEngine.rawValue }

    public init(connect: String, slots: Int = NativeThread.processorCount, prefetch: Int = 1, engine: EngineKind = .page,
                startEngine: ReadingEngine = .defaultChoice, languages: [String] = ["eng"], heartbeatMilliseconds: Int = Wire.heartbeatMilliseconds,
                liveness: Int = Wire.liveness, reconnectMinimumMilliseconds: Int = Wire.reconnectMinimumMilliseconds,
                reconnectMaximumMilliseconds: Int = Wire.reconnectMaximumMilliseconds, graceSeconds: Double = 30,
                id: WorkerID? = nil, parentPID: Int32? = nil, beforePage: (@Sendable (Job) -> Void)? = nil,
                limits: DecodeLimits = DecodeLimits(), maxStuckSlots: Int? = nil, exitWhenIdleSeconds: Double? = nil)
    {
        self.connect = connect
        self.slots = max(1, slots)
        self.prefetch = max(0, prefetch)
        self.engine = engine
        self.startEngine = startEngine
        self.languages = languages
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.liveness = liveness
        self.reconnectMinimumMilliseconds = reconnectMinimumMilliseconds
        self.reconnectMaximumMilliseconds = reconnectMaximumMilliseconds
        self.graceSeconds = graceSeconds
        self.id = id ?? WorkerID("\(HostInfo.hostname)/\(HostInfo.pid)/\(HostInfo.randomHex(6))")
        self.parentPID = parentPID
        self.beforePage = beforePage
        self.limits = limits
        self.maxStuckSlots = max(1, maxStuckSlots ?? max(2, self.slots))
        self.exitWhenIdleSeconds = exitWhenIdleSeconds
    }
}

/// A worker process: one network thread (this one) with a DEALER socket to the coordinator, and one thread per
/// page slot with its own engine. Slots send their outcomes back over an inproc socket, so the network thread
/// waits on both with one poll.
public final class Worker {
    public let configuration: WorkerConfiguration
    // Internal, not private: the connection's half lives in Worker+Connection.swift and shares this state.
    let context: Context
    /// Where every deadline comes from: the system's clocks, or one a test drives.
    let time: any TimeSource
    let outcomes: Socket
    private let outcomesEndpoint: String
    let jobs = BlockingQueue<SlotJob>()
    let tracker = JobTracker()
    /// The running slots' threads, by slot index (a slot given up is replaced at its index).
    private var slotThreads: [NativeThread] = []
    private var leavingStuck = false
    var dealer: Socket?
    var generation = 0
    var lastHeard: Int64 = 0
    var lastSent: Int64 = 0
    var backoff: Int
    /// Outcomes (and a BYE) encoded for the wire, waiting for a connection that takes them.
    var unsent: [[[UInt8]]] = []
    /// Jobs the coordinator may still send us (credit given, not yet used).
    var outstandingCredit = 0
    /// Recent throughput, pages per second, for sizing the prefetch.
    var rate = PageRate()
    /// When the last job arrived (monotonic ms), so --exit-when-idle sees a page that came and went between polls.
    var lastJobAt: Int64 = 0

    public init(configuration: WorkerConfiguration, context: Context, time: any TimeSource = SystemTime()) throws {
        self.configuration = configuration
        self.context = context
        self.time = time
        backoff = configuration.reconnectMinimumMilliseconds
        outcomes = try Socket(context, type: .pull)
        outcomesEndpoint = "inproc://outcomes-\(HostInfo.randomHex(12))"
        try outcomes.bind(outcomesEndpoint)
    }

    /// Starts the slots (their engines load first, so a missing language fails here), then serves the
    /// coordinator until SIGTERM/SIGINT, `shouldStop`, or the parent going away.
    public func run(shouldStop: @escaping () -> Bool = { false }) throws -> ExitStatus {
        try startSlots()
        defer {
            jobs.close()
            // Leaving over stuck slots: their threads may never end, so none is waited for.
            if !leavingStuck { slotThreads.forEach { $0.join() } }
        }
        connect()
        let poller = Poller()
        poller.add(outcomes)
        var dealerIndex = -1
        var attachedGeneration = -1
        // When a page was last in hand (or the worker started), for --exit-when-idle.
        var lastBusy = time.monotonicMilliseconds
        while Shutdown.requested == nil && !shouldStop() && parentAlive() {
            if attachedGeneration != generation, let dealer {
                dealerIndex = poller.addOrReplace(dealer, at: dealerIndex)
                attachedGeneration = generation
            }
            try poller.poll(timeoutMilliseconds: 100)
            try drainOutcomes()
            if let status = watchSlots() { return status }
            if dealerIndex >= 0 { try drainCoordinator() }
            let now = time.monotonicMilliseconds
            if tracker.count > 0 || lastJobAt > lastBusy { lastBusy = now }
            if let idle = configuration.exitWhenIdleSeconds, now - lastBusy >= Int64(idle * 1000) {
                Log.info("no page in hand for the idle limit; leaving", ["idle_s": String(idle)])
                break
            }
            if now - lastHeard > Int64(configuration.heartbeatMilliseconds * configuration.liveness) {
                Log.warning("coordinator silent; reconnecting", ["endpoint": configuration.connect,
                                                                 "backoff_ms": String(backoff)])
                reconnect()
                continue
            }
            if now - lastSent >= Int64(configuration.heartbeatMilliseconds) { send(.heartbeat) }
        }
        return try shutDown()
    }

    // MARK: Slots

    private func startSlots() throws {
        let ready = BlockingQueue<String?>()
        for index in 0..<configuration.slots {
            slotThreads.append(startSlot(index) { ready.push($0) })
        }
        var problems: [String] = []
        for _ in 0..<configuration.slots {
            if let problem = ready.pop() ?? nil { problems.append(problem) }
        }
        guard problems.isEmpty else {
            jobs.close()
            slotThreads.forEach { $0.join() }
            slotThreads = []
            throw WorkerError(problems.joined(separator: "; "))
        }
        Log.info("worker ready", ["worker": configuration.id.rawValue, "slots": String(configuration.slots),
                                  "engine": configuration.engineName])
    }

    /// Starts slot `index` on a new thread with its own engine; `ready` is called on that thread with nil once the
    /// engine is loaded, or with what went wrong.
    private func startSlot(_ index: Int, ready: @escaping @Sendable (String?) -> Void) -> NativeThread {
        let configuration = self.configuration
        let endpoint = outcomesEndpoint
        let context = self.context
        let jobs = self.jobs
        let tracker = self.tracker
        let time = self.time
        return NativeThread.start(name: "slot-\(index)") {
            let end: Slot.End
            do {
                // The engine, the socket and the page live in this scope, so a slot given up frees them as it ends.
                let processor = PageProcessor(engine: configuration.engine, limits: configuration.limits)
                // With --engine none the worker measures the farm itself: no decoding either.
                processor.decodesWithoutEngine = false
                let socket: Socket
                // With page processes the engines load there, not in this process.
                let pageProcess = configuration.engine == .none ? nil : configuration.pageProcess.map(PageProcess.init(launch:))
                do {
                    socket = try Socket(context, type: .push)
                    try socket.set(.linger, 1000)
                    try socket.connect(endpoint)
                    if let pageProcess {
                        try pageProcess.start()
                    } else {
                        try processor.prepare(languages: configuration.languages, engine: configuration.startEngine)
                    }
                } catch {
                    ready("slot \(index): \(error)")
                    return
                }
                ready(nil)
                end = Slot(index: index, processor: processor, socket: socket, jobs: jobs, tracker: tracker, time: time,
                           pageProcess: pageProcess, beforePage: configuration.beforePage).run()
            }
            if end == .givenUp { tracker.givenUpSlotEnded() }
        }
    }

    /// The watchdog: every page held past its deadline is failed with `timeout` at once and its slot replaced by a
    /// new one (a slot cannot be interrupted inside a stage; its thread runs on, given up, and ends on its own).
    /// Returns the exit status when too many given-up slots are still running.
    private func watchSlots() -> ExitStatus? {
        let expired = tracker.expire(now: time.monotonicMilliseconds)
        guard !expired.isEmpty else { return nil }
        var stuck = 0
        for page in expired {
            let failure = PageWatchdog.failure(heldMilliseconds: page.heldMilliseconds, limitMilliseconds: page.limitMilliseconds)
            send(.fail(FailMessage(attempt: page.attempt, failure: failure)))
            stuck = tracker.slotGivenUp()
            Log.warning("page timed out in a stage that cannot be stopped; slot given up and replaced", [
                "page": page.attempt.page.description, "attempt": String(page.attempt.number), "slot": String(page.slot),
                "held_ms": String(page.heldMilliseconds), "limit_ms": String(page.limitMilliseconds),
                "stuck_slots": String(stuck)])
        }
        guard stuck <= configuration.maxStuckSlots else { return leaveStuck(stuck) }
        for page in expired {
            // The old thread is not waited for: it ends when its stage does, and nobody joins it.
            slotThreads[page.slot].detach()
            // Credit for the new slot waits until its engine is loaded. A failure to load it (the same languages
            // loaded at start) is only logged: the worker goes on with one slot fewer.
            tracker.replacementStarting()
            let tracker = self.tracker
            slotThreads[page.slot] = startSlot(page.slot) { problem in
                if let problem {
                    Log.error("cannot replace a slot given up", ["error": problem])
                } else {
                    tracker.replacementReady()
                }
            }
        }
        topUpCredit()
        return nil
    }

    /// More given-up slots are still running than allowed: hand back the jobs no slot started, say goodbye (the
    /// coordinator counts the pages in the other slots as lost and requeues them) and leave at once, without
    /// waiting for threads that may never end.
    private func leaveStuck(_ stuck: Int) -> ExitStatus {
        // Outcomes the other slots finished are passed on first, so their pages are not lost.
        while let frames = try? outcomes.receive(timeoutMilliseconds: 0) { forward(frames) }
        let returned = tracker.dropQueued()
        Log.error("too many slots stuck in pages past their time limit; exiting for a fresh worker", [
            "stuck_slots": String(stuck), "max_stuck": String(configuration.maxStuckSlots),
            "exit_status": String(ExitStatus.tryAgain.rawValue)])
        send(.bye(Bye(reason: "\(stuck) slots stuck past their pages' time limit", returned: returned)))
        // The process exits without terminating the ZeroMQ context (the stuck slots' sockets keep it open), so the
        // socket's linger does not apply: the FAILs and the BYE get a moment to leave first. Without it they were
        // lost and the coordinator counted the pages as `worker-lost` after the liveness window.
        time.sleep(milliseconds: Self.lastWordsMilliseconds)
        dealer?.close()
        dealer = nil
        leavingStuck = true
        return .tryAgain
    }

    // MARK: Shutdown

    /// How long the last messages get to leave when the process exits without closing the ZeroMQ context.
    static let lastWordsMilliseconds = 500

    private func shutDown() throws -> ExitStatus {
        let returned = tracker.dropQueued()
        let deadline = time.monotonicMilliseconds + Int64(configuration.graceSeconds * 1000)
        if tracker.count > 0 {
            Log.info("finishing pages in hand before leaving", ["pages": String(tracker.count),
                                                                 "grace_s": String(configuration.graceSeconds)])
        }
        while tracker.count > 0 && time.monotonicMilliseconds < deadline {
            if let frames = try outcomes.receive(timeoutMilliseconds: 100) { forward(frames) }
            if let dealer, time.monotonicMilliseconds - lastSent >= Int64(configuration.heartbeatMilliseconds) {
                _ = try? dealer.send(FrameCodec.encode(.heartbeat))
                lastSent = time.monotonicMilliseconds
            }
        }
        let abandoned = tracker.count
        send(.bye(Bye(reason: abandoned > 0 ? "shutdown (grace period over)" : "shutdown", returned: returned)))
        // Give the last messages a moment to leave before the socket closes.
        try dealer?.set(.linger, 2000)
        dealer?.close()
        Log.info("worker stopped", ["returned": String(returned.count), "abandoned": String(abandoned)])
        if abandoned > 0 {
            // Slots still inside a page cannot be interrupted; leave without them (exit skips the linger).
            time.sleep(milliseconds: Self.lastWordsMilliseconds)
            exit(ExitStatus.success.rawValue)
        }
        return .success
    }
}

public struct WorkerError: Error, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Poller {
    /// Adds `socket`, or replaces the socket at `index` when it is valid.
    func addOrReplace(_ socket: Socket, at index: Int) -> Int {
        if index >= 0 {
            replace(at: index, with: socket)
            return index
        }
        return add(socket)
    }
}
