import FarmCore
import SQLite

/// Why a page can be requeued.
public enum RequeueKind: String, Sendable, CaseIterable {
    /// Failed for good.
    case failed
    /// Leased past its deadline, or to a worker not heard from within the liveness window.
    case stuck
    /// Queued, but waiting out a retry's backoff.
    case waiting
}

/// Which pages `requeue` moves. `failed` and `stuck` choose kinds of pages (either kind when both are set;
/// failed, stuck and waiting pages when neither is); every other filter that is set must hold as well. A done
/// page is never chosen, nor a page leased to a live worker within its deadline.
public struct RequeueSelection: Sendable, Equatable {
    public var failed = false
    public var stuck = false
    /// Pages of these documents.
    public var documents: [DocumentID]?
    /// Pages whose last failure had this code.
    public var code: String?
    /// Pages leased to this worker, or whose last attempt it made.
    public var worker: WorkerID?
    /// These pages.
    public var pages: [PageID]?

    public init() {}

    /// No selector at all: `requeue` refuses to move everything at once.
    public var isEmpty: Bool { !failed && !stuck && documents == nil && code == nil && worker == nil && pages == nil }

    /// The kinds of pages chosen.
    public var kinds: [RequeueKind] {
        if !failed && !stuck { return RequeueKind.allCases }
        return (failed ? [.failed] : []) + (stuck ? [.stuck] : [])
    }
}

/// A page `requeue` chose.
public struct RequeueCandidate: Sendable, Equatable {
    public let page: PageID
    public let document: String
    public let number: Int
    public let state: PageState
    public let kind: RequeueKind
    /// The code of the page's last failure, if it had one.
    public let code: String?
    /// The worker holding the lease (stuck pages) or that made the last attempt.
    public let worker: WorkerID?
}

/// How many pages a requeue chose, by kind and by failure code.
public struct RequeueSummary: Sendable, Equatable {
    public var kinds: [RequeueKind: Int] = [:]
    /// Failure codes ("none" for pages without one), most frequent first.
    public var codes: [(code: String, count: Int)] = []

    public init() {}

    public var total: Int { kinds.values.reduce(0, +) }

    public static func == (a: RequeueSummary, b: RequeueSummary) -> Bool {
        a.kinds == b.kinds && a.codes.map(\.code) == b.codes.map(\.code) && a.codes.map(\.count) == b.codes.map(\.count)
    }
}

/// A page named with `requeue --page`, as it is now.
public struct NamedPage: Sendable, Equatable {
    public let page: PageID
    public let document: String
    public let number: Int
    public let state: PageState
    public let leaseWorker: WorkerID?
}

extension Store {
    /// The pages `selection` chooses at `now` (at most `limit` listed, in page order) and their counts.
    /// Reads only.
    public func requeueCandidates(_ selection: RequeueSelection, liveness: WorkerLiveness, now: Double = Clock.now,
                                  limit: Int = 1000) throws -> (listed: [RequeueCandidate], summary: RequeueSummary)
    {
        try read {
            let (condition, parameters) = Self.condition(selection, liveness: liveness, now: now)
            let listed = try connection.prepare("""
                SELECT p.id, d.name, p.number, p.state, p.failure_code,
                       CASE WHEN p.state = 'leased' THEN p.lease_worker
                            ELSE (SELECT a.worker_id FROM attempts a WHERE a.page_id = p.id AND a.number = p.attempts) END
                FROM pages p JOIN documents d ON d.id = p.document_id
                WHERE \(condition) ORDER BY p.id LIMIT ?
                """).rows(parameters + [.integer(Int64(limit))]) { row in
                let state = PageState(rawValue: row.text(3)) ?? .failed
                return RequeueCandidate(page: PageID(row.int64(0)), document: row.text(1), number: row.int(2), state: state,
                                        kind: Self.kind(of: state), code: row.optionalText(4),
                                        worker: row.optionalText(5).map { WorkerID($0) })
            }
            let counts = try connection.prepare("""
                SELECT p.state, p.failure_code, count(*) FROM pages p WHERE \(condition) GROUP BY p.state, p.failure_code
                """).rows(parameters) { (PageState(rawValue: $0.text(0)) ?? .failed, $0.optionalText(1), $0.int(2)) }
            return (listed, Self.summary(counts))
        }
    }

    /// Moves the pages `selection` chooses back to the queue, due at once, and returns how many by kind and code.
    ///
    /// Each page keeps its history: a stuck page's running attempt is closed as `interrupted`, and the requeue
    /// itself is recorded as the next attempt number with the outcome `requeued`. The page's attempt counter
    /// moves past both, so a late RESULT or FAIL of the attempt taken back is superseded (`complete` and `fail`
    /// accept only the current attempt), and its try counter starts again from zero: it gets a full set of tries.
    /// Nothing is deleted.
    @discardableResult
    public func requeue(_ selection: RequeueSelection, liveness: WorkerLiveness, now: Double = Clock.now) throws -> RequeueSummary {
        try write {
            let (condition, parameters) = Self.condition(selection, liveness: liveness, now: now)
            try connection.execute("""
                CREATE TEMP TABLE IF NOT EXISTS requeue_pages (
                    id INTEGER PRIMARY KEY, state TEXT NOT NULL, code TEXT, worker TEXT, leased_at REAL, attempts INTEGER NOT NULL
                );
                DELETE FROM temp.requeue_pages;
                """)
            try connection.prepare("""
                INSERT INTO temp.requeue_pages (id, state, code, worker, leased_at, attempts)
                SELECT p.id, p.state, p.failure_code, p.lease_worker, p.leased_at, p.attempts FROM pages p WHERE \(condition)
                """).execute(parameters)
            try connection.cached("""
                INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome, message)
                SELECT id, attempts, worker, leased_at, ?, 'interrupted', 'taken back by ocrfarm requeue: the lease was stuck'
                FROM temp.requeue_pages WHERE state = 'leased'
                """).execute([.real(now)])
            try connection.cached("""
                INSERT OR IGNORE INTO attempts (page_id, number, worker_id, started_at, ended_at, outcome, code, message)
                SELECT id, attempts + 1, NULL, NULL, ?, 'requeued', NULL, 'requeued by ocrfarm requeue from ' || state
                FROM temp.requeue_pages
                """).execute([.real(now)])
            try connection.cached("""
                UPDATE pages SET state = 'queued', attempts = attempts + 1, tries = 0, not_before = 0, lease_worker = NULL,
                                 leased_at = NULL, lease_expires = NULL, updated_at = ?
                WHERE id IN (SELECT id FROM temp.requeue_pages)
                """).execute([.real(now)])
            let counts = try connection.cached("SELECT state, code, count(*) FROM temp.requeue_pages GROUP BY state, code")
                .rows([]) { (PageState(rawValue: $0.text(0)) ?? .failed, $0.optionalText(1), $0.int(2)) }
            try connection.execute("DELETE FROM temp.requeue_pages")
            return Self.summary(counts)
        }
    }

    /// The pages with these ids that exist, as they are now.
    public func namedPages(_ ids: [PageID]) throws -> [NamedPage] {
        let statement = try connection.cached("""
            SELECT p.number, p.state, p.lease_worker, d.name FROM pages p JOIN documents d ON d.id = p.document_id WHERE p.id = ?
            """)
        return try ids.compactMap { id in
            try statement.first([.integer(id.rawValue)]) { row in
                NamedPage(page: id, document: row.text(3), number: row.int(0),
                          state: PageState(rawValue: row.text(1)) ?? .failed, leaseWorker: row.optionalText(2).map { WorkerID($0) })
            }
        }
    }

    /// Whether a worker with this id ever joined.
    public func workerExists(_ id: WorkerID) throws -> Bool {
        try connection.cached("SELECT 1 FROM workers WHERE id = ?").first([.text(id.rawValue)]) { _ in true } ?? false
    }

    /// Failure codes of failed pages, for a hint when `--error` matched nothing.
    public func failureCodes() throws -> [String] {
        try connection.cached("SELECT failure_code FROM pages WHERE state = 'failed' GROUP BY failure_code ORDER BY failure_code")
            .rows([]) { $0.optionalText(0) ?? "unknown" }
    }

    // MARK: The selection in SQL

    private static func kind(of state: PageState) -> RequeueKind {
        switch state {
        case .leased: .stuck
        case .queued: .waiting
        default: .failed
        }
    }

    /// A WHERE condition over `pages p` and its parameters, in order.
    static func condition(_ selection: RequeueSelection, liveness: WorkerLiveness, now: Double) -> (String, [SQLiteValue]) {
        var kinds: [String] = []
        var parameters: [SQLiteValue] = []
        for kind in selection.kinds {
            switch kind {
            case .failed:
                kinds.append("p.state = 'failed'")
            case .stuck:
                kinds.append("""
                    (p.state = 'leased' AND (p.lease_expires < ? OR NOT EXISTS (
                        SELECT 1 FROM workers w WHERE w.id = p.lease_worker AND w.state = 'alive' AND w.last_seen >= ?)))
                    """)
                parameters += [.real(now), .real(now - liveness.silentAfterSeconds)]
            case .waiting:
                kinds.append("(p.state = 'queued' AND p.not_before > ?)")
                parameters.append(.real(now))
            }
        }
        var clauses = ["(" + kinds.joined(separator: " OR ") + ")"]
        if let documents = selection.documents {
            clauses.append("p.document_id IN (\(placeholders(documents.count)))")
            parameters += documents.map { .integer($0.rawValue) }
        }
        if let code = selection.code {
            clauses.append("p.failure_code = ?")
            parameters.append(.text(code))
        }
        if let worker = selection.worker {
            clauses.append("""
                (CASE WHEN p.state = 'leased' THEN p.lease_worker = ?
                      ELSE EXISTS (SELECT 1 FROM attempts a WHERE a.page_id = p.id AND a.number = p.attempts AND a.worker_id = ?) END)
                """)
            parameters += [.text(worker.rawValue), .text(worker.rawValue)]
        }
        if let pages = selection.pages {
            clauses.append("p.id IN (\(placeholders(pages.count)))")
            parameters += pages.map { .integer($0.rawValue) }
        }
        return (clauses.joined(separator: " AND "), parameters)
    }

    private static func placeholders(_ count: Int) -> String {
        count == 0 ? "NULL" : Array(repeating: "?", count: count).joined(separator: ", ")
    }

    private static func summary(_ counts: [(PageState, String?, Int)]) -> RequeueSummary {
        var summary = RequeueSummary()
        var codes: [String: Int] = [:]
        for (state, code, count) in counts {
            summary.kinds[kind(of: state), default: 0] += count
            codes[code ?? "none", default: 0] += count
        }
        summary.codes = codes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { (code: $0.key, count: $0.value) }
        return summary
    }
}
