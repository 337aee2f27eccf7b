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
    /// Called by a slot with each job before it reads the page; nil in production. Tests set it (e.g. to make a
    /// page crash its worker the way a crashing engine would).
    public var beforePage: (@Sendable (Job) -> Void)?
    public var limits: DecodeLimits
    /// CURVE keys for an encrypted, authenticated connection; nil connects in clear text.
    public var curve: CurveClientKeys?

    public init(connect: String, slots: Int = NativeThread.processorCount, prefetch: Int = 1, engine: EngineKind = .tesseract,
                languages: [String] = ["eng"], heartbeatMilliseconds: Int = Wire.heartbeatMilliseconds,
                liveness: Int = Wire.liveness, reconnectMinimumMilliseconds: Int = Wire.reconnectMinimumMilliseconds,
                reconnectMaximumMilliseconds: Int = Wire.reconnectMaximumMilliseconds, graceSeconds: Double = 30,
                id: WorkerID? = nil, parentPID: Int32? = nil, beforePage: (@Sendable (Job) -> Void)? = nil,
                limits: DecodeLimits = DecodeLimits())
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
        self.beforePage = beforePage
        self.limits = limits
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
    private var slotThreads: [NativeThread] = []
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
            let now = time.monotonicMilliseconds
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
                     beforePage: configuration.beforePage).run()
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

    // MARK: Shutdown

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
            // Slots still inside a page cannot be interrupted; leave without them.
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
