import FarmCore
import Synchronization

/// Which jobs this worker holds: queued for a slot, in a slot, or done in a slot with the outcome on its way to
/// the coordinator. Shared by the network thread and the slots.
final class JobTracker: Sendable {
    private enum Phase: Equatable {
        case queued
        /// In slot `slot` since `since`; the watchdog gives the page up at `deadline` (nil: no time limit).
        case started(slot: Int, since: Int64, deadline: Int64?, limit: Int?)
        /// The slot is done with it; its outcome is on the way to the network thread.
        case settled
    }

    /// A page the watchdog gave up: its slot is stuck in it and is replaced.
    struct Expired: Sendable, Equatable {
        let attempt: AttemptID
        let slot: Int
        let heldMilliseconds: Int64
        /// The page's time limit.
        let limitMilliseconds: Int
    }

    private let state = Mutex<[AttemptID: Phase]>([:])
    /// Threads of slots given up and still inside their page.
    private let stuck = Atomic<Int>(0)
    /// Replacement slots still loading their engine: no credit is asked for them yet, so no job waits for one
    /// (a job's lease time would count the wait).
    private let loading = Atomic<Int>(0)

    func accept(_ attempt: AttemptID) { state.withLock { $0[attempt] = .queued } }

    /// A slot takes a job: false when the job was dropped (its connection is gone) and must be skipped.
    /// `deadline`: when the watchdog gives the page up, for its time limit `limit`.
    func start(_ attempt: AttemptID, slot: Int, now: Int64, deadline: Int64?, limit: Int?) -> Bool {
        state.withLock { jobs in
            guard jobs[attempt] == .queued else { return false }
            jobs[attempt] = .started(slot: slot, since: now, deadline: deadline, limit: limit)
            return true
        }
    }

    /// The slot is done with the page: false when the watchdog gave it up meanwhile (its timeout was already
    /// reported and the slot replaced), so the outcome must be thrown away and the slot's thread must end.
    func settle(_ attempt: AttemptID) -> Bool {
        state.withLock { jobs in
            guard case .started = jobs[attempt] else { return false }
            jobs[attempt] = .settled
            return true
        }
    }

    func finish(_ attempt: AttemptID) { _ = state.withLock { $0.removeValue(forKey: attempt) } }

    /// Forgets every started page whose deadline is past `now` and returns them with their slots. One lock with
    /// `settle`: a page is either settled by its slot or expired here, never both.
    func expire(now: Int64) -> [Expired] {
        state.withLock { jobs in
            var expired: [Expired] = []
            for (attempt, phase) in jobs {
                guard case .started(let slot, let since, let deadline?, let limit) = phase, now >= deadline else { continue }
                expired.append(Expired(attempt: attempt, slot: slot, heldMilliseconds: now - since,
                                       limitMilliseconds: limit ?? 0))
            }
            for page in expired { jobs.removeValue(forKey: page.attempt) }
            return expired
        }
    }

    /// Counts a slot given up; returns how many given-up slots are still running.
    func slotGivenUp() -> Int { stuck.add(1, ordering: .relaxed).newValue }

    /// A given-up slot's thread is ending.
    func givenUpSlotEnded() { stuck.subtract(1, ordering: .relaxed) }

    /// A replacement slot is starting; `replacementReady` when its engine is loaded.
    func replacementStarting() { loading.add(1, ordering: .relaxed) }
    func replacementReady() { loading.subtract(1, ordering: .relaxed) }
    /// Slots that cannot take a job yet.
    var slotsLoading: Int { loading.load(ordering: .relaxed) }

    /// Forgets every job not yet started and returns them.
    @discardableResult
    func dropQueued() -> [AttemptID] {
        state.withLock { jobs in
            let queued = jobs.filter { $0.value == .queued }.map(\.key)
            for attempt in queued { jobs.removeValue(forKey: attempt) }
            return queued
        }
    }

    /// Jobs in a slot right now (or done there, their outcome not yet sent).
    func held() -> [AttemptID] { state.withLock { $0.filter { $0.value != .queued }.map(\.key) } }

    var count: Int { state.withLock { $0.count } }
}
