import Testing
import FarmCore
import FarmProtocol
@testable import FarmStore
import TestSupport
import ZeroMQ
import Foundation

/// Issue 18, item 2, end to end: a coordinator and a worker as processes with CURVE on tcp 127.0.0.1, real
/// Tesseract, and a scripted rogue worker (a DEALER in this process speaking the protocol) whose key is
/// authorized but is not the worker's. It claims the worker's id and the leases it holds, and sends forged results.
@Suite("Worker identity bound to its CURVE key (end to end)", .serialized)
struct WorkerIdentityEndToEndTests {
    func keygen(_ farm: FarmHarness, _ name: String) throws -> CurveKeyPair {
        let result = try Run.ocrfarm(["keygen", "--out", farm.folder.file(name)])
        #expect(result.status == 0, "\(result.stderr)")
        func read(_ suffix: String) throws -> String {
            try String(contentsOfFile: farm.folder.file(name + suffix), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return CurveKeyPair(publicKey: try read(".pub"), secretKey: try read(".key"))
    }

    /// The pages leased now: their attempt and the worker holding each.
    func leases(_ farm: FarmHarness) throws -> [(attempt: AttemptID, worker: String)] {
        let store = try Store(path: farm.storePath, readOnly: true)
        return try store.connection.prepare("SELECT id, attempts, lease_worker FROM pages WHERE state = 'leased' ORDER BY id")
            .rows([]) { (AttemptID(page: PageID($0.int64(0)), number: $0.int(1)), $0.text(2)) }
    }

    @Test("a rogue with an authorized key claiming a worker's id is refused and logged; the worker keeps its leases, every page is the worker's reading")
    func rogueClaimsWorkerID() throws {
        let farm = FarmHarness()
        let coordinatorKeys = try keygen(farm, "coordinator")
        try FileManager.default.createDirectory(atPath: farm.folder.file("workers"), withIntermediateDirectories: true)
        let workerKeys = try keygen(farm, "workers/w1")
        let rogueKeys = try keygen(farm, "workers/rogue")
        let pages = try TestImages.phototestCopies(4, in: farm.folder)
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port, ["--heartbeat", "200", "--curve-secret", farm.folder.file("coordinator.key"),
                                                                 "--authorized-workers", farm.folder.file("workers")])
        // One slot and a prefetch of 3: the worker holds all four leases while it reads them one after another.
        _ = try farm.startWorker(port: port, ["--slots", "1", "--prefetch", "3", "--heartbeat", "200",
                                              "--curve-secret", farm.folder.file("workers/w1.key"),
                                              "--coordinator-key", farm.folder.file("coordinator.pub")], name: "w1")
        var held: [(attempt: AttemptID, worker: String)] = []
        let leased = try FarmHarness.wait(seconds: 60) { held = try leases(farm); return held.count >= 2 }
        #expect(leased, "\(farm.logs)")
        let victim = try #require(held.first?.worker)
        #expect(held.allSatisfy { $0.worker == victim })

        let context = try Context()
        let rogue = try Socket(context, type: .dealer)
        try rogue.set(.linger, 0)
        try rogue.makeCurveClient(CurveClientKeys(serverKey: coordinatorKeys.publicKey, pair: rogueKeys))
        try rogue.connect("tcp://127.0.0.1:\(port)")
        try rogue.send(FrameCodec.encode(.hello(Hello(worker: WorkerID(victim), host: "rogue", pid: 1, version: FarmVersion.string,
                                                      slots: 4, languages: ["eng"], engine: "tesseract",
                                                      held: held.map(\.attempt)))))
        for lease in held {
            try rogue.send(FrameCodec.encode(.result(ResultMessage(
                attempt: lease.attempt, engine: "tesseract", meanConfidence: 99, width: 1, height: 1,
                timings: [StageTiming(stage: "recognize", milliseconds: 1)], text: Array("FORGED".utf8),
                structure: Array("{}".utf8)))))
        }
        try rogue.send(FrameCodec.encode(.credit(4)))
        var answers: [FarmProtocol.Message] = []
        let answered = try FarmHarness.wait(seconds: 20) {
            while let frames = try rogue.receive(timeoutMilliseconds: 100) { answers.append(try FrameCodec.decode(frames)) }
            return answers.contains { if case .bye(let bye) = $0 { bye.reason.contains("belongs to another key") } else { false } }
        }
        #expect(answered, "\(answers)\n\(farm.logs)")
        #expect(!answers.contains { if case .job = $0 { true } else { false } }, "the rogue got no page")

        let finished = try FarmHarness.wait(seconds: 240) { try Store(path: farm.storePath, readOnly: true).status().count(.done) == 4 }
        #expect(finished, "\(farm.logs)")
        farm.stopAll()

        let store = try Store(path: farm.storePath, readOnly: true)
        let results = try store.connection.prepare("SELECT worker_id, text FROM results ORDER BY page_id").rows([]) { ($0.text(0), $0.text(1)) }
        #expect(results.count == 4)
        for (worker, text) in results {
            #expect(worker == victim)
            #expect(text.contains("quick brown") && !text.contains("FORGED"), "\(text)")
        }
        // The worker kept every lease it held: no attempt was returned or lost, each page was read once.
        let outcomes = try store.connection.prepare("SELECT outcome FROM attempts ORDER BY page_id, number").rows([]) { $0.text(0) }
        #expect(outcomes == ["done", "done", "done", "done"], "\(outcomes)\n\(farm.logs)")

        let log = coordinator.log
        let warning = try #require(log.split(separator: "\n").first { $0.contains("refused a worker id claimed by another key") },
                                   "\(log)")
        #expect(warning.contains(victim), "\(warning)")
        #expect(warning.contains(String(workerKeys.publicKey.prefix(8))) && warning.contains(String(rogueKeys.publicKey.prefix(8))),
                "\(warning)")
        #expect(!log.contains(rogueKeys.secretKey) && !log.contains(workerKeys.secretKey))
    }
}
