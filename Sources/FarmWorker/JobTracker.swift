import FarmCore
import Synchronization

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
