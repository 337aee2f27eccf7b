import FarmCore
import SQLite

/// What became of a page after a failed or lost attempt.
public enum AttemptDisposition: Sendable, Equatable {
    /// Back in the queue, not before this time.
    case retry(at: Double)
    /// Out of tries (or not worth retrying): the page is `failed`.
    case failed
    /// The attempt was not the page's current one; nothing changed.
    case superseded
}

extension Store {
    /// Records a failed attempt: the page goes back to the queue after a backoff when the failure is retryable
    /// and tries remain, else it ends `failed` with the failure's code and message.
    public func fail(_ attempt: AttemptID, by worker: WorkerID?, failure: PageFailure, policy: RetryPolicy,
                     startedAt: Double?, outcome: AttemptOutcome = .failed, now: Double = Clock.now) throws -> AttemptDisposition
    {
        guard let (state, attempts, tries) = try pageCounters(attempt.page),
              attempts == attempt.number, state == .leased || state == .queued,
              try worker.map({ try self.attempt(attempt, isHeldBy: $0) }) ?? true
        else {
            try recordSuperseded(attempt, worker: worker, startedAt: startedAt, now: now, failure: failure)
            return .superseded
        }
        let disposition: AttemptDisposition = failure.retryable && tries < policy.maxAttempts
            ? .retry(at: now + policy.delay(afterTries: tries)) : .failed
        let notBefore: Double
        let newState: PageState
        switch disposition {
        case .retry(let at): (newState, notBefore) = (.queued, at)
        default: (newState, notBefore) = (.failed, 0)
        }
        try connection.cached("""
            UPDATE pages SET state = ?, not_before = ?, lease_worker = NULL, leased_at = NULL, lease_expires = NULL,
                             updated_at = ?, failure_stage = ?, failure_code = ?, failure_message = ?
            WHERE id = ?
            """).execute([.text(newState.rawValue), .real(notBefore), .real(now), .text(failure.stage),
                          .text(failure.code.rawValue), .text(failure.message), .integer(attempt.page.rawValue)])
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: outcome, failure: failure)
        return disposition
    }

    /// The page's current attempt is `attempt` and belongs to `worker` (see `attemptHeldBy`).
    func attempt(_ attempt: AttemptID, isHeldBy worker: WorkerID) throws -> Bool {
        try connection.cached("SELECT 1 FROM pages WHERE id = ? AND attempts = ? AND \(Self.attemptHeldBy)").first([
            .integer(attempt.page.rawValue), .integer(Int64(attempt.number)), .text(worker.rawValue), .text(worker.rawValue),
        ]) { _ in true } ?? false
    }
}
