import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore

/// The worker registry: who is connected, what each holds, and who has gone silent.
extension Coordinator {
    func join(_ hello: Hello, route: [UInt8], key: String?, now: Int64) {
        if configuration.curve != nil {
            // With CURVE a worker is its key: the first HELLO binds the id to the key it came with, and another key
            // claiming that id (an authorized but different host) is refused, so it can neither take over the
            // worker's connection nor send back (and so lose) its leases. The same key rejoins as always.
            guard let key, keys[hello.worker].map({ $0 == key }) ?? true else {
                return refuseClaim(hello, route: route, key: key)
            }
            if keys[hello.worker] == nil {
                keys[hello.worker] = key
                // Kept in the store, so the binding outlives this coordinator.
                pending.append(.keyBound(hello.worker, key: key))
            }
        }
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
        worker.creditReadAt.removeAll()
        worker.lastHeard = now
        worker.lastSeenWall = time.now
        pending.append(.joined(hello))
    }

    /// A HELLO for a worker id bound to another CURVE key: nothing changes, the sender is told why (a worker that
    /// is simply misconfigured logs the reason), and the claim is logged once per id and key.
    func refuseClaim(_ hello: Hello, route: [UInt8], key: String?) {
        counters.malformed["identity-refused", default: 0] += 1
        let bound = ZAPAuthenticator.shortForm(keys[hello.worker]), claimed = ZAPAuthenticator.shortForm(key)
        if refusedClaims.insert(hello.worker.rawValue + " " + (key ?? "")).inserted {
            Log.warning("refused a worker id claimed by another key", ["worker": hello.worker.rawValue, "host": hello.host,
                                                                       "bound_key": bound, "claiming_key": claimed])
        }
        _ = try? socket.send([route] + FrameCodec.encode(.bye(Bye(
            reason: "worker id \(hello.worker.rawValue) belongs to another key (\(bound)); use this host's own id"))))
    }

    func leave(_ worker: WorkerState, reason: String, returned: Set<AttemptID>) {
        for lease in worker.leases.values {
            if returned.contains(lease.attempt) {
                pending.append(.returned(lease.attempt, worker: worker.id, startedAt: lease.startedAt))
            } else {
                pending.append(.lost(lease.attempt, worker: worker.id, startedAt: lease.startedAt,
                                     message: "worker \(worker.id) left (\(reason)) while working on the page"))
            }
        }
        worker.leases.removeAll()
        remove(worker, state: .gone)
        Log.info("worker left", ["worker": worker.id.rawValue, "reason": reason])
    }

    func remove(_ worker: WorkerState, state: WorkerExit) {
        workers.removeValue(forKey: worker.id)
        routes.removeValue(forKey: worker.route)
        pending.append(.left(worker.id, state: state))
    }

    /// Removes the in-memory lease of an attempt, wherever it is.
    /// Removes `sender`'s in-memory lease of `attempt` and returns it. Nil when another connection holds that
    /// lease: the message is refused. When no connection holds it (the coordinator restarted, or the lease was
    /// taken back but not handed out again), a lease with no start time and no document is returned and the store
    /// decides: it accepts only the worker that attempt was given to (and looks the page's document up itself).
    func take(_ attempt: AttemptID, from sender: WorkerState)
        -> (attempt: AttemptID, startedAt: Double?, document: DocumentID?)?
    {
        if let lease = sender.leases[attempt.page], lease.attempt == attempt {
            sender.leases.removeValue(forKey: attempt.page)
            return (attempt, lease.startedAt, lease.document)
        }
        for worker in workers.values where worker !== sender {
            if let lease = worker.leases[attempt.page], lease.attempt == attempt { return nil }
        }
        return (attempt, nil, nil)
    }

    func checkLiveness(now: Int64) {
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
            remove(worker, state: .lost)
        }
    }

    func sendHeartbeats(now: Int64) {
        for worker in workers.values where now - worker.lastSent >= Int64(configuration.heartbeatMilliseconds) {
            send(.heartbeat, to: worker)
        }
    }

    func expireLeases() {
        guard let expired = try? store.expiredLeases(now: time.now) else { return }
        for (attempt, workerID, leasedAt) in expired {
            if let workerID, let worker = workers[workerID] { worker.leases.removeValue(forKey: attempt.page) }
            pending.append(.lost(attempt, worker: workerID ?? WorkerID("unknown"), startedAt: leasedAt,
                                 message: "the lease ran out after \(Int(configuration.leaseSeconds)) s"))
        }
    }
}

/// What the coordinator knows about one connected worker.
final class WorkerState {
    let id: WorkerID
    var route: [UInt8]
    var hello: Hello?
    var credit = 0
    /// When each credit not yet answered was read (monotonic nanoseconds, oldest first, at most 64), for the
    /// dispatch wait.
    var creditReadAt: [UInt64] = []
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

    func creditRead(_ n: Int) {
        let now = Clock.monotonicNanoseconds
        for _ in 0..<min(n, 64 - creditReadAt.count) { creditReadAt.append(now) }
    }

    /// How long the credit a JOB just answered had waited, in nanoseconds (nil for a credit not timed).
    func creditAnswered() -> UInt64? {
        guard !creditReadAt.isEmpty else { return nil }
        return Clock.monotonicNanoseconds &- creditReadAt.removeFirst()
    }
}

struct LeaseInfo {
    let attempt: AttemptID
    /// The page's document, known from the queue: its result's count change needs no query (`Store.complete`).
    let document: DocumentID
    let startedAt: Double
}
