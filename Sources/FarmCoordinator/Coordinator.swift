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

/// Counters a coordinator keeps while it runs (also written to the store for `status`).
public struct CoordinatorCounters: Sendable, Equatable {
    public var dispatched = 0
    public var completed = 0
    public var failed = 0
    public var retried = 0
    public var superseded = 0
    public var workersLost = 0
    public var malformed: [String: Int] = [:]
    public var storeErrors = 0
    public var diskFull = false

    public var malformedTotal: Int { malformed.values.reduce(0, +) }

    public init() {}
}

/// The coordinator: one thread, one ROUTER socket, one store connection, one poll loop.
///
/// Each turn it reads every waiting message (up to `batchLimit`), turns them into store writes, leases pages to
/// workers with credit, commits all of it in one transaction, and only then sends the JOBs, so a lease is always
/// in the store before its JOB leaves. Workers that stay silent for `liveness` heartbeats lose their leases at once.
public final class Coordinator {
    public let configuration: CoordinatorConfiguration
    private let store: Store
    private let context: Context
    private let socket: Socket
    private let authenticator: ZAPAuthenticator?
    /// The endpoint actually bound (with the port the system chose for `:*`).
    public let endpoint: String

    private var workers: [WorkerID: WorkerState] = [:]
    private var routes: [[UInt8]: WorkerID] = [:]
    private var ready: [QueuedPage] = []
    private var readyHead = 0
    private var lastRefill: Int64 = 0
    /// The last refill got everything queued (fewer rows than asked for).
    private var storeExhausted = false
    /// Pages are buffered but kept back from prefetch (the queue is nearly empty): no reason to poll without waiting.
    private var prefetchHeld = false
    /// Parsed options by their stored text: documents share a handful of option sets.
    private var optionsCache: [String: PageOptions] = [:]
    private var pending: [PendingWrite] = []
    private var lastLivenessCheck: Int64 = 0
    private var lastExpiryCheck: Int64 = 0
    private var lastCountersWrite: Int64 = 0
    /// While the store refuses writes: when to try again (0 when it accepts them).
    private var storeBlockedUntil: Int64 = 0
    private var storeRefusedSince: Int64 = 0
    private var lastDiskFullLog: Int64 = 0
    /// The label of each attempt in flight ("scan.pdf page 3"), from its dispatch to its outcome, for the log.
    private var labels: [AttemptID: String] = [:]
    private var counters = CoordinatorCounters()
    private let shared = Mutex(CoordinatorCounters())

    /// A snapshot of the counters, safe to read from any thread.
    public var snapshot: CoordinatorCounters { shared.withLock { $0 } }

    public init(store: Store, context: Context, configuration: CoordinatorConfiguration = CoordinatorConfiguration()) throws {
        self.store = store
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

        let now = Clock.now
        let recovered = try store.recoverLeases(now: now)
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
        let poller = Poller()
        poller.add(socket)
        while !shouldStop() && Shutdown.requested == nil {
            let timeout = nextTimeout()
            try poller.poll(timeoutMilliseconds: timeout)
            try turn()
        }
        Log.info("coordinator stopping", ["reason": Shutdown.requested.map { "signal \($0)" } ?? "asked"])
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
        Log.info("coordinator stopped", ["dispatched": String(counters.dispatched), "completed": String(counters.completed)])
    }

    /// One turn of the loop: read, decide, commit, send. Public for tests that drive the loop by hand.
    public func turn() throws {
        try drainMessages()
        let now = Clock.monotonicMilliseconds
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

    private func nextTimeout() -> Int {
        let anyCredit = workers.values.contains { $0.credit > 0 }
        if anyCredit && readyHead < ready.count && !prefetchHeld { return 0 }
        return min(100, configuration.heartbeatMilliseconds / 2)
    }

    private func drainMessages() throws {
        var handled = 0
        while handled < configuration.batchLimit, let frames = try socket.receive(timeoutMilliseconds: 0) {
            handled += 1
            handle(frames)
        }
    }

    // MARK: Messages

    private func handle(_ frames: [[UInt8]]) {
        guard frames.count >= 2 else {
            countMalformed("no-routing-id", detail: "a message without sender")
            return
        }
        let route = frames[0]
        let message: FarmProtocol.Message
        do throws(ProtocolError) {
            message = try FrameCodec.decode(frames[1...])
            if case .job = message { throw ProtocolError.unknownCommand("JOB from a worker") }
            if case .pong = message { throw ProtocolError.unknownCommand("PONG from a peer") }
        } catch {
            countMalformed(error.kind, detail: error.description)
            return
        }
        if case .ping(let probe) = message {
            // A health probe: answered from the loop, so a hung loop fails it; the sender never becomes a worker.
            _ = try? socket.send([route] + FrameCodec.encode(.pong(Probe(nonce: probe.nonce, version: FarmVersion.string))))
            return
        }
        let now = Clock.monotonicMilliseconds
        if case .hello(let hello) = message {
            join(hello, route: route, now: now)
            return
        }
        guard let id = routes[route], let worker = workers[id] else {
            // A worker we do not know (we restarted, or it was declared lost): it must introduce itself again.
            _ = try? socket.send([route] + FrameCodec.encode(.bye(Bye(reason: "unknown worker; send HELLO"))))
            return
        }
        worker.lastHeard = now
        worker.lastSeenWall = Clock.now
        switch message {
        case .credit(let n):
            worker.credit = min(worker.credit + n, 1_000_000)
        case .result(let result):
            let lease = take(result.attempt)
            let output = PageOutput(engine: result.engine, text: String(decoding: result.text, as: UTF8.self),
                                    meanConfidence: result.meanConfidence, width: result.width, height: result.height,
                                    structure: result.structure,
                                    timings: JSON.object(result.timings.map { ($0.stage, .rounded($0.milliseconds, places: 1)) }).rendered,
                                    artifacts: result.artifacts)
            pending.append(.result(result.attempt, worker: id, output: output, startedAt: lease?.startedAt))
        case .fail(let fail):
            let lease = take(fail.attempt)
            pending.append(.failure(fail.attempt, worker: id, failure: fail.failure, startedAt: lease?.startedAt,
                                    outcome: "failed"))
        case .heartbeat:
            break
        case .bye(let bye):
            leave(worker, reason: bye.reason, returned: Set(bye.returned))
        case .hello, .job, .ping, .pong:
            break
        }
    }

    private func join(_ hello: Hello, route: [UInt8], now: Int64) {
        let worker: WorkerState
        if let existing = workers[hello.worker] {
            // The same worker on a new connection: keep the leases it still works on, take back the rest.
            if existing.route != route { routes.removeValue(forKey: existing.route) }
            worker = existing
            worker.route = route
            let held = Set(hello.held)
            var returned = 0
            for (page, lease) in worker.leases where !held.contains(lease.attempt) {
                worker.leases.removeValue(forKey: page)
                pending.append(.returned(lease.attempt, worker: hello.worker, startedAt: lease.startedAt))
                returned += 1
            }
            Log.info("worker rejoined on a new connection", ["worker": hello.worker.rawValue, "host": hello.host,
                                                             "leases_kept": String(worker.leases.count),
                                                             "leases_returned": String(returned)])
        } else {
            worker = WorkerState(id: hello.worker, route: route)
            workers[hello.worker] = worker
            Log.info("worker joined", ["worker": hello.worker.rawValue, "host": hello.host, "slots": String(hello.slots),
                                       "engine": hello.engine])
        }
        routes[route] = hello.worker
        worker.hello = hello
        worker.credit = 0
        worker.lastHeard = now
        worker.lastSeenWall = Clock.now
        pending.append(.joined(hello))
    }

    private func leave(_ worker: WorkerState, reason: String, returned: Set<AttemptID>) {
        for lease in worker.leases.values {
            if returned.contains(lease.attempt) {
                pending.append(.returned(lease.attempt, worker: worker.id, startedAt: lease.startedAt))
            } else {
                pending.append(.lost(lease.attempt, worker: worker.id, startedAt: lease.startedAt,
                                     message: "worker \(worker.id) left (\(reason)) while working on the page"))
            }
        }
        worker.leases.removeAll()
        remove(worker, state: "gone")
        Log.info("worker left", ["worker": worker.id.rawValue, "reason": reason])
    }

    private func remove(_ worker: WorkerState, state: String) {
        workers.removeValue(forKey: worker.id)
        routes.removeValue(forKey: worker.route)
        pending.append(.left(worker.id, state: state))
    }

    /// Removes the in-memory lease of an attempt, wherever it is.
    private func take(_ attempt: AttemptID) -> LeaseInfo? {
        for worker in workers.values {
            if let lease = worker.leases[attempt.page], lease.attempt == attempt {
                worker.leases.removeValue(forKey: attempt.page)
                return lease
            }
        }
        return nil
    }

    private func countMalformed(_ kind: String, detail: String) {
        counters.malformed[kind, default: 0] += 1
        let total = counters.malformedTotal
        // Logged sparingly: a hostile peer must not flood the log.
        if total <= 10 || total % 1000 == 0 {
            Log.warning("dropped a malformed message", ["kind": kind, "error": detail, "total": String(total)])
        }
    }

    // MARK: Liveness

    private func checkLiveness(now: Int64) {
        let limit = Int64(configuration.heartbeatMilliseconds * configuration.liveness)
        for worker in Array(workers.values) where now - worker.lastHeard > limit {
            counters.workersLost += 1
            Log.warning("worker lost", ["worker": worker.id.rawValue, "silent_ms": String(now - worker.lastHeard),
                                        "leases": String(worker.leases.count)])
            for lease in worker.leases.values {
                pending.append(.lost(lease.attempt, worker: worker.id, startedAt: lease.startedAt,
                                     message: "worker \(worker.id) went silent while working on the page"))
            }
            worker.leases.removeAll()
            remove(worker, state: "lost")
        }
    }

    private func sendHeartbeats(now: Int64) {
        for worker in workers.values where now - worker.lastSent >= Int64(configuration.heartbeatMilliseconds) {
            send(.heartbeat, to: worker)
        }
    }

    private func expireLeases() {
        guard let expired = try? store.expiredLeases(now: Clock.now) else { return }
        for (attempt, workerID, leasedAt) in expired {
            if let workerID, let worker = workers[workerID] { worker.leases.removeValue(forKey: attempt.page) }
            pending.append(.lost(attempt, worker: workerID ?? WorkerID("unknown"), startedAt: leasedAt,
                                 message: "the lease ran out after \(Int(configuration.leaseSeconds)) s"))
        }
    }

    // MARK: Dispatch

    /// Chooses pages for workers with credit, round robin, from a small buffer of the queue's head: first one page
    /// for each idle slot, then prefetch (a page waiting beside a busy slot, to hide the network), but prefetch
    /// only while more pages wait than the farm has slots. At the end of a batch a prefetched page would sit
    /// behind a busy slot while another worker's slot idles: the batch would end a page later.
    private func assign() -> [(QueuedPage, WorkerState)] {
        prefetchHeld = false
        let hungry = workers.values.filter { $0.credit > 0 }.sorted { $0.id < $1.id }
        guard !hungry.isEmpty else { return [] }
        let wanted = hungry.reduce(0) { $0 + $1.credit }
        let farmSlots = workers.values.reduce(0) { $0 + $1.slots }
        refillIfNeeded(wanted: wanted, spare: farmSlots)
        var assignments: [(QueuedPage, WorkerState)] = []
        func deal(_ allowance: (WorkerState) -> Int) {
            var takers = hungry.map { ($0, min($0.credit, allowance($0))) }.filter { $0.1 > 0 }
            var index = 0
            while !takers.isEmpty && readyHead < ready.count {
                let slot = index % takers.count
                let worker = takers[slot].0
                assignments.append((ready[readyHead], worker))
                readyHead += 1
                worker.credit -= 1
                takers[slot].1 -= 1
                if takers[slot].1 == 0 { takers.remove(at: slot) } else { index += 1 }
            }
        }
        deal { worker in max(0, worker.slots - worker.leases.count) }
        if ready.count - readyHead > farmSlots {
            deal { _ in Int.max }
        } else if readyHead < ready.count {
            prefetchHeld = true
        }
        return assignments
    }

    /// Keeps enough of the queue's head in memory for what is wanted now plus one page per slot of the farm (to
    /// judge whether prefetch can be spared). A store that had no more to give is asked again only now and then.
    private func refillIfNeeded(wanted: Int, spare: Int) {
        let buffered = ready.count - readyHead
        guard buffered < wanted + spare + 1 else { return }
        let now = Clock.monotonicMilliseconds
        if storeExhausted && buffered > 0 && now - lastRefill < 200 { return }
        if ready.isEmpty && now - lastRefill < 200 { return }
        lastRefill = now
        let limit = min(4096, max(64, (wanted + spare) * 4))
        ready = (try? store.queuedPages(limit: limit)) ?? []
        readyHead = 0
        storeExhausted = ready.count < limit
    }

    // MARK: Committing

    /// Applies pending writes and leases in one transaction, then sends the JOBs. If the store refuses (disk full,
    /// locked), nothing is lost: pending writes stay pending, leased pages stay queued, and dispatch pauses; the
    /// write is tried again once a second (`force` tries at once: the last commit before stopping).
    private func commit(assignments: [(QueuedPage, WorkerState)], force: Bool = false) {
        guard !pending.isEmpty || !assignments.isEmpty else { return }
        guard force || storeBlockedUntil <= Clock.monotonicMilliseconds else { return }
        let now = Clock.now
        let leaseEnd = now + configuration.leaseSeconds
        var leased: [(QueuedPage, WorkerState, AttemptID)] = []
        var tally = CoordinatorCounters()
        var progress: [WorkerID: (done: Int, failed: Int)] = [:]
        var events: [PageEvent] = []
        do {
            try store.write {
                for write in pending {
                    try apply(write, now: now, tally: &tally, progress: &progress, events: &events)
                }
                for (worker, counts) in progress {
                    try store.workerProgress(worker, lastSeen: workers[worker]?.lastSeenWall ?? now, done: counts.done,
                                             failed: counts.failed)
                }
                for (page, worker) in assignments {
                    if let attempt = try store.lease(page.id, to: worker.id, now: now, expires: leaseEnd) {
                        leased.append((page, worker, attempt))
                    } else {
                        worker.credit += 1  // someone else changed the page; the credit is still good
                    }
                }
            }
        } catch {
            storeFailed(error, assignments: assignments)
            return
        }
        let written = (writes: pending.count, results: heldResults)
        pending.removeAll(keepingCapacity: true)
        storeAccepts(written: written)
        // Logged only now: a page's outcome is news once the store has it, not while a rollback could undo it.
        Log.write(lines: events.compactMap(line))
        counters.completed += tally.completed
        counters.failed += tally.failed
        counters.retried += tally.retried
        counters.superseded += tally.superseded
        for (page, worker, attempt) in leased {
            dispatch(page, attempt: attempt, to: worker, leasedAt: now)
        }
    }

    private func apply(_ write: PendingWrite, now: Double, tally: inout CoordinatorCounters,
                       progress: inout [WorkerID: (done: Int, failed: Int)], events: inout [PageEvent]) throws
    {
        switch write {
        case .result(let attempt, let worker, let output, let startedAt):
            if try store.complete(attempt, by: worker, output: output, startedAt: startedAt, now: now) {
                tally.completed += 1
                progress[worker, default: (0, 0)].done += 1
                events.append(PageEvent(.info, "page done", attempt, worker, duration: startedAt.map { now - $0 }))
            } else {
                tally.superseded += 1
                events.append(PageEvent(.info, "late result ignored: the page has moved on", attempt, worker))
            }
        case .failure(let attempt, let worker, let failure, let startedAt, let outcome):
            switch try store.fail(attempt, by: worker, failure: failure, policy: configuration.retry, startedAt: startedAt,
                                  outcome: outcome, now: now) {
            case .failed:
                tally.failed += 1
                progress[worker, default: (0, 0)].failed += 1
                events.append(PageEvent(.warning, "page failed", attempt, worker, failure: failure))
            case .retry:
                tally.retried += 1
                events.append(PageEvent(.info, "page failed; will retry", attempt, worker, failure: failure))
            case .superseded:
                tally.superseded += 1
                events.append(PageEvent(.info, "late failure ignored: the page has moved on", attempt, worker,
                                        failure: failure))
            }
        case .lost(let attempt, let worker, let startedAt, let message):
            let failure = PageFailure(stage: "dispatch", code: .workerLost, message: message, retryable: true)
            switch try store.fail(attempt, by: worker, failure: failure, policy: configuration.retry, startedAt: startedAt,
                                  outcome: "lost", now: now) {
            case .failed:
                tally.failed += 1
                events.append(PageEvent(.warning, "page taken back and failed: no attempts left", attempt, worker, failure: failure))
            case .retry:
                tally.retried += 1
                events.append(PageEvent(.warning, "page taken back; will retry", attempt, worker, failure: failure))
            case .superseded:
                tally.superseded += 1
                labels.removeValue(forKey: attempt)
            }
        case .returned(let attempt, let worker, let startedAt):
            if try store.giveBack(attempt, by: worker, startedAt: startedAt, now: now) {
                events.append(PageEvent(.info, "page given back to the queue", attempt, worker))
            } else {
                tally.superseded += 1
                labels.removeValue(forKey: attempt)
            }
        case .joined(let hello):
            try store.workerJoined(hello.worker, host: hello.host, pid: hello.pid, slots: hello.slots, engine: hello.engine,
                                   languages: hello.languages, version: hello.version, now: now)
        case .left(let worker, let state):
            try store.workerLeft(worker, state: state, now: now)
        }
    }

    private func storeFailed(_ error: Error, assignments: [(QueuedPage, WorkerState)]) {
        // Leases were rolled back: the pages are still queued and the workers keep their credit.
        for (_, worker) in assignments { worker.credit += 1 }
        ready.removeAll()
        readyHead = 0
        counters.storeErrors += 1
        let now = Clock.monotonicMilliseconds
        if storeBlockedUntil == 0 { storeRefusedSince = now }
        let diskFull = (error as? StoreError)?.isDiskFull ?? false
        let free = store.diskSpace.map { Format.bytes(Int($0.available)) } ?? "unknown"
        if diskFull && (!counters.diskFull || now - lastDiskFullLog >= 60_000) {
            // Once when it happens, then a reminder a minute while it lasts.
            Log.error(counters.diskFull ? "the store's disk is still full: dispatch stays paused"
                          : "the store's disk is full: dispatch paused, accepted results are kept in memory until space returns",
                      ["store": store.path, "free": free, "results_held": String(heldResults),
                       "pending_writes": String(pending.count), "paused_s": String((now - storeRefusedSince) / 1000)])
            lastDiskFullLog = now
        } else if !diskFull && (counters.storeErrors <= 10 || counters.storeErrors % 100 == 0) {
            Log.error("store write failed; will retry", ["error": "\(error)", "pending_writes": String(pending.count)])
        }
        counters.diskFull = diskFull
        storeBlockedUntil = now + 1000
        publish()
    }

    /// A write went through: if the store had been refusing writes, dispatch resumes.
    private func storeAccepts(written: (writes: Int, results: Int)) {
        guard storeBlockedUntil > 0 else { return }
        Log.info("the store accepts writes again; dispatch resumes",
                 ["store": store.path, "results_written": String(written.results), "pending_written": String(written.writes),
                  "paused_s": String((Clock.monotonicMilliseconds - storeRefusedSince) / 1000)])
        counters.diskFull = false
        storeBlockedUntil = 0
    }

    /// Results and failures accepted from workers and not yet in the store.
    private var heldResults: Int {
        pending.reduce(0) { count, write in
            switch write {
            case .result, .failure: count + 1
            default: count
            }
        }
    }

    private func dispatch(_ page: QueuedPage, attempt: AttemptID, to worker: WorkerState, leasedAt: Double) {
        let source = page.pageCount > 1 ? "\(page.documentName) page \(page.number)" : page.documentName
        labels[attempt] = source
        let failure: PageFailure?
        var bytes: [UInt8] = []
        do throws(FileError) {
            // Never a FIFO put where a page was: opening it would block this loop until a writer came.
            bytes = try FileSystem.read(page.source, limit: configuration.maxPageBytes, regularOnly: true)
            failure = nil
        } catch {
            failure = Self.readFailure(error, limit: configuration.maxPageBytes)
        }
        if let failure {
            worker.credit += 1
            pending.append(.failure(attempt, worker: worker.id, failure: failure, startedAt: leasedAt, outcome: "failed"))
            return
        }
        let options = optionsCache[page.optionsJSON] ?? {
            let parsed = PageOptions(json: try? JSON.parse(page.optionsJSON))
            if optionsCache.count > 10_000 { optionsCache.removeAll() }
            optionsCache[page.optionsJSON] = parsed
            return parsed
        }()
        let job = Job(attempt: attempt, source: source, kind: page.kind == "pdf" ? .pdf : .image, index: page.index,
                      options: options, bytes: bytes)
        worker.leases[page.id] = LeaseInfo(attempt: attempt, startedAt: leasedAt)
        if send(.job(job), to: worker) {
            counters.dispatched += 1
            if let line = line(PageEvent(.debug, "page leased", attempt, worker.id, final: false)) { Console.error(line) }
        }
    }

    static func readFailure(_ error: FileError, limit: Int) -> PageFailure {
        switch error.code {
        case EFBIG:
            return PageFailure(stage: "dispatch", code: .pageTooLarge,
                               message: "\(error.path): the page file is larger than the \(limit / (1 << 20)) MB a job may carry")
        case ENOENT:
            return PageFailure(stage: "dispatch", code: .sourceChanged, message: "\(error.path): the file no longer exists")
        case EACCES, EISDIR, ELOOP, ENOTDIR, EINVAL:
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.description)
        default:
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.description, retryable: true)
        }
    }

    /// The log line of a page event (nil below the log level): page, attempt, worker, source (while the attempt's
    /// label is known), and the failure's code, stage and error, or the time the attempt took. A final event forgets
    /// the attempt's label.
    private func line(_ event: PageEvent) -> String? {
        guard event.level >= Log.level else {
            if event.final { labels.removeValue(forKey: event.attempt) }
            return nil
        }
        var fields = [("page", event.attempt.page.description), ("attempt", String(event.attempt.number)),
                      ("worker", event.worker.rawValue)]
        if let label = labels[event.attempt] { fields.append(("source", label)) }
        if event.final { labels.removeValue(forKey: event.attempt) }
        if let failure = event.failure {
            fields += [("code", failure.code.rawValue), ("stage", failure.stage), ("error", failure.message)]
        }
        if let duration = event.duration { fields.append(("duration_ms", String(Int((duration * 1000).rounded())))) }
        return Log.line(event.level, event.message, fields: fields)
    }

    @discardableResult
    private func send(_ message: FarmProtocol.Message, to worker: WorkerState) -> Bool {
        do {
            try socket.send([worker.route] + FrameCodec.encode(message))
            worker.lastSent = Clock.monotonicMilliseconds
            return true
        } catch {
            // The peer is gone (EHOSTUNREACH): liveness will notice and take its leases back.
            Log.debug("send failed", ["worker": worker.id.rawValue, "error": error.description])
            return false
        }
    }

    /// Writes the counters to the store every 2 s (reports read them); `stopping` marks the last write, so
    /// `status` can tell a coordinator that stopped from one that is running.
    private func writeCounters(force: Bool, stopping: Bool = false) {
        let now = Clock.monotonicMilliseconds
        publish()
        guard force || now - lastCountersWrite >= 2000 else { return }
        lastCountersWrite = now
        let fields: [(String, JSON)] = [
            ("dispatched", JSON(counters.dispatched)), ("completed", JSON(counters.completed)),
            ("failed", JSON(counters.failed)), ("retried", JSON(counters.retried)),
            ("superseded", JSON(counters.superseded)), ("workers_lost", JSON(counters.workersLost)),
            ("malformed", .object(counters.malformed.sorted { $0.key < $1.key }.map { ($0.key, JSON($0.value)) })),
            ("disk_full", JSON(counters.diskFull)), ("pending_writes", JSON(pending.count)),
            ("heartbeat_at", JSON(Clock.now)),
        ] + (stopping ? [("stopped_at", JSON(Clock.now))] : [])
        // Workers' last-seen times go with the counters, so reports can tell an idle worker from a silent one.
        let heard = workers.values.map { ($0.id, $0.lastSeenWall) }
        do {
            try store.write {
                try store.setSetting("counters", JSON.object(fields).rendered)
                try store.workersHeard(heard)
            }
            // An idle coordinator learns here that space returned; with writes held, only their commit tells. A
            // small write can fit in the write-ahead log's old space on a full disk, so the disk must agree.
            let stillFull = counters.diskFull && store.diskSpace?.isFull == true
            if pending.isEmpty && !stillFull { storeAccepts(written: (0, 0)) }
        } catch {
            storeFailed(error, assignments: [])
        }
    }

    private func publish() {
        let copy = counters
        shared.withLock { $0 = copy }
    }
}

/// What the coordinator knows about one connected worker.
final class WorkerState {
    let id: WorkerID
    var route: [UInt8]
    var hello: Hello?
    var credit = 0
    var lastHeard: Int64 = 0
    var lastSent: Int64 = 0
    var lastSeenWall: Double = 0
    var leases: [PageID: LeaseInfo] = [:]

    /// The page slots it announced (at least one).
    var slots: Int { max(1, hello?.slots ?? 1) }

    init(id: WorkerID, route: [UInt8]) {
        self.id = id
        self.route = route
    }
}

/// Something that happened to a page, for the log.
struct PageEvent {
    let level: Log.Level
    let message: String
    let attempt: AttemptID
    let worker: WorkerID
    var failure: PageFailure?
    /// Seconds from the lease to the outcome.
    var duration: Double?
    /// The attempt is over (done, failed, retried, given back, ignored as late): its label is no longer needed.
    var final: Bool

    init(_ level: Log.Level, _ message: String, _ attempt: AttemptID, _ worker: WorkerID, failure: PageFailure? = nil,
         duration: Double? = nil, final: Bool = true)
    {
        self.level = level
        self.message = message
        self.attempt = attempt
        self.worker = worker
        self.failure = failure
        self.duration = duration
        self.final = final
    }
}

struct LeaseInfo {
    let attempt: AttemptID
    let startedAt: Double
}

/// A change waiting for the next commit.
enum PendingWrite {
    case result(AttemptID, worker: WorkerID, output: PageOutput, startedAt: Double?)
    case failure(AttemptID, worker: WorkerID, failure: PageFailure, startedAt: Double?, outcome: String)
    case lost(AttemptID, worker: WorkerID, startedAt: Double?, message: String)
    case returned(AttemptID, worker: WorkerID, startedAt: Double?)
    case joined(Hello)
    case left(WorkerID, state: String)
}

#if canImport(Glibc)
import Glibc
#endif
