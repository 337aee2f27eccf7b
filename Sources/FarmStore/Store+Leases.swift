import FarmCore
import SQLite

/// A queued page, ready to be leased: everything a JOB needs.
public struct QueuedPage: Sendable {
    public let id: PageID
    public let document: DocumentID
    public let documentName: String
    public let number: Int
    public let pageCount: Int
    public let source: RawPath
    public let index: Int
    public let kind: String
    public let priority: Int
    /// The document's options as stored (JSON text); the coordinator parses each document's once.
    public let optionsJSON: String
}

/// A finished page as a worker reported it.
public struct PageOutput: Sendable {
    public var engine: String
    public var text: String
    public var meanConfidence: Double
    public var width: Int
    public var height: Int
    public var structure: [UInt8]
    public var timings: String
    public var artifacts: [(String, [UInt8])]

    public init(engine: String, text: String, meanConfidence: Double, width: Int, height: Int, structure: [UInt8],
                timings: String, artifacts: [(String, [UInt8])] = [])
    {
        self.engine = engine
        self.text = text
        self.meanConfidence = meanConfidence
        self.width = width
        self.height = height
        self.structure = structure
        self.timings = timings
        self.artifacts = artifacts
    }
}

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
    // MARK: Finding work

    /// Queued pages whose backoff has passed, highest priority first, then in submission order.
    public func queuedPages(limit: Int, now: Double = Clock.now) throws -> [QueuedPage] {
        try connection.cached("""
            SELECT p.id, p.document_id, p.number, p.source_path, p.source_index, p.source_kind, p.priority,
                   d.name, d.options, d.page_count
            FROM pages p INDEXED BY pages_queue JOIN documents d ON d.id = p.document_id
            WHERE p.state = 'queued' AND p.not_before <= ?
            ORDER BY p.priority DESC, p.id
            LIMIT ?
            """).rows([.real(now), .integer(Int64(limit))]) { row in
            QueuedPage(id: PageID(row.int64(0)), document: DocumentID(row.int64(1)), documentName: row.text(7),
                       number: row.int(2), pageCount: row.int(9), source: RawPath(bytes: row.blob(3)),
                       index: row.int(4), kind: row.text(5), priority: row.int(6), optionsJSON: row.text(8))
        }
    }

    /// When the earliest page in backoff becomes due, if any page is waiting.
    public func nextBackoffDue() throws -> Double? {
        try connection.cached("SELECT min(not_before) FROM pages WHERE state = 'queued'").first { $0.optionalDouble(0) } ?? nil
    }

    // MARK: Leases

    /// Leases a queued page to a worker: the lease is in the store before the JOB leaves. Returns the new
    /// attempt, or nil when the page is no longer queued.
    public func lease(_ page: PageID, to worker: WorkerID, now: Double, expires: Double) throws -> AttemptID? {
        try connection.cached("""
            UPDATE pages SET state = 'leased', attempts = attempts + 1, tries = tries + 1, lease_worker = ?,
                             leased_at = ?, lease_expires = ?, updated_at = ?
            WHERE id = ? AND state = 'queued'
            RETURNING attempts
            """).first([.text(worker.rawValue), .real(now), .real(expires), .real(now), .integer(page.rawValue)]) {
            AttemptID(page: page, number: $0.int(0))
        }
    }

    /// Records a result. Only the page's current attempt counts, and only once: a result for a superseded
    /// attempt or a page already done is kept in the attempt history and otherwise ignored. Returns true when
    /// the result was recorded.
    @discardableResult
    public func complete(_ attempt: AttemptID, by worker: WorkerID, output: PageOutput, startedAt: Double?,
                         now: Double = Clock.now) throws -> Bool
    {
        let changed = try connection.cached("""
            UPDATE pages SET state = 'done', lease_worker = NULL, leased_at = NULL, lease_expires = NULL, updated_at = ?,
                             failure_stage = NULL, failure_code = NULL, failure_message = NULL
            WHERE id = ? AND attempts = ? AND state IN ('leased', 'queued')
            """).execute([.real(now), .integer(attempt.page.rawValue), .integer(Int64(attempt.number))])
        guard changed == 1 else {
            try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: "superseded")
            return false
        }
        try connection.cached("""
            INSERT INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height, structure,
                                 timings, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute([
            .integer(attempt.page.rawValue), .integer(Int64(attempt.number)), .text(worker.rawValue), .text(output.engine),
            .text(output.text), .real(output.meanConfidence), .integer(Int64(output.width)), .integer(Int64(output.height)),
            .blob(output.structure), .text(output.timings), .real(now),
        ])
        try indexForSearch(attempt.page, text: output.text)
        if !output.artifacts.isEmpty {
            let insert = try connection.cached("INSERT OR REPLACE INTO artifacts (page_id, name, data) VALUES (?, ?, ?)")
            for (name, data) in output.artifacts {
                try insert.execute([.integer(attempt.page.rawValue), .text(name), .blob(data)])
            }
        }
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: "done")
        return true
    }

    /// Records a failed attempt: the page goes back to the queue after a backoff when the failure is retryable
    /// and tries remain, else it ends `failed` with the failure's code and message.
    public func fail(_ attempt: AttemptID, by worker: WorkerID?, failure: PageFailure, policy: RetryPolicy,
                     startedAt: Double?, outcome: String = "failed", now: Double = Clock.now) throws -> AttemptDisposition
    {
        guard let (state, attempts, tries) = try pageCounters(attempt.page),
              attempts == attempt.number, state == .leased || state == .queued
        else {
            try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: "superseded",
                              failure: failure)
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

    /// Puts an unstarted page a worker handed back into the queue at once, without counting a try.
    @discardableResult
    public func giveBack(_ attempt: AttemptID, by worker: WorkerID?, startedAt: Double?, outcome: String = "returned",
                         now: Double = Clock.now) throws -> Bool
    {
        let changed = try connection.cached("""
            UPDATE pages SET state = 'queued', tries = max(tries - 1, 0), not_before = 0, lease_worker = NULL,
                             leased_at = NULL, lease_expires = NULL, updated_at = ?
            WHERE id = ? AND attempts = ? AND state = 'leased'
            """).execute([.real(now), .integer(attempt.page.rawValue), .integer(Int64(attempt.number))])
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: changed == 1 ? outcome : "superseded")
        return changed == 1
    }

    /// After a coordinator restart: every lease left in the store belongs to a run that is gone. The pages go
    /// back to the queue without counting a try (their workers did not fail them); returns how many.
    public func recoverLeases(now: Double = Clock.now) throws -> Int {
        try write {
            try connection.cached("""
                INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome)
                SELECT id, attempts, lease_worker, leased_at, ?, 'interrupted' FROM pages WHERE state = 'leased'
                """).execute([.real(now)])
            return try connection.cached("""
                UPDATE pages SET state = 'queued', tries = max(tries - 1, 0), lease_worker = NULL, leased_at = NULL,
                                 lease_expires = NULL, updated_at = ?
                WHERE state = 'leased'
                """).execute([.real(now)])
        }
    }

    /// Leases whose deadline has passed (a worker alive but stuck on a page).
    public func expiredLeases(now: Double = Clock.now) throws -> [(attempt: AttemptID, worker: WorkerID?, leasedAt: Double?)] {
        try connection.cached("""
            SELECT id, attempts, lease_worker, leased_at FROM pages INDEXED BY pages_leases
            WHERE state = 'leased' AND lease_expires < ?
            """).rows([.real(now)]) {
            (AttemptID(page: PageID($0.int64(0)), number: $0.int(1)), $0.optionalText(2).map { WorkerID($0) }, $0.optionalDouble(3))
        }
    }

    /// State and counters of one page.
    public func pageCounters(_ page: PageID) throws -> (state: PageState, attempts: Int, tries: Int)? {
        try connection.cached("SELECT state, attempts, tries FROM pages WHERE id = ?").first([.integer(page.rawValue)]) {
            (PageState(rawValue: $0.text(0)) ?? .failed, $0.int(1), $0.int(2))
        }
    }

    private func recordAttempt(_ attempt: AttemptID, worker: WorkerID?, startedAt: Double?, now: Double, outcome: String,
                               failure: PageFailure? = nil) throws
    {
        try connection.cached("""
            INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome, stage, code, message)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute([
            .integer(attempt.page.rawValue), .integer(Int64(attempt.number)), SQLiteValue(worker?.rawValue),
            SQLiteValue(startedAt), .real(now), .text(outcome), SQLiteValue(failure?.stage),
            SQLiteValue(failure?.code.rawValue), SQLiteValue(failure?.message),
        ])
    }

    // MARK: Workers

    /// Records a worker's HELLO (a returning worker keeps its first-seen time and counts).
    public func workerJoined(_ id: WorkerID, host: String, pid: Int, slots: Int, engine: String, languages: [String],
                             version: String, now: Double = Clock.now) throws
    {
        try connection.cached("""
            INSERT INTO workers (id, host, pid, slots, engine, languages, version, first_seen, last_seen, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'alive')
            ON CONFLICT(id) DO UPDATE SET host = excluded.host, pid = excluded.pid, slots = excluded.slots,
                engine = excluded.engine, languages = excluded.languages, version = excluded.version,
                last_seen = excluded.last_seen, state = 'alive'
            """).execute([.text(id.rawValue), .text(host), .integer(Int64(pid)), .integer(Int64(slots)), .text(engine),
                          .text(languages.joined(separator: "+")), .text(version), .real(now), .real(now)])
    }

    /// Adds to a worker's counters and moves its last-seen time.
    public func workerProgress(_ id: WorkerID, lastSeen: Double, done: Int, failed: Int) throws {
        try connection.cached("""
            UPDATE workers SET last_seen = max(last_seen, ?), pages_done = pages_done + ?, pages_failed = pages_failed + ?
            WHERE id = ?
            """).execute([.real(lastSeen), .integer(Int64(done)), .integer(Int64(failed)), .text(id.rawValue)])
    }

    public func workerLeft(_ id: WorkerID, state: String, now: Double = Clock.now) throws {
        try connection.cached("UPDATE workers SET state = ?, last_seen = max(last_seen, ?) WHERE id = ?")
            .execute([.text(state), .real(now), .text(id.rawValue)])
    }

    /// Marks every worker not seen since `before` as gone (at coordinator start, all of them).
    public func markWorkersGone(before: Double) throws {
        try connection.cached("UPDATE workers SET state = 'gone' WHERE state != 'gone' AND last_seen < ?").execute([.real(before)])
    }
}
