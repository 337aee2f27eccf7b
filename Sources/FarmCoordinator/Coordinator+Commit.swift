import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore

/// Group commit: every pending write and new lease of a turn in one transaction.
extension Coordinator {
    /// Applies pending writes and leases in one transaction, then sends the JOBs. If the store refuses (disk full,
    /// locked), nothing is lost: pending writes stay pending, leased pages stay queued, and dispatch pauses; the
    /// write is tried again once a second (`force` tries at once: the last commit before stopping).
    func commit(assignments: [(QueuedPage, WorkerState)], force: Bool = false) {
        guard !pending.isEmpty || !assignments.isEmpty else { return }
        guard force || storeBlockedUntil <= time.monotonicMilliseconds else { return }
        let now = time.now
        let leaseEnd = now + configuration.leaseSeconds
        var leased: [(QueuedPage, WorkerState, AttemptID)] = []
        var tally = CoordinatorCounters()
        var progress: [WorkerID: (done: Int, failed: Int)] = [:]
        var events: [PageEvent] = []
        var doneParts: [RawPath] = []
        do {
            try store.write {
                for write in pending {
                    try apply(write, now: now, tally: &tally, progress: &progress, events: &events, doneParts: &doneParts)
                }
                for (worker, counts) in progress {
                    try store.workerProgress(worker, lastSeen: workers[worker]?.lastSeenWall ?? now, done: counts.done,
                                             failed: counts.failed)
                }
                for (page, worker) in assignments {
                    if let attempt = try store.lease(page, to: worker.id, now: now, expires: leaseEnd) {
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
        for part in doneParts { removePart(part) }
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

    func apply(_ write: PendingWrite, now: Double, tally: inout CoordinatorCounters,
                       progress: inout [WorkerID: (done: Int, failed: Int)], events: inout [PageEvent],
                       doneParts: inout [RawPath]) throws
    {
        switch write {
        case .result(let attempt, let worker, let document, let output, let startedAt):
            if try store.complete(attempt, of: document, by: worker, output: output, startedAt: startedAt, now: now) {
                if partPages.remove(attempt.page) != nil, let part = try store.dropPart(of: attempt.page) { doneParts.append(part) }
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
                                  outcome: .lost, now: now) {
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
        case .keyBound(let worker, let key):
            try store.bindWorkerKey(worker, key: key, now: now)
        }
    }
}

/// A change waiting for the next commit.
enum PendingWrite {
    /// `document` is the page's, from its lease; nil when this run did not lease the page (the store looks it up).
    case result(AttemptID, worker: WorkerID, document: DocumentID?, output: PageOutput, startedAt: Double?)
    case failure(AttemptID, worker: WorkerID, failure: PageFailure, startedAt: Double?, outcome: AttemptOutcome)
    case lost(AttemptID, worker: WorkerID, startedAt: Double?, message: String)
    case returned(AttemptID, worker: WorkerID, startedAt: Double?)
    case joined(Hello)
    case keyBound(WorkerID, key: String)
    case left(WorkerID, state: WorkerExit)
}
