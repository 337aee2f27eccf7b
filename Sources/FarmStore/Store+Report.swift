import FarmCore
import SQLite

extension Store {
    /// Up to `limit` document names that contain `text` (case-insensitive for ASCII), for "did you mean".
    public func documentNames(containing text: String, limit: Int = 5) throws -> [String] {
        try connection.cached("""
            SELECT DISTINCT name FROM documents WHERE instr(lower(name), lower(?)) > 0 ORDER BY name LIMIT ?
            """).rows([.text(text), .integer(Int64(limit))]) { $0.text(0) }
    }

    /// A snapshot of the farm in one read transaction (see `FarmReport` for what each part costs).
    ///
    /// - Parameters:
    ///   - scope: limit pages, documents, failures and the ETA to these documents; throughput, workers and stage
    ///     times stay the farm's.
    ///   - sampleSize: how many of the most recent results the stage times and worker rates come from.
    ///   - documentLimit: how many unfinished documents to list.
    public func report(scope: [DocumentRecord]? = nil, now: Double = Clock.now, sampleSize: Int = 2000,
                       documentLimit: Int = 100) throws -> FarmReport
    {
        try read {
            let liveness = try self.liveness()
            var pages = PageCounts()
            var progress: [FarmReport.DocumentProgress] = []
            var truncated = false
            let documents: Int
            if let scope {
                for document in scope {
                    let counts = try documentCounts(document)
                    pages = pages + counts
                    progress.append(FarmReport.DocumentProgress(id: document.id, name: document.name, pages: counts))
                }
                documents = scope.count
            } else {
                // count(*) counts b-tree cells without reading them. The pages not done come from one pass over
                // the partial index `pages_unfinished` (schema 10; from schema 12 `document_counts_unfinished`, a
                // row per document) in document order, which lists the unfinished
                // documents and, when it reads to the end (at most `documentLimit` documents with work), also
                // gives the farm's counts; otherwise they are an index range of their own. The pages being reread
                // are looked up once, for both.
                // Schema 12 keeps each document's pages by state: the total is a thousand rows, not a million cells.
                let total = try connection.cached(try hasDocumentCounts()
                    ? "SELECT coalesce(sum(queued + leased + done + failed), 0) FROM document_counts"
                    : "SELECT count(*) FROM pages").first { $0.int(0) } ?? 0
                let rereading = try rereadingPages()
                let unfinished = try unfinishedDocuments(limit: documentLimit, rereading: rereading)
                (progress, truncated) = (unfinished.listed, unfinished.truncated)
                if let counts = unfinished.counts {
                    pages = counts
                } else {
                    try countUnfinished(&pages)
                    for (queued, leased) in rereading.values {
                        (pages.queued, pages.leased) = (pages.queued - queued, pages.leased - leased)
                        pages.rereading += queued + leased
                    }
                }
                pages.done = max(0, total - pages.total)
                documents = try connection.cached("SELECT count(*) FROM documents").first { $0.int(0) } ?? 0
            }

            let throughput = try throughputFigures(now: now, farmDone: scope == nil ? pages.done : nil)
            let counters = try setting("counters").flatMap { try? JSON.parse($0) }
            // No ETA without a coordinator to read the pages left, however fast the last run was.
            let running = FarmReport.coordinatorRunning(counters: counters, now: now, liveness: liveness)
            let eta: Double? = pages.remaining == 0 ? 0
                : running && throughput.lastMinuteCount > 0 ? Double(pages.remaining) / throughput.lastMinute : nil

            let sample = try recentResults(limit: sampleSize)
            let rates = workerRates(sample, now: now, farmRate: throughput.lastMinute)
            // The partial index `pages_leases` holds only the leased pages: a row per page in hand.
            let leases = Dictionary(uniqueKeysWithValues: try connection.cached("""
                SELECT lease_worker, count(*) FROM pages WHERE state = 'leased' AND lease_worker IS NOT NULL GROUP BY lease_worker
                """).rows([]) { (WorkerID($0.text(0)), $0.int(1)) })
            let workers = try connection.cached("""
                SELECT id, host, pid, slots, engine, languages, first_seen, last_seen, state, pages_done, pages_failed
                FROM workers ORDER BY state != 'alive', last_seen DESC, id
                """).rows([]) { row in
                WorkerRecord(id: WorkerID(row.text(0)), host: row.text(1), pid: row.int(2), slots: row.int(3),
                             engine: row.text(4), languages: row.text(5), firstSeen: row.double(6), lastSeen: row.double(7),
                             state: row.text(8), pagesDone: row.int(9), pagesFailed: row.int(10))
            }.map { record in
                FarmReport.WorkerReport(record: record, condition: record.condition(at: now, liveness: liveness),
                                        pagesPerSecond: rates[record.id] ?? 0, leased: leases[record.id] ?? 0)
            }

            return FarmReport(store: path, generatedAt: now, scope: scope, documents: documents, pages: pages,
                              documentProgress: progress, documentProgressTruncated: truncated, throughput: throughput,
                              etaSeconds: eta, failures: try failureGroups(in: scope), workers: workers,
                              sampleSize: sample.count, stages: Self.stageTimes(sample), liveness: liveness,
                              coordinatorCounters: counters,
                              storeDisk: diskSpace)
        }
    }

    // MARK: Parts of the report

    /// The farm's pages queued, leased and failed, as stored (the pages being reread still among them): from
    /// `document_counts` (schema 12, its partial index holding the documents with such pages), else counted.
    private func countUnfinished(_ pages: inout PageCounts) throws {
        if try hasDocumentCounts() {
            let sums = try connection.cached("""
                SELECT coalesce(sum(queued), 0), coalesce(sum(leased), 0), coalesce(sum(failed), 0) FROM document_counts
                WHERE queued + leased + failed > 0
                """).first { ($0.int(0), $0.int(1), $0.int(2)) }
            (pages.queued, pages.leased, pages.failed) = sums ?? (0, 0, 0)
            return
        }
        for (state, count) in try connection.cached("""
            SELECT state, count(*) FROM pages WHERE state IN ('queued', 'leased', 'failed') GROUP BY state
            """).rows([], { ($0.text(0), $0.int(1)) })
        {
            if let state = PageState(rawValue: state) { pages[state] = count }
        }
    }

    /// A document's pages by state: the pages not done are counted (few, once a batch is under way), the rest
    /// are done (`page_count` is written with the pages, which are never deleted).
    private func documentCounts(_ document: DocumentRecord) throws -> PageCounts {
        var counts = PageCounts()
        for (state, count) in try connection.cached("""
            SELECT state, count(*) FROM pages WHERE document_id = ? AND state IN ('queued', 'leased', 'failed') GROUP BY state
            """).rows([.integer(document.id.rawValue)], { ($0.text(0), $0.int(1)) })
        {
            if let state = PageState(rawValue: state) { counts[state] = count }
        }
        try moveRereadingToDone(&counts, document: document.id)
        counts.done = max(0, document.pageCount - counts.total)
        return counts
    }

    /// Takes the pages being reread (queued or leased with a current result: `reread` keeps it until the new
    /// one lands) out of `queued` and `leased` into `rereading`; the caller's `done` (total minus the others)
    /// then counts them. Probes `results` by key for each queued or leased page of `document` only.
    private func moveRereadingToDone(_ counts: inout PageCounts, document: DocumentID) throws {
        for (state, count) in try connection.cached("""
            SELECT p.state, count(*) FROM pages p
            WHERE p.state IN ('queued', 'leased') AND EXISTS (SELECT 1 FROM results r WHERE r.page_id = p.id)
                  AND p.document_id = ? GROUP BY p.state
            """).rows([.integer(document.rawValue)], { ($0.text(0), $0.int(1)) })
        {
            guard let state = PageState(rawValue: state) else { continue }
            counts[state] = max(0, counts[state] - count)
            counts.rereading += count
        }
    }

    /// Documents with pages not done: first those with pages queued or leased, then those with only failures,
    /// each in submission order; at most `limit`. One pass in document order over the partial index
    /// `pages_unfinished` (schema 10; before it, `pages_document_state` read whole) that stops once `limit + 1`
    /// documents with work are found; the pages being reread come from `rereadingPages`. `counts`: the farm's
    /// pages not done (`done` left 0) when the pass read every unfinished page, else nil.
    private func unfinishedDocuments(limit: Int, rereading: [DocumentID: (queued: Int, leased: Int)]) throws
        -> (listed: [FarmReport.DocumentProgress], truncated: Bool, counts: PageCounts?)
    {
        // Schema 12 keeps the same sums per document (`document_counts`, its partial index holding the documents
        // with pages not done): a row per unfinished document instead of one per unfinished page.
        let statement = try connection.cached(try hasDocumentCounts() ? """
            SELECT document_id, queued, leased, failed FROM document_counts
            WHERE queued + leased + failed > 0 ORDER BY document_id
            """ : """
            SELECT document_id, sum(state = 'queued'), sum(state = 'leased'), sum(state = 'failed')
            FROM pages WHERE state != 'done' GROUP BY document_id ORDER BY document_id
            """)
        var active: [(DocumentID, PageCounts)] = []
        var failedOnly: [(DocumentID, PageCounts)] = []
        var sum = PageCounts()
        var complete = true
        defer { statement.reset() }
        while try statement.step() {
            let document = DocumentID(statement.int64(0))
            let reread = rereading[document] ?? (0, 0)
            var counts = PageCounts()
            (counts.queued, counts.leased, counts.failed) = (statement.int(1) - reread.queued, statement.int(2) - reread.leased,
                                                             statement.int(3))
            counts.rereading = reread.queued + reread.leased
            sum = sum + counts
            if counts.remaining > 0 {
                active.append((document, counts))
            } else if failedOnly.count <= limit {
                failedOnly.append((document, counts))
            }
            if active.count > limit {
                complete = false
                break
            }
        }
        let truncated = active.count + failedOnly.count > limit
        let describe = try connection.cached("SELECT name, page_count FROM documents WHERE id = ?")
        var listed: [FarmReport.DocumentProgress] = []
        for (id, counts) in (active + failedOnly).prefix(limit) {
            guard let (name, pageCount) = try describe.first([.integer(id.rawValue)], { ($0.text(0), $0.int(1)) }) else { continue }
            var counts = counts
            counts.done = max(0, pageCount - counts.total)
            listed.append(FarmReport.DocumentProgress(id: id, name: name, pages: counts))
        }
        return (listed, truncated, complete ? sum : nil)
    }

    /// The pages being reread (queued or leased with a current result), by document. `results` is looked up only
    /// for pages queued or leased that were tried before (a page never leased has no result): from schema 10 the
    /// candidates come from the covering index `pages_unfinished`, before it from `pages_state`.
    private func rereadingPages() throws -> [DocumentID: (queued: Int, leased: Int)] {
        let candidates = try connection.userVersion >= 10
            ? "p.state != 'done' AND +p.state IN ('queued', 'leased') AND p.attempts > 0"
            : "p.state IN ('queued', 'leased') AND p.attempts > 0"
        var found: [DocumentID: (queued: Int, leased: Int)] = [:]
        for (document, state, count) in try connection.cached("""
            SELECT p.document_id, p.state, count(*) FROM pages p CROSS JOIN results r ON r.page_id = p.id
            WHERE \(candidates) GROUP BY p.document_id, p.state
            """).rows([], { (DocumentID($0.int64(0)), $0.text(1), $0.int(2)) })
        {
            if state == "queued" { found[document, default: (0, 0)].queued += count }
            if state == "leased" { found[document, default: (0, 0)].leased += count }
        }
        return found
    }

    /// Pages done per window, from the index on `results.finished_at`; `farmDone` when already counted.
    private func throughputFigures(now: Double, farmDone: Int?) throws -> FarmReport.Throughput {
        // Since schema 10, whole minutes come from `result_minutes` (kept by triggers on `results`) and only the
        // results of the window's first minute are counted in the index: a window's cost no longer grows with
        // the pages done in it. The minute of a time is CAST(t / 60 AS INTEGER), the same in both places.
        let count = try connection.userVersion >= 10
            ? connection.cached("""
                SELECT (SELECT count(*) FROM results WHERE finished_at >= ?1 AND finished_at < (CAST(?1 / 60 AS INTEGER) + 2) * 60.0
                                                       AND CAST(finished_at / 60 AS INTEGER) = CAST(?1 / 60 AS INTEGER))
                       + (SELECT coalesce(sum(count), 0) FROM result_minutes WHERE minute > CAST(?1 / 60 AS INTEGER)),
                       (SELECT min(finished_at) FROM results WHERE finished_at >= ?1),
                       (SELECT max(finished_at) FROM results WHERE finished_at >= ?1)
                """)
            : connection.cached("SELECT count(*), min(finished_at), max(finished_at) FROM results WHERE finished_at >= ?")
        func window(_ seconds: Double) throws -> (Int, Double) {
            try count.first([.real(now - seconds)]) { row in
                (row.int(0), row.isNull(1) ? 0 : row.double(2) - row.double(1))
            } ?? (0, 0)
        }
        var throughput = FarmReport.Throughput()
        (throughput.lastMinuteCount, throughput.lastMinuteSpan) = try window(60)
        (throughput.last10MinutesCount, throughput.last10MinutesSpan) = try window(600)
        (throughput.lastHourCount, throughput.lastHourSpan) = try window(3600)
        // Schema 12 keeps every document's done pages (`pages_state`, which counted them here, is gone since 15).
        let done = try farmDone ?? connection.cached(try hasDocumentCounts()
            ? "SELECT coalesce(sum(done), 0) FROM document_counts"
            : "SELECT count(*) FROM pages WHERE state = 'done'").first { $0.int(0) } ?? 0
        // The first document by id: min(submitted_at) would read every document (no index on the time).
        let first = try connection.cached("SELECT submitted_at FROM documents ORDER BY id LIMIT 1").first { $0.double(0) }
        let last = try connection.cached("SELECT max(finished_at) FROM results").first { $0.optionalDouble(0) } ?? nil
        if let first, let last, last > first { throughput.overall = Double(done) / (last - first) }
        return throughput
    }

    /// The most recent results: who finished them, when, and their stage times (JSON text).
    private func recentResults(limit: Int) throws -> [(worker: WorkerID, finishedAt: Double, timings: String)] {
        try connection.cached("SELECT worker_id, finished_at, timings FROM results ORDER BY finished_at DESC LIMIT ?")
            .rows([.integer(Int64(limit))]) { (WorkerID($0.text(0)), $0.double(1), $0.text(2)) }
    }

    /// Pages per second of each worker over the last minute: its share of the minute's results (of the sample's
    /// results in the minute, when the sample does not reach back a minute) times the farm's pace `farmRate`, so
    /// the rates add up to the pace the ETA is reckoned from. (Counting each worker's pages over the whole minute
    /// gave a batch that started 20 s ago a third of the farm's pace in its workers, and an ETA that disagreed.)
    private func workerRates(_ sample: [(worker: WorkerID, finishedAt: Double, timings: String)], now: Double,
                             farmRate: Double) -> [WorkerID: Double]
    {
        var counts: [WorkerID: Int] = [:]
        var inWindow = 0
        for row in sample where row.finishedAt >= now - 60 {
            counts[row.worker, default: 0] += 1
            inWindow += 1
        }
        guard inWindow > 0 else { return [:] }
        return counts.mapValues { Double($0) / Double(inWindow) * farmRate }
    }

    /// Failed pages by code, most frequent first, each with its first page as an example.
    private func failureGroups(in scope: [DocumentRecord]?) throws -> [FarmReport.FailureGroup] {
        let groups: [(String?, Int, Int64)]
        let map: (Statement) -> (String?, Int, Int64) = { ($0.optionalText(0), $0.int(1), $0.int64(2)) }
        if let scope {
            let placeholders = Array(repeating: "?", count: scope.count).joined(separator: ", ")
            groups = try connection.prepare("""
                SELECT failure_code, count(*), min(id) FROM pages WHERE state = 'failed' AND document_id IN (\(placeholders))
                GROUP BY failure_code ORDER BY count(*) DESC, failure_code
                """).rows(scope.map { .integer($0.id.rawValue) }, map)
        } else {
            groups = try connection.cached("""
                SELECT failure_code, count(*), min(id) FROM pages WHERE state = 'failed'
                GROUP BY failure_code ORDER BY count(*) DESC, failure_code
                """).rows([], map)
        }
        let example = try connection.cached("""
            SELECT p.number, p.source_path, p.failure_stage, p.failure_message, d.name
            FROM pages p JOIN documents d ON d.id = p.document_id WHERE p.id = ?
            """)
        return try groups.map { code, count, page in
            let sample = try example.first([.integer(page)]) { row in
                FarmReport.FailureExample(page: PageID(page), document: row.text(4), number: row.int(0),
                                          source: RawPath(bytes: row.blob(1)), stage: row.optionalText(2),
                                          message: row.optionalText(3) ?? "")
            }
            return FarmReport.FailureGroup(code: code ?? "unknown", count: count, example: sample)
        }
    }

    /// p50 and p95 of each stage's time over the sample, stages in the order the pipeline reports them.
    static func stageTimes(_ sample: [(worker: WorkerID, finishedAt: Double, timings: String)]) -> [FarmReport.StageTime] {
        var order: [String] = []
        var values: [String: [Double]] = [:]
        for row in sample {
            guard let fields = (try? JSON.parse(row.timings))?.objectValue else { continue }
            for (stage, value) in fields {
                guard let milliseconds = value.doubleValue, milliseconds.isFinite else { continue }
                if values[stage] == nil { order.append(stage) }
                values[stage, default: []].append(milliseconds)
            }
        }
        return order.map { stage in
            let sorted = values[stage, default: []].sorted()
            return FarmReport.StageTime(stage: stage, p50: Percentile.of(sorted, 0.5), p95: Percentile.of(sorted, 0.95),
                                        sum: sorted.reduce(0, +), count: sorted.count)
        }
    }
}
