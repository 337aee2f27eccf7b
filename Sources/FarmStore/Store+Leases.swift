import FarmCore
import SQLite

/// A queued page, ready to be leased: everything a JOB needs.
public struct QueuedPage: Sendable {
    public let id: PageID
    public let document: DocumentID
    public let documentName: String
    public let number: Int
    public let pageCount: Int
    /// The page's source file as submitted: path, kind, page or frame, size and SHA-256 (dispatch sends its part
    /// instead when it has one).
    public let source: SourceRef
    public let priority: Int
    /// Attempts made at the page when it was read from the queue: leasing it makes attempt `attempts + 1`.
    public let attempts: Int
    /// The document's options as stored (JSON text); the coordinator parses each document's once.
    public let optionsJSON: String
    /// The page split out of its multi-page file at submit: what dispatch sends instead of the whole file.
    public var part: PagePart? = nil
}

extension Store {
    // MARK: Finding work

    /// Queued pages whose backoff has passed, highest priority first, then in submission order.
    public func queuedPages(limit: Int, now: Double = Clock.now) throws -> [QueuedPage] {
        try connection.cached("""
            SELECT p.id, p.document_id, p.number, p.source_path, p.source_index, p.source_kind, p.priority,
                   d.name, d.options, d.page_count, p.source_hash, p.source_size, pp.path, pp.sha256, pp.size, p.attempts
            FROM pages p INDEXED BY pages_queue JOIN documents d ON d.id = p.document_id
                 LEFT JOIN page_parts pp ON pp.page_id = p.id
            WHERE p.state = 'queued' AND p.not_before <= ?
            ORDER BY p.priority DESC, p.id
            LIMIT ?
            """).rows([.real(now), .integer(Int64(limit))]) { row in
            QueuedPage(id: PageID(row.int64(0)), document: DocumentID(row.int64(1)), documentName: row.text(7),
                       number: row.int(2), pageCount: row.int(9),
                       // A kind this coordinator does not know goes out as an image, as it always has: the
                       // worker's decoder tells what the bytes are.
                       source: SourceRef(path: RawPath(bytes: row.blob(3)), index: row.int(4),
                                         kind: SourceKind(rawValue: row.text(5)) ?? .image,
                                         hash: row.optionalText(10), size: row.optionalInt(11)),
                       priority: row.int(6), attempts: row.int(15), optionsJSON: row.text(8),
                       part: row.optionalText(13).map { PagePart(path: RawPath(bytes: row.blob(12)), sha256: $0, size: row.int(14)) })
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
        if connection.isAutocommit { return try write { try lease(page, to: worker, now: now, expires: expires) } }
        guard let (attempt, document) = try connection.cached("""
            UPDATE pages SET state = 'leased', attempts = attempts + 1, tries = tries + 1, lease_worker = ?,
                             leased_at = ?, lease_expires = ?, updated_at = ?
            WHERE id = ? AND state = 'queued'
            RETURNING attempts, document_id
            """).first([.text(worker.rawValue), .real(now), .real(expires), .real(now), .integer(page.rawValue)], {
            (AttemptID(page: page, number: $0.int(0)), $0.int64(1))
        }) else { return nil }
        try countChange(of: document, from: .queued, to: .leased)
        return attempt
    }

    /// Leases a page read from the queue (`queuedPages`), as `lease(_:to:now:expires:)` does, without reading the
    /// row back: the new attempt is the one after those the page had when it was read. A page that has moved on
    /// since (another process requeued, reread or deleted it) is left alone, and the answer is nil. The
    /// coordinator leases every page so: `RETURNING` costs SQLite a temporary table per statement (decision 0089).
    ///
    /// `OR FAIL`: SQLite keeps no statement journal for it (~3 µs a statement, for the `document_counts` trigger). A
    /// failing statement would keep what it changed before the failure, but it changes one row, checked before it is
    /// written, and its trigger only adds to integer counts (and leaves this change out since schema 15: the count is
    /// `countChange`'s); and every caller runs it in a transaction that is rolled back whole on any error (the
    /// coordinator's commit), as SQLite itself does on a full disk without a journal.
    public func lease(_ page: QueuedPage, to worker: WorkerID, now: Double, expires: Double) throws -> AttemptID? {
        if connection.isAutocommit { return try write { try lease(page, to: worker, now: now, expires: expires) } }
        let changed = try hot(.lease, """
            UPDATE OR FAIL pages SET state = 'leased', attempts = attempts + 1, tries = tries + 1, lease_worker = ?,
                             leased_at = ?, lease_expires = ?, updated_at = ?
            WHERE id = ? AND state = 'queued' AND attempts = ?
            """).execute([.text(worker.rawValue), .real(now), .real(expires), .real(now), .integer(page.id.rawValue),
                          .integer(Int64(page.attempts))])
        guard changed == 1 else { return nil }
        try countChange(of: page.document.rawValue, from: .queued, to: .leased)
        return AttemptID(page: page.id, number: page.attempts + 1)
    }

    /// Puts an unstarted page a worker handed back into the queue at once, without counting a try.
    @discardableResult
    public func giveBack(_ attempt: AttemptID, by worker: WorkerID?, startedAt: Double?, outcome: AttemptOutcome = .returned,
                         now: Double = Clock.now) throws -> Bool
    {
        let changed = try connection.cached("""
            UPDATE pages SET state = 'queued', tries = max(tries - 1, 0), not_before = 0, lease_worker = NULL,
                             leased_at = NULL, lease_expires = NULL, updated_at = ?
            WHERE id = ? AND attempts = ? AND state = 'leased'
            """).execute([.real(now), .integer(attempt.page.rawValue), .integer(Int64(attempt.number))])
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: changed == 1 ? outcome : .superseded)
        return changed == 1
    }

    /// After a coordinator restart: every lease left in the store belongs to a run that is gone. The pages go
    /// back to the queue without counting a try (their workers did not fail them); returns how many.
    public func recoverLeases(now: Double = Clock.now) throws -> Int {
        try write {
            try connection.cached("""
                INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome)
                SELECT id, attempts, lease_worker, leased_at, ?, ? FROM pages WHERE state = 'leased'
                """).execute([.real(now), .text(AttemptOutcome.interrupted.rawValue)])
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

    /// SQL over `pages` (bound: worker): the worker holds the page's lease.
    static let heldByLease = "(state = 'leased' AND lease_worker = ?)"

    /// SQL over `pages` (bound: worker): the page was taken back without being handed out again (a coordinator
    /// restart, a lost worker), and the row of its current attempt names the worker.
    static let takenBackFrom = """
        (state = 'queued' AND EXISTS (
            SELECT 1 FROM attempts a WHERE a.page_id = pages.id AND a.number = pages.attempts AND a.worker_id = ?))
        """

    /// SQL over `pages` (bound: worker, worker): the page's current attempt belongs to that worker, by either of
    /// the two rules above, which `markDone` runs as two statements.
    static let attemptHeldBy = "(" + heldByLease + " OR " + takenBackFrom + ")"

    /// A refused result or failure is kept in the attempt history, but only for an attempt that was made: a
    /// message naming a future attempt must not leave a row that would later hide that attempt's real outcome.
    func recordSuperseded(_ attempt: AttemptID, worker: WorkerID?, startedAt: Double?, now: Double,
                          failure: PageFailure? = nil) throws {
        let made = try connection.cached("SELECT attempts FROM pages WHERE id = ?").first([.integer(attempt.page.rawValue)]) {
            $0.int(0)
        } ?? 0
        guard attempt.number >= 1 && attempt.number <= made else { return }
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: .superseded, failure: failure)
    }

    private static let attemptSQL = """
         INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome, stage, code, message)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let replaceAttemptSQL = "INSERT OR REPLACE" + attemptSQL
    private static let insertAttemptSQL = "INSERT OR IGNORE" + attemptSQL

    /// Records an attempt's outcome; the first outcome of an attempt stays unless `replacing` (a done result wins
    /// over the lost or interrupted row its attempt got while the result was on its way).
    func recordAttempt(_ attempt: AttemptID, worker: WorkerID?, startedAt: Double?, now: Double, outcome: AttemptOutcome,
                               failure: PageFailure? = nil, replacing: Bool = false) throws
    {
        // A done page's row, one a page, skips the cache lookup; the SQL is made once for each case.
        let statement = replacing ? try hot(.attemptDone, Self.replaceAttemptSQL) : try connection.cached(Self.insertAttemptSQL)
        try statement.execute([
            .integer(attempt.page.rawValue), .integer(Int64(attempt.number)), SQLiteValue(worker?.rawValue),
            SQLiteValue(startedAt), .real(now), .text(outcome.rawValue), SQLiteValue(failure?.stage),
            SQLiteValue(failure?.code.rawValue), SQLiteValue(failure?.message),
        ])
    }
}
