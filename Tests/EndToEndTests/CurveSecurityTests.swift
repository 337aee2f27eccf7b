import Testing
import FarmCore
import FarmStore
import TestSupport
import ZeroMQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CURVE security end to end: `keygen`, encrypted and authenticated coordinator/worker processes on loopback,
/// with a recording TCP relay between them standing in for a packet capture.
@Suite("CURVE security (end to end)", .serialized)
struct CurveSecurityTests {
    static let fast = ["--heartbeat", "200"]

    func openStore(_ farm: FarmHarness) throws -> Store { try Store(path: farm.storePath, readOnly: true) }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    func keygen(_ farm: FarmHarness, _ name: String) throws -> (secret: String, public: String) {
        let result = try Run.ocrfarm(["keygen", "--out", farm.folder.file(name)])
        #expect(result.status == 0, "\(result.stderr)")
        let secret = try String(contentsOfFile: farm.folder.file(name + ".key"), encoding: .utf8)
        let publicKey = try String(contentsOfFile: farm.folder.file(name + ".pub"), encoding: .utf8)
        return (secret.trimmingCharacters(in: .whitespacesAndNewlines), publicKey.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("keygen writes a 0600 secret and a 0644 public key of 40 Z85 characters, different each run, never replaced")
    func keygenFiles() throws {
        let farm = FarmHarness()
        let first = try keygen(farm, "one")
        let second = try keygen(farm, "two")
        #expect(mode(farm.folder.file("one.key")) == 0o600)
        #expect(mode(farm.folder.file("one.pub")) == 0o644)
        for key in [first.secret, first.public, second.secret, second.public] {
            #expect(key.utf8.count == 40 && Curve.isValidKey(key), "\(key)")
        }
        #expect(try Curve.publicKey(forSecret: first.secret) == first.public)
        #expect(first.secret != second.secret && first.public != second.public)

        let again = try Run.ocrfarm(["keygen", "--out", farm.folder.file("one")])
        #expect(again.status == 73)
        #expect(again.stderr.contains("one.key: already exists"), "\(again.stderr)")
        #expect(try keygen(farm, "one2").secret != first.secret)
        #expect(try String(contentsOfFile: farm.folder.file("one.key"), encoding: .utf8).hasPrefix(first.secret))
        #expect(try Run.ocrfarm(["keygen"]).status == 64)
    }

    @Test("bad key files are refused with exit 78 and a message naming the file")
    func badKeyFiles() throws {
        let farm = FarmHarness()
        _ = try keygen(farm, "w")
        let secret = farm.folder.file("w.key"), publicKey = farm.folder.file("w.pub")
        func worker(_ secretPath: String, _ serverPath: String) throws -> ProcessOutput {
            try Run.ocrfarm(["worker", "--engine", "none", "--connect", "tcp://127.0.0.1:1",
                             "--curve-secret", secretPath, "--coordinator-key", serverPath])
        }
        let missing = try worker(farm.folder.file("nope.key"), publicKey)
        #expect(missing.status == 78 && missing.stderr.contains("nope.key"), "\(missing.stderr)")

        farm.folder.write("short.pub", Array("abc\n".utf8))
        let short = try worker(secret, farm.folder.file("short.pub"))
        #expect(short.status == 78 && short.stderr.contains("short.pub") && short.stderr.contains("40 characters"), "\(short.stderr)")

        chmod(secret, 0o640)
        let open = try worker(secret, publicKey)
        #expect(open.status == 78 && open.stderr.contains("w.key") && open.stderr.contains("chmod 600"), "\(open.stderr)")

        let half = try Run.ocrfarm(["coordinator", "--store", farm.storePath, "--curve-secret", secret])
        #expect(half.status == 64 && half.stderr.contains("--authorized-workers"), "\(half.stderr)")
    }

    /// Keys for a coordinator and one authorized worker, plus the folder of authorized keys.
    struct Keys {
        let coordinatorSecret: String, coordinatorPublic: String, authorized: String
        let workerSecret: String
    }

    func keys(_ farm: FarmHarness) throws -> Keys {
        _ = try keygen(farm, "coordinator")
        try FileManager.default.createDirectory(atPath: farm.folder.file("workers"), withIntermediateDirectories: true)
        _ = try keygen(farm, "workers/w1")
        return Keys(coordinatorSecret: farm.folder.file("coordinator.key"), coordinatorPublic: farm.folder.file("coordinator.pub"),
                     authorized: farm.folder.file("workers"), workerSecret: farm.folder.file("workers/w1.key"))
    }

    /// Two real pages through a worker that reaches the coordinator only through a recording relay.
    func relayedRun(curve: Bool) throws -> (relay: TCPRelay, texts: [String], farm: FarmHarness) {
        let farm = FarmHarness()
        let pages = try TestImages.phototestCopies(2, in: farm.folder)
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        var coordinatorOptions = Self.fast, workerOptions = ["--slots", "1"] + Self.fast
        if curve {
            let keys = try keys(farm)
            coordinatorOptions += ["--curve-secret", keys.coordinatorSecret, "--authorized-workers", keys.authorized]
            workerOptions += ["--curve-secret", keys.workerSecret, "--coordinator-key", keys.coordinatorPublic]
        }
        _ = try farm.startCoordinator(port: port, coordinatorOptions)
        let relay = TCPRelay(to: port)
        _ = try farm.startWorker(port: relay.port, workerOptions, name: "w1")
        let finished = try FarmHarness.wait(seconds: 120) { try openStore(farm).status().count(.done) == 2 }
        #expect(finished, "\(farm.logs)")
        farm.stopAll()
        relay.stop()
        let store = try openStore(farm)
        let texts = try store.pages().compactMap { try store.text(of: $0.id) }
        return (relay, texts, farm)
    }

    @Test("with CURVE an authorized worker finishes its pages and the page text never crosses the wire in clear")
    func encryptedRun() throws {
        let (relay, texts, farm) = try relayedRun(curve: true)
        #expect(texts.count == 2 && texts.allSatisfy { $0.contains("quick brown") }, "\(texts)\n\(farm.logs)")
        // The pages (about 100 kB each) and their results did go through the relay...
        #expect(relay.bytes.count > 100_000, "\(relay.bytes.count)")
        // ...but neither the recognised text nor the image's TIFF header was readable on the way.
        #expect(!relay.carried("quick brown"))
        #expect(!relay.carried("point text"))
        #expect(try openStore(farm).status().workers.count == 1)
    }

    @Test("control: without CURVE the same run carries the page text in clear (so the check above can fail)")
    func clearRun() throws {
        let (relay, texts, farm) = try relayedRun(curve: false)
        #expect(texts.count == 2 && texts.allSatisfy { $0.contains("quick brown") }, "\(texts)\n\(farm.logs)")
        #expect(relay.carried("quick brown"))
    }

    @Test("a worker with an unknown key gets no page, and the coordinator logs its key once")
    func unknownKey() throws {
        let farm = FarmHarness()
        let keys = try keys(farm)
        let stranger = try keygen(farm, "stranger")
        let pages = try TestImages.tinyPages(3, in: farm.folder)
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        let coordinator = try farm.startCoordinator(port: port, Self.fast + ["--curve-secret", keys.coordinatorSecret,
                                                                             "--authorized-workers", keys.authorized])
        let strangerWorker = try farm.startWorker(port: port, ["--engine", "none", "--curve-secret", farm.folder.file("stranger.key"),
                                              "--coordinator-key", keys.coordinatorPublic] + Self.fast, name: "stranger")
        let refused = FarmHarness.wait(seconds: 20) { coordinator.log.contains("refused an unknown worker key") }
        #expect(refused, "\(farm.logs)")
        // Long enough for several reconnects (the worker retries from 1 s) and for any page it might have got.
        usleep(3_000_000)
        let status = try openStore(farm).status()
        #expect(status.count(.queued) == 3, "\(farm.logs)")
        #expect(status.workers.isEmpty)
        let log = coordinator.log
        #expect(log.contains(stranger.public), "\(log)")
        #expect(log.components(separatedBy: "refused an unknown worker key").count == 2, "logged once: \(log)")
        // A refused worker is not stuck in a send to a peer it never got: it keeps retrying and stops on SIGTERM.
        #expect(strangerWorker.log.contains("reconnecting"), "\(strangerWorker.log)")
        let stopped = Date()
        #expect(strangerWorker.terminate(waiting: 5) == 0)
        #expect(Date().timeIntervalSince(stopped) < 5, "\(strangerWorker.log)")

        // The authorized key, on the same coordinator, gets all three.
        _ = try farm.startWorker(port: port, ["--engine", "none", "--curve-secret", keys.workerSecret,
                                              "--coordinator-key", keys.coordinatorPublic] + Self.fast, name: "w1")
        #expect(try FarmHarness.wait(seconds: 30) { try openStore(farm).status().count(.done) == 3 }, "\(farm.logs)")
        farm.stopAll()
    }

    @Test("health reaches a coordinator with CURVE only with an authorized key")
    func healthWithCurve() throws {
        let farm = FarmHarness()
        let keys = try keys(farm)
        _ = try keygen(farm, "stranger")
        let port = FarmHarness.freePort()
        _ = try farm.startCoordinator(port: port, ["--curve-secret", keys.coordinatorSecret, "--authorized-workers", keys.authorized])
        let address = "tcp://127.0.0.1:\(port)"
        let answered = try FarmHarness.wait(seconds: 20) {
            try Run.ocrfarm(["health", "--connect", address, "--timeout", "1", "--curve-secret", keys.workerSecret,
                             "--coordinator-key", keys.coordinatorPublic]).status == 0
        }
        #expect(answered, "\(farm.logs)")
        #expect(try Run.ocrfarm(["health", "--connect", address, "--timeout", "1"]).status == 69)
        #expect(try Run.ocrfarm(["health", "--connect", address, "--timeout", "1", "--curve-secret", farm.folder.file("stranger.key"),
                                 "--coordinator-key", keys.coordinatorPublic]).status == 69)
        farm.stopAll()
    }
}
