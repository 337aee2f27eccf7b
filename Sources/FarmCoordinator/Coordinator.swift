import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore
import Synchronization
import ZeroMQ

/// How a coordinator behaves.
public struct CoordinatorConfiguration: Sendable {
    /// Where workers connect, e.g. "tcp://*:5555" or "tcp://127.0.0.1:*".
    public var bind: String
    public var heartbeatMilliseconds: Int
    /// Heartbeats a worker may miss before it is declared lost and its leases go back to the queue.
    public var liveness: Int
    public var retry: RetryPolicy
    /// A lease older than this is taken back even from a live worker (a stuck page).
    public var leaseSeconds: Double
    /// Largest page a JOB carries; larger pages fail with `page-too-large`.
    public var maxPageBytes: Int
    /// Largest inbound message; ZeroMQ disconnects a peer that sends more.
    public var maxMessageBytes: Int64
    /// Messages handled per loop turn before committing (group commit).
    public var batchLimit: Int
    /// CURVE encryption and worker authentication; nil leaves the socket in clear text and open to anyone.
    public var curve: CurveServerSettings?

    public init(bind: String = "tcp://*:5555", heartbeatMilliseconds: Int = Wire.heartbeatMilliseconds,
                liveness: Int = Wire.liveness, retry: RetryPolicy = RetryPolicy(), leaseSeconds: Double = 3600,
                maxPageBytes: Int = Wire.defaultMaxPageBytes, maxMessageBytes: Int64 = Wire.maxMessageBytes,
                batchLimit: Int = 2000)
    {
        self.bind = bind
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.liveness = liveness
        self.retry = retry
        self.leaseSeconds = leaseSeconds
        self.maxPageBytes = maxPageBytes
        self.maxMessageBytes = maxMessageBytes
        self.batchLimit = batchLimit
    }
}


/// The coordinator: one thread, one ROUTER socket, one store connection, one poll loop (and, while `run` runs, a
/// thread that only checkpoints the store's write-ahead log, so no commit of the loop waits for one).
///
/// Each turn it reads every waiting message (up to `batchLimit`), turns them into store writes, leases pages to
/// workers with credit, commits all of it in one transaction, and only then sends the JOBs, so a lease is always
/// in the store before its JOB leaves. Workers that stay silent for `liveness` heartbeats lose their leases at once.
public final class Coordinator {
    public let configuration: CoordinatorConfiguration
    // Internal, not private: the coordinator's concerns are extensions in their own files (messages, workers,
    // dispatch, commit, store backoff, counters, page events), and they share this state.
    let store: Store
    let context: Context
    let socket: Socket
    private let authenticator: ZAPAuthenticator?
    /// Where every deadline and record time comes from: the system's clocks, or one a test drives.
    let time: any TimeSource
    /// The endpoint actually bound (with the port the system chose for `:*`).
    public let endpoint: String

    var workers: [WorkerID: WorkerState] = [:]
    var routes: [[UInt8]: WorkerID] = [:]
    /// With CURVE: the key each worker id first said HELLO with, for the coordinator's life. Another key claiming
    /// that id is refused (issue 18); the refused (id, key) pairs are remembered so each is logged once.
    var keys: [WorkerID: String] = [:]
    var refusedClaims: Set<String> = []
    var ready: [QueuedPage] = []
    var readyHead = 0
    var lastRefill: Int64 = 0
    /// The last refill got everything queued (fewer rows than asked for).
    var storeExhausted = false
    /// Pages are buffered but kept back from prefetch (the queue is nearly empty): no reason to poll without waiting.
    var prefetchHeld = false
    /// Parsed options by their stored text: documents share a handful of option sets.
    var optionsCache: [String: PageOptions] = [:]
    var pending: [PendingWrite] = []
    var lastLivenessCheck: Int64 = 0
    var lastExpiryCheck: Int64 = 0
    var lastCountersWrite: Int64 = 0
    /// While the store refuses writes: when to try again (0 when it accepts them).
    var storeBlockedUntil: Int64 = 0
    var storeRefusedSince: Int64 = 0
    var lastDiskFullLog: Int64 = 0
    /// The label of each attempt in flight ("scan.pdf page 3"), from its dispatch to its outcome, for the log.
    var labels: [AttemptID: String] = [:]
    /// Pages sent as their part of a multi-page file (decision 0084): when one is done, its part is forgotten and
    /// the file removed after the commit. A page dispatched by an earlier run keeps its part until its document goes.
    var partPages: Set<PageID> = []
    var counters = CoordinatorCounters()
    let shared = Mutex(CoordinatorCounters())

    /// A snapshot of the counters, safe to read from any thread.
    public var snapshot: CoordinatorCounters { shared.withLock { $0 } }

    public init(store: Store, context: Context, configuration: CoordinatorConfiguration = CoordinatorConfiguration(),
                time: any TimeSource = SystemTime()) throws
    {
        self.store = store
        self.time = time
        self.context = context
        self.configuration = configuration
        // The ZAP handler is bound before the socket, so no worker can finish a handshake unchecked.
        authenticator = try configuration.curve.map { curve throws(ZMQError) in
            try ZAPAuthenticator(context: context, authorized: curve.authorizedKeys)
        }
        socket = try Socket(context, type: .router)
        if let curve = configuration.curve {
            try socket.makeCurveServer(secretKey: curve.secretKey, domain: ZAPAuthenticator.domain)
        }
        try socket.set(.linger, 0)
        try socket.set(.routerMandatory, true)
        try socket.set(.maxMessageSize, configuration.maxMessageBytes)
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 0)
        try socket.bind(configuration.bind)
        endpoint = try socket.lastEndpoint
        if configuration.curve == nil && Self.isPublic(endpoint) {
            Log.warning("listening on a non-loopback address without encryption", ["endpoint": endpoint])
        }

        let now = time.now
        let recovered = try store.recoverLeases(now: now)
        removeStrayParts()
        // Worker ids stay bound to the keys they first came with, across restarts.
        if configuration.curve != nil { keys = try store.workerKeys() }
        try store.write {
            try store.markWorkersGone(before: now + 1)
            try store.setSetting("started_at", String(now))
            try store.setSetting("endpoint", endpoint)
            try store.setSetting("pid", String(HostInfo.pid))
            try store.recordLiveness(WorkerLiveness(heartbeatMilliseconds: configuration.heartbeatMilliseconds,
                                                    liveness: configuration.liveness))
        }
        Log.info("coordinator started", ["endpoint": endpoint, "store": store.path, "recovered_leases": String(recovered),
                                         "curve": configuration.curve.map { "on, \($0.authorizedKeys.count) authorized keys" } ?? "off"])
    }

    static func isPublic(_ endpoint: String) -> Bool {
        guard endpoint.hasPrefix("tcp://") else { return false }
        let host = endpoint.dropFirst(6).split(separator: ":").dropLast().joined(separator: ":")
        return !(host.hasPrefix("127.") || host == "[::1]" || host == "::1" || host == "localhost")
    }

    // MARK: The loop

    /// Runs until `shouldStop` returns true (checked every turn) or a shutdown signal arrives, then flushes what
    /// it accepted, says BYE to its workers and returns.
    public func run(shouldStop: () -> Bool = { false }) throws {
        // The loop commits; a thread of its own checkpoints the write-ahead log (decision 0073).
        let checkpointer = store.checkpointInBackground()
        defer { store.stopCheckpointsInBackground(checkpointer) }
        let poller = Poller()
        poller.add(socket)
        var lastTurn = Int64.min
        var storeGone: String?
        var lastStoreCheck = time.monotonicMilliseconds
        while !shouldStop() && Shutdown.requested == nil && storeGone == nil {
            let timeout = nextTimeout()
            try poller.poll(timeoutMilliseconds: timeout)
            // Group commit needs groups: woken by every message, a busy coordinator would commit a page or two at
            // a time. At most one turn per millisecond lets a millisecond of messages gather into one transaction;
            // the workers' prefetch hides the wait, and an idle farm never waits (its turns are far apart).
            if time.monotonicMilliseconds == lastTurn { time.sleep(milliseconds: 1) }
            lastTurn = time.monotonicMilliseconds
            try turn()
            if lastTurn - lastStoreCheck >= 2000 {
                lastStoreCheck = lastTurn
                storeGone = store.fileGone()
            }
        }
        if let storeGone {
            // Results accepted so far still go into the file it has open (SQLite writes through its descriptor);
            // nothing more is handed out.
            Log.error("the store file is gone: dispatch stopped", ["store": store.path, "error": storeGone])
        }
        Log.info("coordinator stopping", ["reason": storeGone != nil ? "store gone" : Shutdown.requested.map { "signal \($0)" } ?? "asked"])
        try drainMessages()
        commit(assignments: [], force: true)
        if !pending.isEmpty {
            // Their pages are still leased in the store: the next start puts them back in the queue.
            Log.error("coordinator stopping with writes the store refused; those pages will be read again",
                      ["store": store.path, "results_lost": String(heldResults), "pending_writes": String(pending.count)])
        }
        for worker in workers.values {
            send(.bye(Bye(reason: "coordinator stopping")), to: worker)
        }
        writeCounters(force: true, stopping: true)
        store.stopCheckpointsInBackground(checkpointer)
        let checkpoints = checkpointer.done
        Log.info("background checkpoints", ["count": String(checkpoints.count),
                                            "longest_ms": String(Int(checkpoints.longestMilliseconds.rounded(.up)))])
        if storeGone != nil {
            do {
                try store.checkpoint()
            } catch {
                Log.error("cannot copy the write-ahead log into the moved store", ["store": store.path, "error": "\(error)"])
            }
        }
        Log.info("coordinator stopped", ["dispatched": String(counters.dispatched), "completed": String(counters.completed)])
        if let storeGone {
            throw StoreError(storeGone + "; the coordinator stopped. Every result it accepted is in the file it had open "
                + "(at its new name if it was moved): put that file back at the store's path and start again", kind: .gone)
        }
    }

    /// One turn of the loop: read, decide, commit, send. Public for tests that drive the loop by hand.
    public func turn() throws {
        try drainMessages()
        let now = time.monotonicMilliseconds
        if now - lastLivenessCheck >= 100 {
            lastLivenessCheck = now
            checkLiveness(now: now)
            sendHeartbeats(now: now)
        }
        // Not while the store holds back writes: the same expired leases would be queued again every check. (With
        // nothing held it is safe, and needed: a coordinator whose disk is nearly full may commit nothing else.)
        if now - lastExpiryCheck >= 5000 && (storeBlockedUntil == 0 || pending.isEmpty) {
            lastExpiryCheck = now
            expireLeases()
        }
        let assignments = storeBlockedUntil > now ? [] : assign()
        commit(assignments: assignments)
        writeCounters(force: false)
    }

    func nextTimeout() -> Int {
        let anyCredit = workers.values.contains { $0.credit > 0 }
        if anyCredit && readyHead < ready.count && !prefetchHeld { return 0 }
        return min(100, configuration.heartbeatMilliseconds / 2)
    }

    func drainMessages() throws {
        var handled = 0
        // With CURVE each message comes with its connection's key (the ZAP handler's User-Id): who a worker is
        // rests on that key, not on the id it announces.
        let curve = configuration.curve != nil
        while handled < configuration.batchLimit {
            let frames: Frames, key: String?
            if curve {
                guard let received = try socket.receiveWithUserID(timeoutMilliseconds: 0) else { break }
                (frames, key) = received
            } else {
                guard let received = try socket.receive(timeoutMilliseconds: 0) else { break }
                (frames, key) = (received, nil)
            }
            handled += 1
            handle(frames, key: key)
        }
    }
}
