import FarmCore
import SQLite

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

extension Store {
    /// Records a result. Only the page's current attempt counts, and only once: a result for a superseded
    /// attempt or a page already done is kept in the attempt history and otherwise ignored. Returns true when
    /// the result was recorded.
    @discardableResult
    public func complete(_ attempt: AttemptID, by worker: WorkerID, output: PageOutput, startedAt: Double?,
                         now: Double = Clock.now) throws -> Bool
    {
        // Only the worker the attempt was given to may complete it (issue 18): the lease holder, or, for a page
        // taken back but not handed out again (a coordinator restart, a lost worker), the worker its attempt row names.
        let changed = try connection.cached("""
            UPDATE pages SET state = 'done', lease_worker = NULL, leased_at = NULL, lease_expires = NULL, updated_at = ?,
                             failure_stage = NULL, failure_code = NULL, failure_message = NULL
            WHERE id = ? AND attempts = ? AND \(Self.attemptHeldBy)
            """).execute([.real(now), .integer(attempt.page.rawValue), .integer(Int64(attempt.number)),
                          .text(worker.rawValue), .text(worker.rawValue)])
        guard changed == 1 else {
            try recordSuperseded(attempt, worker: worker, startedAt: startedAt, now: now)
            return false
        }
        // A page read again (`reread`) has its earlier result: it goes to the history now, not before.
        try archiveResult(of: attempt.page, now: now)
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
        // The attempt's row says done, even when a lost or interrupted row of the same attempt was written first.
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: .done, replacing: true)
        return true
    }
}
