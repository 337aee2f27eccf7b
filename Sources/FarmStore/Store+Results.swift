import FarmCore
import SQLite
import Zlib

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
    ///
    /// `document` is the page's document, for `document_counts`, when the caller knows it (the coordinator, from
    /// the lease it made); nil has the store look it up, one query more: for a result whose lease this caller did
    /// not make (a coordinator restarted since, or the lease was taken back), and for tests.
    @discardableResult
    public func complete(_ attempt: AttemptID, of document: DocumentID? = nil, by worker: WorkerID, output: PageOutput,
                         startedAt: Double?, now: Double = Clock.now) throws -> Bool
    {
        if connection.isAutocommit {
            return try write {
                try complete(attempt, of: document, by: worker, output: output, startedAt: startedAt, now: now)
            }
        }
        guard let was = try markDone(attempt, by: worker, now: now) else {
            try recordSuperseded(attempt, worker: worker, startedAt: startedAt, now: now)
            return false
        }
        guard let document = try document ?? self.document(of: attempt.page) else {
            throw StoreError("page \(attempt.page.rawValue) was made done and then not found")
        }
        try countChange(of: document.rawValue, from: was, to: .done)
        // The page's model (render on demand) is kept compressed in its result row, not among the renderings;
        // written with the row (one insert, not an insert and an update of the same row).
        let model = output.artifacts.first { $0.0 == Self.modelName }?.1
        let renderings = output.artifacts.filter { $0.0 != Self.modelName }
        let row: [SQLiteValue] = [
            .integer(attempt.page.rawValue), .integer(Int64(attempt.number)), .text(worker.rawValue), .text(output.engine),
            .text(output.text), .real(output.meanConfidence), .integer(Int64(output.width)), .integer(Int64(output.height)),
            .blob(output.structure), .text(output.timings), .real(now), model.map { .blob(Self.packed($0)) } ?? .null,
        ]
        // A page read for the first time has no result row: the insert is all. A page read again (`reread`) has its
        // earlier result, which the insert leaves alone; it goes to the history now, not before, and the new row
        // takes its place. (Asking first would cost every page a query for the rare page read again.)
        var readBefore = false
        if try hot(.insertResult, """
            INSERT OR IGNORE INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height,
                                           structure, timings, finished_at, model)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(row) == 0 {
            readBefore = try archiveResult(of: attempt.page, now: now)
            try connection.cached("""
                INSERT INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height, structure,
                                     timings, finished_at, model)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(row)
        }
        try indexForSearch(attempt.page, text: output.text)
        if model != nil && readBefore {
            // Renderings of an earlier reading (`reread`) that this one did not freeze would be exported in place of
            // the ones rendered from the new model: they go. A page read for the first time has none.
            try connection.cached("DELETE FROM artifacts WHERE page_id = ? AND name IN ('pdf', 'hocr', 'alto', 'page', 'json')")
                .execute([.integer(attempt.page.rawValue)])
        }
        if !renderings.isEmpty {
            let insert = try connection.cached("INSERT OR REPLACE INTO artifacts (page_id, name, data) VALUES (?, ?, ?)")
            for (name, data) in renderings {
                try insert.execute([.integer(attempt.page.rawValue), .text(name), .blob(data)])
            }
        }
        // The attempt's row says done, even when a lost or interrupted row of the same attempt was written first.
        try recordAttempt(attempt, worker: worker, startedAt: startedAt, now: now, outcome: .done, replacing: true)
        return true
    }
}

extension Store {
    /// The SQL that makes a page done (`markDone`); bound: time, page, attempt, worker.
    private static let doneSQL = """
        UPDATE OR FAIL pages SET state = 'done', lease_worker = NULL, leased_at = NULL, lease_expires = NULL, updated_at = ?,
                         failure_stage = NULL, failure_code = NULL, failure_message = NULL
        WHERE id = ? AND attempts = ? AND
        """
    private static let doneFromLeasedSQL = doneSQL + " " + heldByLease
    private static let doneFromQueuedSQL = doneSQL + " " + takenBackFrom

    /// Makes `attempt`'s page done if the attempt is the page's current one and `worker`'s; returns the state it
    /// left (for `document_counts`), or nil when the page has moved on.
    ///
    /// Only the worker the attempt was given to may complete it (issue 18): the lease holder (`heldByLease`), or,
    /// for a page taken back but not handed out again, the worker its attempt row names (`takenBackFrom`): the two
    /// SQL fragments `attemptHeldBy` joins for `attempt(_:isHeldBy:)`, so the rule is written once. The two cases
    /// are two statements, so the state the page left is known without `RETURNING` (a temporary table a
    /// statement, decision 0089); the second runs only when the first changed nothing. `OR FAIL`: no statement
    /// journal, as for `lease(_:to:now:expires:)` with a `QueuedPage` (decision 0089).
    private func markDone(_ attempt: AttemptID, by worker: WorkerID, now: Double) throws -> PageState? {
        let bound: [SQLiteValue] = [.real(now), .integer(attempt.page.rawValue), .integer(Int64(attempt.number)),
                                    .text(worker.rawValue)]
        if try hot(.doneFromLeased, Self.doneFromLeasedSQL).execute(bound) == 1 { return .leased }
        return try hot(.doneFromQueued, Self.doneFromQueuedSQL).execute(bound) == 1 ? .queued : nil
    }

}

/// The page models (`PageModel`): what a worker sends as the artifact named `model`, kept zlib-compressed in
/// `results.model` (4 bytes of the JSON's length, little-endian, then the deflated JSON).
extension Store {
    /// The name a worker sends its page's model under, among the renderings.
    public static let modelName = "model"

    /// The most a stored model may inflate to: a model is a few hundred KB; more is a damaged row.
    static let maximumModelBytes = 256 << 20

    /// Models shorter than this are kept in stored (level 0) deflate blocks: deflating a few hundred bytes costs
    /// zlib about 5 µs whatever the level (a ninth of the coordinator's time for an empty page, decision 0089)
    /// to save a few dozen bytes. Any inflater reads either; real pages' models are kilobytes and are deflated.
    static let smallestDeflatedModel = 1024

    static func packed(_ json: [UInt8]) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: json.count)
        let level: Int32 = json.count < smallestDeflatedModel ? 0 : 6
        return [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
            + Zlib.compress(json, level: level)
    }

    static func unpacked(_ blob: [UInt8]) throws -> [UInt8] {
        guard blob.count > 4 else { throw StoreError("a stored page model is too short (\(blob.count) bytes)") }
        let size = Int(blob[0]) | Int(blob[1]) << 8 | Int(blob[2]) << 16 | Int(blob[3]) << 24
        guard size <= maximumModelBytes else { throw StoreError("a stored page model says it is \(size) bytes") }
        do {
            return try Zlib.decompress(Array(blob[4...]), size: size)
        } catch {
            throw StoreError("a stored page model cannot be inflated: \(error.description)")
        }
    }

    /// Whether the store has page models (schema 11 and later).
    func hasModels() throws -> Bool { try connection.userVersion >= 11 }

    /// Whether a done page's result has a model (its renderings can be rendered on demand).
    public func hasModel(_ page: PageID) throws -> Bool {
        guard try hasModels() else { return false }
        return try connection.cached("SELECT 1 FROM results WHERE page_id = ? AND model IS NOT NULL")
            .first([.integer(page.rawValue)]) { _ in true } ?? false
    }

    /// A done page's text and stored model as kept (compressed), to be read by `model(text:packed:)` on any thread;
    /// nil when the page has no model.
    public func packedModel(of page: PageID) throws -> (text: String, packed: [UInt8])? {
        guard try hasModels() else { return nil }
        return try connection.cached("SELECT text, model FROM results WHERE page_id = ? AND model IS NOT NULL")
            .first([.integer(page.rawValue)]) { row in (text: row.text(0), packed: row.blob(1)) }
    }

    /// The model in `packed` (`packedModel(of:)`) with the page's `text`; nil when it does not read back.
    public static func model(text: String, packed: [UInt8]) -> PageModel? {
        guard let bytes = try? unpacked(packed) else { return nil }
        return PageModel(bytes: bytes, text: text)
    }

    /// The names of the renderings stored with a page's result.
    public func artifactNames(of page: PageID) throws -> Set<String> {
        Set(try connection.cached("SELECT name FROM artifacts WHERE page_id = ?").rows([.integer(page.rawValue)]) { $0.text(0) })
    }

    /// The model of a done page, to render it (`PageModel`); nil when the page has no result or its result has no
    /// model (stored before models were, or by a worker that sends none), or the model does not read back.
    public func model(of page: PageID) throws -> PageModel? {
        try packedModel(of: page).flatMap { Self.model(text: $0.text, packed: $0.packed) }
    }
}
