import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: the status report")
struct FarmReportTests {
    let folder = TemporaryDirectory("report-test")
    let store: Store
    let worker = WorkerID("host-a/1/x")
    let now = 10_000.0

    init() throws {
        store = try Store(path: folder.file("farm.db"))
    }

    func add(_ name: String, pages count: Int, submitted: Double) throws -> [PageID] {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/\(name)-\($0).png"), index: 0, kind: .image) }
        let id = try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: name, priority: 0,
                                            options: PageOptions(), pages: pages)], now: submitted)[0]
        return try store.pages(of: [id]).map(\.id)
    }

    /// Finishes `pages` one per second ending at `end`, the recognize stage taking 100, 200, … ms.
    func finish(_ pages: [PageID], end: Double) throws {
        try store.write {
            for (index, page) in pages.enumerated() {
                let at = end - Double(pages.count - 1 - index)
                let attempt = try #require(try store.lease(page, to: worker, now: at - 1, expires: at + 100))
                let timings = #"{"decode":5,"recognize":\#((index + 1) * 100)}"#
                let output = PageOutput(engine: "t", text: "x", meanConfidence: 90, width: 1, height: 1, structure: [], timings: timings)
                _ = try store.complete(attempt, by: worker, output: output, startedAt: at - 1, now: at)
            }
        }
    }

    func sampleStore() throws -> [PageID] {
        try store.write {
            try store.workerJoined(worker, host: "host-a", pid: 1, slots: 2, engine: "t", languages: ["eng"], version: "v", now: now - 100)
            try store.workerJoined(WorkerID("host-b/2/y"), host: "host-b", pid: 2, slots: 1, engine: "t", languages: ["eng"],
                                   version: "v", now: now - 100)
            try store.workersHeard([(worker, now - 1), (WorkerID("host-b/2/y"), now - 30)])
            try store.recordLiveness(WorkerLiveness(heartbeatMilliseconds: 1000, liveness: 3))
            // A coordinator running: its counters written a second ago (no ETA without one).
            try store.setSetting("counters", #"{"heartbeat_at":\#(now - 1)}"#)
        }
        let done = try add("done.pdf", pages: 20, submitted: now - 1000)
        let odd = try add("we\"ird\\name\nx", pages: 3, submitted: now - 900)
        try finish(done, end: now - 1)
        try store.write {
            let attempt = try #require(try store.lease(odd[0], to: worker, now: now - 5, expires: now + 100))
            _ = try store.fail(attempt, by: worker, failure: PageFailure(stage: "decode", code: .decodeFailed, message: "not an image"),
                               policy: RetryPolicy(maxAttempts: 1), startedAt: now - 5, now: now - 4)
            _ = try store.lease(odd[1], to: worker, now: now - 2, expires: now + 100)
        }
        return odd
    }

    @Test("counts, documents not done, throughput windows, ETA, failures with an example, stage percentiles, workers")
    func report() throws {
        _ = try sampleStore()
        let report = try store.report(now: now)
        #expect(report.pages.total == 23 && report.pages.done == 20 && report.pages.failed == 1)
        #expect(report.pages.leased == 1 && report.pages.queued == 1)
        #expect(report.documents == 2)
        #expect(report.documentProgress.map(\.name) == ["we\"ird\\name\nx"], "only the unfinished document is listed")
        #expect(report.documentProgress.first?.pages.failed == 1)
        #expect(report.throughput.lastMinuteCount == 20)
        // 20 pages over the last 20 s (one a second): the pace while the farm ran, not 20 spread over the minute.
        #expect(abs(report.throughput.lastMinute - 1) < 1e-9 && abs(report.throughput.last10Minutes - 1) < 1e-9)
        #expect(FarmReport.Throughput.rate(1, span: 0, window: 60) == 1.0 / 60, "one page alone counts over the window")
        // 2 pages left at one page per second.
        #expect(abs((report.etaSeconds ?? 0) - 2) < 1e-9)
        try store.setSetting("counters", #"{"heartbeat_at":\#(now - 1),"stopped_at":\#(now)}"#)
        #expect(try store.report(now: now).etaSeconds == nil, "no coordinator running: no ETA")
        try store.setSetting("counters", #"{"heartbeat_at":\#(now - 1)}"#)
        let failure = try #require(report.failures.first)
        #expect(failure.code == "decode-failed" && failure.count == 1)
        #expect(failure.example?.number == 1 && failure.example?.message == "not an image")
        let recognize = try #require(report.stages.first { $0.stage == "recognize" })
        #expect(recognize.p50 == 1000 && recognize.p95 == 1900 && recognize.count == 20)
        #expect(report.stages.map(\.stage) == ["decode", "recognize"])
        #expect(report.workers.map(\.condition) == [.alive, .silent])
        // Its share of the farm's pace (it read all 20), not its 20 pages spread over the minute (0.33/s beside an
        // ETA reckoned at 1/s).
        #expect(abs((report.workers.first?.pagesPerSecond ?? 0) - report.throughput.lastMinute) < 1e-9)
        #expect(report.workers.map(\.leased) == [1, 0], "the page leased to host-a")

        let scoped = try store.report(scope: try store.documents(named: "done.pdf"), now: now)
        #expect(scoped.pages.total == 20 && scoped.pages.done == 20 && scoped.etaSeconds == 0 && scoped.failures.isEmpty)
        #expect(try store.report(now: now + 120).etaSeconds == nil, "nothing finished in the last minute: unknown")
    }

    @Test("two one-slot workers: their rates add up to the pace the ETA is reckoned from; leased 3 is 2 read and 1 fetched ahead")
    func workerRatesAndLeases() throws {
        let (a, b) = (WorkerID("host-a/1/x"), WorkerID("host-b/2/y"))
        try store.write {
            for (id, host, pid) in [(a, "host-a", 1), (b, "host-b", 2)] {
                try store.workerJoined(id, host: host, pid: pid, slots: 1, engine: "t", languages: ["eng"], version: "v", now: now - 100)
            }
            try store.workersHeard([(a, now - 1), (b, now - 1)])
            try store.setSetting("counters", #"{"heartbeat_at":\#(now - 1)}"#)
        }
        // A batch that started 20 s ago: a read 14 pages, b 7, over the last 20 s; 9 pages left, 3 of them leased
        // (a's slot and the page it fetched ahead, b's slot).
        let pages = try add("batch.pdf", pages: 30, submitted: now - 25)
        try store.write {
            for (index, page) in pages.prefix(21).enumerated() {
                let by = index % 3 == 2 ? b : a
                let at = now - 20 + Double(index)
                let attempt = try #require(try store.lease(page, to: by, now: at - 1, expires: at + 100))
                let output = PageOutput(engine: "t", text: "x", meanConfidence: 90, width: 1, height: 1, structure: [], timings: "{}")
                _ = try store.complete(attempt, by: by, output: output, startedAt: at - 1, now: at)
            }
            for (page, by) in zip(pages[21..<24], [a, a, b]) { _ = try store.lease(page, to: by, now: now - 1, expires: now + 100) }
        }
        let report = try store.report(now: now)
        #expect(report.pages.leased == 3 && report.pages.remaining == 9)
        let rates = Dictionary(uniqueKeysWithValues: report.workers.map { ($0.record.id, $0.pagesPerSecond) })
        let pace = report.throughput.lastMinute
        #expect(abs(pace - 1) < 1e-9, "21 pages one a second")
        // Before: 14/60 and 7/60 pages/s (0.35 together) beside an ETA of 9 s at 1 page/s.
        #expect(abs((rates[a] ?? 0) - pace * 14 / 21) < 1e-9 && abs((rates[b] ?? 0) - pace * 7 / 21) < 1e-9, "\(rates)")
        #expect(abs(rates.values.reduce(0, +) - pace) < 1e-9)
        #expect(abs((report.etaSeconds ?? 0) - 9 / rates.values.reduce(0, +)) < 1e-6)
        let leased = Dictionary(uniqueKeysWithValues: report.workers.map { ($0.record.id, $0.leased) })
        #expect(leased == [a: 2, b: 1])
        let json = report.json
        #expect(json["workers"]?[0]?["leased"]?.intValue != nil)
        #expect(json["workers"]?.arrayValue?.compactMap { $0["leased"]?.intValue }.reduce(0, +) == 3)
    }

    /// The farm's counts and unfinished documents as counting every page gives them (what `report` read before
    /// schema 10's indexes and per-minute counts).
    func counted(limit: Int) throws -> (PageCounts, [Int64]) {
        var counts = PageCounts()
        var unfinished: [(Int64, Bool)] = []
        try store.connection.prepare("""
            SELECT p.document_id, p.state, r.page_id IS NOT NULL FROM pages p LEFT JOIN results r ON r.page_id = p.id ORDER BY p.id
            """).rows([]) { ($0.int64(0), $0.text(1), $0.int(2) == 1) }.forEach { document, state, hasResult in
            let state = PageState(rawValue: state)!
            if state == .done { counts.done += 1; return }
            if state != .failed && hasResult { counts.done += 1; counts.rereading += 1 } else { counts[state] += 1 }
            let active = state != .failed
            if let index = unfinished.firstIndex(where: { $0.0 == document }) {
                unfinished[index].1 = unfinished[index].1 || active
            } else {
                unfinished.append((document, active))
            }
        }
        let ordered = unfinished.sorted { $0.0 < $1.0 }
        let listed = (ordered.filter { $0.1 } + ordered.filter { !$0.1 }).prefix(limit).map { $0.0 }
        return (counts, listed)
    }

    @Test("counts from the unfinished pages' index and throughput from per-minute counts match counting every page, through reread, requeue and delete")
    func countsMatchEveryPage() throws {
        let odd = try sampleStore()
        let more = try add("more.pdf", pages: 6, submitted: now - 800)
        let third = try add("third.pdf", pages: 2, submitted: now - 700)
        try finish(Array(more.prefix(4)), end: now - 30)
        try finish([third[0]], end: now - 61.5)
        try store.write {
            let attempt = try #require(try store.lease(more[4], to: worker, now: now - 5, expires: now + 100))
            _ = try store.fail(attempt, by: worker, failure: PageFailure(stage: "decode", code: .timeout, message: "slow"),
                               policy: RetryPolicy(maxAttempts: 1), startedAt: now - 5, now: now - 4)
        }
        let documents = try store.documents(named: "more.pdf")
        try store.reread(documents[0].id, options: PageOptions(), now: now - 3)
        _ = try store.lease(more[0], to: worker, now: now - 2, expires: now + 100)
        var selection = RequeueSelection()
        selection.failed = true
        selection.pages = [odd[0]]
        _ = try store.requeue(selection, liveness: WorkerLiveness(heartbeatMilliseconds: 1000, liveness: 3), now: now - 1)
        #expect(try store.connection.userVersion >= 10)

        func check(_ label: String) throws {
            for limit in [100, 1] {
                let report = try store.report(now: now, documentLimit: limit)
                let (counts, listed) = try counted(limit: limit)
                #expect(report.pages == counts, "\(label), limit \(limit)")
                #expect(report.documentProgress.map(\.id.rawValue) == listed, "\(label), limit \(limit)")
            }
            #expect(try store.report(now: now).pages.rereading > 0, "\(label): a page is being reread")
            let minutes = try store.connection.prepare("SELECT minute, count FROM result_minutes WHERE count != 0 ORDER BY minute")
                .rows([]) { [$0.int(0), $0.int(1)] }
            let grouped = try store.connection.prepare("""
                SELECT CAST(finished_at / 60 AS INTEGER), count(*) FROM results GROUP BY 1 ORDER BY 1
                """).rows([]) { [$0.int(0), $0.int(1)] }
            #expect(minutes == grouped, "\(label): result_minutes")
            // Windows that start inside a minute, on one, and past every result.
            for at in [now, now - 0.5, now - 1.5, now - 30, now + 31.5, now + 600, 60.0 * 170] {
                let throughput = try store.report(now: at).throughput
                for (window, count) in [(60.0, throughput.lastMinuteCount), (600, throughput.last10MinutesCount),
                                        (3600, throughput.lastHourCount)] {
                    let expected = try store.connection.prepare("SELECT count(*) FROM results WHERE finished_at >= ?")
                        .first([.real(at - window)]) { $0.int(0) }
                    #expect(count == expected, "\(label): \(window) s window at \(at)")
                }
            }
        }
        try check("after reread and requeue")
        try finish([more[1]], end: now - 0.25)
        try check("after a reread landed")
        _ = try store.delete(try store.documents(named: "third.pdf").map(\.id))
        try check("after deleting a document with a result")
    }

    @Test("the text report (status for people) beside its JSON and Prometheus renderings: each section, names made printable")
    func text() throws {
        _ = try sampleStore()
        let text = try store.report(now: now).text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "store \(folder.file("farm.db")): 2 documents, 23 pages")
        #expect(lines.contains("  queued 1   leased 1   done 20   failed 1"))
        #expect(lines.contains("ETA: 2 s (2 pages left at 1.00 pages/s)"))
        #expect(lines.contains("documents with pages not done:"))
        // A newline in a name is shown escaped: one document, one line.
        #expect(lines.contains { $0.hasPrefix("  we\"ird\\name\\nx ") && $0.hasSuffix("       1") })
        #expect(lines.contains { $0.hasPrefix("  decode-failed 1   e.g. we\"ird\\name\\nx page 1 (") && $0.hasSuffix("): not an image") })
        #expect(lines.contains { $0.hasPrefix("degraded: 1 page failed for good ('we\"ird\\name\\nx' 1)") })
        #expect(lines.contains("  decode 5.0 ms / 5.0 ms   recognize 1.00 s / 1.90 s"))
        #expect(lines.contains { $0.hasPrefix("  host-a/1/x  host-a  alive  slots 2  leased 1  done ") && $0.hasSuffix("  last heard 1.0 s ago") },
                "\(text)")
        #expect(lines.contains { $0.hasPrefix("coordinator: running, last report 1.0 s ago, dispatched 0") })
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n"))
        #expect(Format.duration(59.6) == "1 min 0 s" && Format.duration(7300) == "2 h 1 min" && Format.duration(3) == "3 s")
    }

    @Test("the Prometheus exposition follows the text format and escapes label values")
    func prometheus() throws {
        _ = try sampleStore()
        let text = try store.report(now: now).prometheus
        let sample = try Regex(#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*")*\})? ([-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[-+]Inf)$"#)
        var typed: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && ["gauge", "counter", "summary"].contains(parts[3]), "\(line)")
                #expect(typed.insert(String(parts[2])).inserted, "one TYPE per family: \(line)")
                continue
            }
            if line.hasPrefix("#") { continue }
            #expect(line.wholeMatch(of: sample) != nil, "not exposition format: \(line)")
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            let family = ["_sum", "_count"].reduce(name) { $0.hasSuffix($1) && typed.contains(String($0.dropLast($1.count))) ? String($0.dropLast($1.count)) : $0 }
            #expect(typed.contains(family), "sample before its TYPE: \(line)")
        }
        #expect(text.contains(#"ocrfarm_pages{state="done"} 20"#))
        #expect(text.contains(#"document="we\"ird\\name\nx""#))
        #expect(text.contains(#"ocrfarm_stage_duration_seconds{quantile="0.5",stage="recognize"} 1"#))
        #expect(text.contains(#"ocrfarm_worker_condition{condition="silent",host="host-b",worker="host-b/2/y"} 1"#))
    }
}
