import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation

/// The farm's logs as a log shipper sees them: `--log-format json` gives one JSON object per line, every line
/// with time, level and role, every line about a page with the page, the attempt and the worker.
@Suite("Logs (end to end)", .serialized)
struct LogFormatTests {
    static let fast = ["--heartbeat", "200"]

    /// Every line of a log as a JSON object of strings; a line that is not one is recorded as a problem.
    static func events(_ log: String, name: String) -> (events: [[String: String]], problems: [String]) {
        var events: [[String: String]] = []
        var problems: [String] = []
        for line in log.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let event = object as? [String: String] else {
                problems.append("\(name): not a JSON object of strings: \(line)")
                continue
            }
            events.append(event)
        }
        if !log.isEmpty && !log.hasSuffix("\n") { problems.append("\(name): the last line is unfinished") }
        return (events, problems)
    }

    /// The fields every event has, and those of an event about a page.
    static func fieldProblems(_ events: [[String: String]], name: String, role: String) -> [String] {
        var problems: [String] = []
        for event in events {
            for key in ["time", "level", "role", "msg"] where (event[key] ?? "").isEmpty {
                problems.append("\(name): no \(key): \(event)")
            }
            if event["role"] != role { problems.append("\(name): role is not \(role): \(event)") }
            if !["debug", "info", "warn", "error"].contains(event["level"] ?? "") { problems.append("\(name): level: \(event)") }
            // ISO 8601 in UTC, e.g. 2026-12-01T02:49:59.123Z.
            if event["time"]?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/) == nil {
                problems.append("\(name): time: \(event)")
            }
            let aboutAPage = event["msg"]?.contains(/\bpage\b/) == true || event["page"] != nil
            if aboutAPage {
                for key in ["page", "attempt", "worker"] where (event[key] ?? "").isEmpty {
                    problems.append("\(name): a page event without \(key): \(event)")
                }
                if let page = event["page"], Int(page) == nil { problems.append("\(name): page is not an id: \(event)") }
                if let attempt = event["attempt"], (Int(attempt) ?? 0) < 1 { problems.append("\(name): attempt: \(event)") }
            }
        }
        return problems
    }

    @Test("--log-format json: every line of the coordinator's and workers' logs is a JSON event; page events name page, attempt and worker")
    func jsonLogs() throws {
        let farm = FarmHarness()
        let folder = farm.folder.file("in")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let original = try Fixtures.read("tesseract-testdata/phototest.tif")
        for index in 0..<3 { farm.folder.write("in/photo \(index).tif", original + Array("copy \(index)".utf8)) }
        // Too many pixels for the workers' --max-pixels: fails in the worker, for good.
        farm.folder.write("in/huge \"poster\".png", BadInput.pngBomb(width: 3000, height: 3000))
        // Gone before dispatch: fails in the coordinator.
        let doomed = farm.folder.write("in/gone.png", TestImages.png(marker: "gone"))
        #expect(try farm.submit([folder]).status == 0)
        try FileManager.default.removeItem(atPath: doomed)

        let port = FarmHarness.freePort()
        let json = ["--log-format", "json", "--log-level", "debug"]
        let workerOptions = ["--slots", "1", "--prefetch", "1", "--max-pixels", "1000000"] + json + Self.fast
        let coordinator = try farm.startCoordinator(port: port, json + Self.fast)
        let victim = try farm.startWorker(port: port, workerOptions, name: "victim")
        // kill -9 while the victim holds pages: the coordinator must take them back.
        let leased = try FarmHarness.wait(seconds: 30) {
            try Store(path: farm.storePath, readOnly: true).pages().contains { $0.state == .leased && $0.source.description.contains("photo") }
        }
        #expect(leased, "\(farm.logs)")
        victim.kill9()
        let survivor = try farm.startWorker(port: port, workerOptions, name: "survivor")
        let finished = try FarmHarness.wait(seconds: 120) {
            let status = try Store(path: farm.storePath, readOnly: true).status()
            return status.count(.done) + status.count(.failed) == 5
        }
        #expect(finished, "\(farm.logs)")
        farm.stopAll()

        let (coordinatorEvents, coordinatorProblems) = Self.events(coordinator.log, name: "coordinator")
        let (victimEvents, victimProblems) = Self.events(victim.log, name: "victim")
        let (survivorEvents, survivorProblems) = Self.events(survivor.log, name: "survivor")
        #expect(coordinatorProblems + victimProblems + survivorProblems == [])
        #expect(Self.fieldProblems(coordinatorEvents, name: "coordinator", role: "coordinator") == [])
        #expect(Self.fieldProblems(victimEvents + survivorEvents, name: "worker", role: "worker") == [])

        // Every worker line names its worker, the id the coordinator saw join.
        let joined = coordinatorEvents.filter { $0["msg"] == "worker joined" }.compactMap { $0["worker"] }
        #expect(joined.count == 2, "\(coordinator.log)")
        for (events, name) in [(victimEvents, "victim"), (survivorEvents, "survivor")] {
            let ids = Set(events.compactMap { $0["worker"] })
            #expect(ids.count == 1 && joined.contains(ids.first ?? "") && events.allSatisfy { $0["worker"] != nil }, "\(name): \(ids)")
        }
        let victimID = victimEvents.first?["worker"] ?? "?"
        let survivorID = survivorEvents.first?["worker"] ?? "?"

        // The coordinator tells each page's story.
        func messages(_ msg: String) -> [[String: String]] { coordinatorEvents.filter { $0["msg"] == msg } }
        // A page's source is its document's name (the submitted path), with "page N" for a page of a PDF.
        func file(_ event: [String: String]?) -> String { FileSystem.baseName(event?["source"] ?? "") }
        let done = messages("page done")
        #expect(done.count == 3 && done.allSatisfy { file($0).hasPrefix("photo ") && Int($0["duration_ms"] ?? "") != nil },
                "\(done)")
        let failed = messages("page failed")
        #expect(Set(failed.map { file($0) }) == ["huge \"poster\".png", "gone.png"], "\(failed)")
        #expect(failed.first { file($0) == "gone.png" }?["code"] == "source-changed")
        #expect(failed.first { file($0) == "gone.png" }?["stage"] == "dispatch")
        let huge = failed.first { file($0).hasPrefix("huge") }
        #expect([victimID, survivorID].contains(huge?["worker"] ?? "") && huge?["level"] == "warn"
                && huge?["code"] == "image-too-large" && (huge?["error"] ?? "").contains("3000x3000"), "\(failed)")
        let takenBack = messages("page taken back; will retry")
        #expect(!takenBack.isEmpty && takenBack.allSatisfy { $0["worker"] == victimID && $0["code"] == "worker-lost" },
                "\(coordinator.log)")
        #expect(messages("worker lost").map { $0["worker"] } == [victimID])
        // A page taken back is read again on a later attempt.
        for event in takenBack {
            let again = coordinatorEvents.filter { $0["page"] == event["page"] && $0["worker"] == survivorID }
            #expect(again.contains { Int($0["attempt"] ?? "") == (Int(event["attempt"] ?? "") ?? 0) + 1 }, "\(event)")
        }
        #expect(messages("page leased").count >= 5)

        // The worker tells its side: what it read and what it could not.
        let read = survivorEvents.filter { $0["msg"] == "page read" }
        #expect(!read.isEmpty && read.allSatisfy { $0["source"] != nil && $0["duration_ms"] != nil })
        let workerFailure = (victimEvents + survivorEvents).first { $0["msg"] == "page failed" && $0["page"] == huge?["page"] }
        #expect(workerFailure?["attempt"] == huge?["attempt"] && workerFailure?["worker"] == huge?["worker"]
                && workerFailure?["code"] == huge?["code"] && workerFailure?["source"] == huge?["source"], "\(farm.logs)")
    }

    @Test("--log-level warn keeps info lines out; what is left is still one JSON event a line")
    func warnLevel() throws {
        let farm = FarmHarness()
        let folder = farm.folder.file("in")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        farm.folder.write("in/fine.png", TestImages.png(marker: "fine"))
        let doomed = farm.folder.write("in/gone.png", TestImages.png(marker: "gone"))
        #expect(try farm.submit([folder]).status == 0)
        try FileManager.default.removeItem(atPath: doomed)
        let port = FarmHarness.freePort()
        let options = ["--log-format", "json", "--log-level", "warn"] + Self.fast
        let coordinator = try farm.startCoordinator(port: port, options)
        let worker = try farm.startWorker(port: port, ["--engine", "none"] + options, name: "worker")
        let finished = try FarmHarness.wait(seconds: 30) {
            let status = try Store(path: farm.storePath, readOnly: true).status()
            return status.count(.done) + status.count(.failed) == 2
        }
        #expect(finished, "\(farm.logs)")
        farm.stopAll()
        let (coordinatorEvents, coordinatorProblems) = Self.events(coordinator.log, name: "coordinator")
        let (workerEvents, workerProblems) = Self.events(worker.log, name: "worker")
        #expect(coordinatorProblems + workerProblems == [])
        #expect(Self.fieldProblems(coordinatorEvents, name: "coordinator", role: "coordinator") == [])
        #expect(Self.fieldProblems(workerEvents, name: "worker", role: "worker") == [])
        // Not silence: the failed page is a warning...
        #expect(coordinatorEvents.contains { $0["msg"] == "page failed" && $0["level"] == "warn" && $0["code"] == "source-changed" },
                "\(coordinator.log)")
        // ...while the info lines (started, joined, page done, stopped) are gone.
        for event in coordinatorEvents + workerEvents {
            #expect(event["level"] == "warn" || event["level"] == "error", "\(event)")
        }
        #expect(!coordinator.log.contains("page done") && !coordinator.log.contains("coordinator started"))
    }
}
