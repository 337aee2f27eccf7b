import Allocator
import FarmCore
import FarmPipeline
import FarmProtocol
import FarmRuntime
import Synchronization
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
    public var engine: EngineKind
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
    /// Test-only: abort the whole process on a page whose source contains this text.
    public var crashTrigger: String?
    public var limits: DecodeLimits
    /// CURVE keys for an encrypted, authenticated connection; nil connects in clear text.
    public var curve: CurveClientKeys?

    public init(connect: String, slots: Int = NativeThread.processorCount, prefetch: Int = 1, engine: EngineKind = .tesseract,
                languages: [String] = ["eng"], heartbeatMilliseconds: Int = Wire.heartbeatMilliseconds,
                liveness: Int = Wire.liveness, reconnectMinimumMilliseconds: Int = Wire.reconnectMinimumMilliseconds,
                reconnectMaximumMilliseconds: Int = Wire.reconnectMaximumMilliseconds, graceSeconds: Double = 30,
                id: WorkerID? = nil, parentPID: Int32? = nil, crashTrigger: String? = nil, limits: DecodeLimits = DecodeLimits())
    {
        self.connect = connect
        self.slots = max(1, slots)
        self.prefetch = max(0, prefetch)
        self.engine = engine
        self.languages = languages
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.liveness = liveness
        self.reconnectMinimumMilliseconds = reconnectMinimumMilliseconds
        self.reconnectMaximumMilliseconds = reconnectMaximumMilliseconds
        self.graceSeconds = graceSeconds
        self.id = id ?? WorkerID("\(HostInfo.hostname)/\(HostInfo.pid)/\(HostInfo.randomHex(6))")
        self.parentPID = parentPID
        self.crashTrigger = crashTrigger
        self.limits = limits
    }
}

/// A job handed to a slot, tagged with the connection it came on.
struct SlotJob: Sendable {
    let job: Job
    let generation: Int
}

/// A worker process: one network thread (this one) with a DEALER socket to the coordinator, and one thread per
/// page slot with its own engine. Slots send their outcomes back over an inproc socket, so the network thread
/// waits on both with one poll.
public final class Worker {
    public let configuration: WorkerConfiguration
    private let context: Context
    private let outcomes: Socket
    private let outcomesEndpoint: String
    private let jobs = BlockingQueue<SlotJob>()
    private let tracker = JobTracker()
    private var slotThreads: [NativeThread] = []
    private var dealer: Socket?
    private var generation = 0
    private var lastHeard: Int64 = 0
    private var lastSent: Int64 = 0
    private var backoff: Int
    private var unsent: [FarmProtocol.Message] = []
    /// Jobs the coordinator may still send us (credit given, not yet used).
    private var outstandingCredit = 0
    /// Recent throughput, pages per second, for sizing the prefetch.
    private var rate = PageRate()

    public init(configuration: WorkerConfiguration, context: Context) throws {
        self.configuration = configuration
        self.context = context
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
            slotThreads.forEach { $0.join() }
        }
        connect()
        let poller = Poller()
        poller.add(outcomes)
        var dealerIndex = -1
        var attachedGeneration = -1
        while Shutdown.requested == nil && !shouldStop() && parentAlive() {
            if attachedGeneration != generation, let dealer {
                dealerIndex = poller.addOrReplace(dealer, at: dealerIndex)
                attachedGeneration = generation
            }
            try poller.poll(timeoutMilliseconds: 100)
            try drainOutcomes()
            if dealerIndex >= 0 { try drainCoordinator() }
            let now = Clock.monotonicMilliseconds
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
            let configuration = self.configuration
            let endpoint = outcomesEndpoint
            let context = self.context
            let jobs = self.jobs
            let tracker = self.tracker
            slotThreads.append(NativeThread.start(name: "slot-\(index)") {
                let processor = PageProcessor(engine: configuration.engine, limits: configuration.limits)
                // With --engine none the worker measures the farm itself: no decoding either.
                processor.decodesWithoutEngine = false
                let socket: Socket
                do {
                    socket = try Socket(context, type: .push)
                    try socket.set(.linger, 1000)
                    try socket.connect(endpoint)
                    try processor.prepare(languages: configuration.languages)
                } catch {
                    ready.push("slot \(index): \(error)")
                    return
                }
                ready.push(nil)
                Slot(processor: processor, socket: socket, jobs: jobs, tracker: tracker,
                     crashTrigger: configuration.crashTrigger).run()
            })
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
                                  "engine": configuration.engine.rawValue])
    }

    // MARK: Connection

    private func connect() {
        dealer?.close()
        generation += 1
        do {
            let socket = try Socket(context, type: .dealer)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            try socket.set(.linger, 0)
            try socket.set(.maxMessageSize, Wire.maxMessageBytes)
            // A DEALER with no peer blocks on send; a coordinator that refused our CURVE handshake leaves none, so
            // a send gives up after a heartbeat (outcomes wait in `unsent`) and liveness reconnects as usual.
            try socket.set(.sendTimeout, Int32(clamping: configuration.heartbeatMilliseconds))
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.connect(configuration.connect)
            dealer = socket
        } catch {
            Log.error("cannot connect", ["endpoint": configuration.connect, "error": "\(error)"])
            dealer = nil
        }
        lastHeard = Clock.monotonicMilliseconds
        // Jobs that were waiting for a slot belong to the old connection: the coordinator takes them back.
        tracker.dropQueued()
        let held = tracker.held()
        send(.hello(Hello(worker: configuration.id, host: HostInfo.hostname, pid: HostInfo.pid, version: FarmVersion.string,
                          slots: configuration.slots, languages: configuration.languages,
                          engine: configuration.engine.rawValue, held: held)))
        outstandingCredit = 0
        topUpCredit()
        let waiting = unsent
        unsent = []
        for message in waiting { send(message) }
    }

    private func reconnect() {
        dealer?.close()
        dealer = nil
        Clock.sleep(milliseconds: backoff)
        backoff = min(backoff * 2, configuration.reconnectMaximumMilliseconds)
        connect()
    }

    @discardableResult
    private func send(_ message: FarmProtocol.Message) -> Bool {
        // Outcomes must reach the coordinator, so they wait for the next connection; credit and heartbeats are
        // recomputed on connecting, so stale ones are dropped.
        let keep: Bool
        switch message {
        case .result, .fail, .bye: keep = true
        default: keep = false
        }
        guard let dealer else {
            if keep { unsent.append(message) }
            return false
        }
        do {
            try dealer.send(FrameCodec.encode(message))
            lastSent = Clock.monotonicMilliseconds
            return true
        } catch {
            if keep { unsent.append(message) }
            return false
        }
    }

    private func drainCoordinator() throws {
        guard let dealer else { return }
        while let frames = try dealer.receive(timeoutMilliseconds: 0) {
            lastHeard = Clock.monotonicMilliseconds
            backoff = configuration.reconnectMinimumMilliseconds
            let message: FarmProtocol.Message
            do throws(ProtocolError) {
                message = try FrameCodec.decode(frames)
            } catch {
                Log.warning("dropped a malformed message from the coordinator", ["kind": error.kind, "error": error.description])
                continue
            }
            switch message {
            case .job(let job):
                outstandingCredit = max(0, outstandingCredit - 1)
                tracker.accept(job.attempt)
                jobs.push(SlotJob(job: job, generation: generation))
            case .bye(let bye):
                Log.info("coordinator said goodbye; reconnecting", ["endpoint": configuration.connect, "reason": bye.reason])
                // A coordinator that restarted (or forgot us) asks for a new HELLO; one that is stopping will be
                // back: either way we introduce ourselves again.
                reconnect()
                return
            case .heartbeat, .hello, .credit, .result, .fail, .ping, .pong:
                break
            }
        }
    }

    private func drainOutcomes() throws {
        while let frames = try outcomes.receive(timeoutMilliseconds: 0) {
            guard let message = try? FrameCodec.decode(frames) else { continue }
            switch message {
            case .result(let result): tracker.finish(result.attempt)
            case .fail(let fail): tracker.finish(fail.attempt)
            default: break
            }
            send(message)
            rate.record(Clock.monotonicMilliseconds)
        }
        if Shutdown.requested == nil { topUpCredit() }
    }

    /// Asks for as many jobs as keep the slots busy: the slots plus a prefetch that covers about 50 ms of work at
    /// the current pace (at least `prefetch`), so fast pages never wait on the network and slow ones are not hoarded.
    private func topUpCredit() {
        guard dealer != nil else { return }
        let pace = rate.pagesPerSecond(now: Clock.monotonicMilliseconds)
        let prefetch = min(2000, max(configuration.prefetch, Int(pace * 0.05)))
        let wanted = configuration.slots + prefetch - tracker.count - outstandingCredit
        // Small top-ups are batched so a busy worker sends one CREDIT per handful of results, not one each.
        guard wanted > 0, wanted >= min(8, configuration.slots + prefetch) || tracker.count + outstandingCredit == 0 else { return }
        if send(.credit(wanted)) { outstandingCredit += wanted }
    }

    private func parentAlive() -> Bool {
        guard let parent = configuration.parentPID else { return true }
        return getppid() == parent
    }

    // MARK: Shutdown

    private func shutDown() throws -> ExitStatus {
        let returned = tracker.dropQueued()
        let deadline = Clock.monotonicMilliseconds + Int64(configuration.graceSeconds * 1000)
        if tracker.count > 0 {
            Log.info("finishing pages in hand before leaving", ["pages": String(tracker.count),
                                                                 "grace_s": String(configuration.graceSeconds)])
        }
        while tracker.count > 0 && Clock.monotonicMilliseconds < deadline {
            _ = try outcomes.receive(timeoutMilliseconds: 100).map { frames in
                if let message = try? FrameCodec.decode(frames) {
                    if case .result(let r) = message { tracker.finish(r.attempt) }
                    if case .fail(let f) = message { tracker.finish(f.attempt) }
                    send(message)
                }
            }
            if let dealer, Clock.monotonicMilliseconds - lastSent >= Int64(configuration.heartbeatMilliseconds) {
                _ = try? dealer.send(FrameCodec.encode(.heartbeat))
                lastSent = Clock.monotonicMilliseconds
            }
        }
        let abandoned = tracker.count
        send(.bye(Bye(reason: abandoned > 0 ? "shutdown (grace period over)" : "shutdown", returned: returned)))
        // Give the last messages a moment to leave before the socket closes.
        try dealer?.set(.linger, 2000)
        dealer?.close()
        Log.info("worker stopped", ["returned": String(returned.count), "abandoned": String(abandoned)])
        if abandoned > 0 {
            // Slots still inside a page cannot be interrupted; leave without them.
            exit(ExitStatus.success.rawValue)
        }
        return .success
    }
}

/// Pages finished per second over the last second or so.
struct PageRate {
    private var times: [Int64] = []
    private var head = 0

    mutating func record(_ now: Int64) {
        times.append(now)
        if times.count > 4096 { times.removeFirst(times.count - 2048); head = 0 }
    }

    mutating func pagesPerSecond(now: Int64) -> Double {
        while head < times.count && now - times[head] > 1000 { head += 1 }
        if head > 1024 { times.removeFirst(head); head = 0 }
        return Double(times.count - head)
    }
}

/// Which jobs this worker holds: queued for a slot, or in a slot. Shared by the network thread and the slots.
final class JobTracker: Sendable {
    private enum Phase { case queued, started }
    private let state = Mutex<[AttemptID: Phase]>([:])

    func accept(_ attempt: AttemptID) { state.withLock { $0[attempt] = .queued } }

    /// A slot takes a job: false when the job was dropped (its connection is gone) and must be skipped.
    func start(_ attempt: AttemptID) -> Bool {
        state.withLock { jobs in
            guard jobs[attempt] == .queued else { return false }
            jobs[attempt] = .started
            return true
        }
    }

    func finish(_ attempt: AttemptID) { _ = state.withLock { $0.removeValue(forKey: attempt) } }

    /// Forgets every job not yet started and returns them.
    @discardableResult
    func dropQueued() -> [AttemptID] {
        state.withLock { jobs in
            let queued = jobs.filter { $0.value == .queued }.map(\.key)
            for attempt in queued { jobs.removeValue(forKey: attempt) }
            return queued
        }
    }

    /// Jobs in a slot right now.
    func held() -> [AttemptID] { state.withLock { $0.filter { $0.value == .started }.map(\.key) } }

    var count: Int { state.withLock { $0.count } }
}

/// One page slot: takes jobs, runs the pipeline, sends the outcome to the network thread.
struct Slot {
    let processor: PageProcessor
    let socket: Socket
    let jobs: BlockingQueue<SlotJob>
    let tracker: JobTracker
    let crashTrigger: String?

    func run() {
        while let item = jobs.pop() {
            var job = item.job
            guard tracker.start(job.attempt) else { continue }
            if let crashTrigger, !crashTrigger.isEmpty, job.source.contains(crashTrigger) {
                // Test-only poison page: die the way a crashing engine would.
                abort()
            }
            let message: FarmProtocol.Message
            let started = Clock.monotonicMilliseconds
            do throws(PageFailure) {
                let source: PageSource = job.kind == .pdf ? .pdf(job.bytes, index: job.index) : .image(job.bytes, index: job.index)
                // The encoded page is needed only until it is decoded; the processor holds the last reference.
                job.bytes = []
                // The renderings the store keeps (the processor renders none for the null engine: nothing was read).
                let page = try processor.process(source, options: job.options, outputs: job.options.outputs,
                                                 sourceName: job.source)
                let result = page.result
                message = .result(ResultMessage(
                    attempt: job.attempt, engine: processor.engineName, meanConfidence: result.meanConfidence,
                    width: result.width, height: result.height, timings: result.timings,
                    text: Array(result.text.utf8), structure: Array(result.structureJSON.rendered.utf8),
                    artifacts: page.renderings.map { ($0.format.rawValue, $0.bytes) }))
                if Log.level == .debug { Log.write(.debug, "page read", fields: Self.fields(job, since: started)) }
            } catch {
                message = .fail(FailMessage(attempt: job.attempt, failure: error))
                Log.write(.info, "page failed", fields: Self.fields(job, since: started)
                          + [("code", error.code.rawValue), ("stage", error.stage), ("error", error.message)])
            }
            _ = try? socket.send(FrameCodec.encode(message))
            // The page's buffers go back to the system between pages, not while the engine churns through them.
            if processor.engine != .none { Allocator.releaseThreadMemory() }
        }
    }

    /// A page event's fields (the worker's id comes from the log's context).
    static func fields(_ job: Job, since started: Int64) -> [(String, String)] {
        [("page", job.attempt.page.description), ("attempt", String(job.attempt.number)), ("source", job.source),
         ("duration_ms", String(Clock.monotonicMilliseconds - started))]
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
