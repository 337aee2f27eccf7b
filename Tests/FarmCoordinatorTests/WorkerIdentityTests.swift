import FarmCoordinator
import Testing
import FarmCore
import FarmProtocol
@testable import FarmStore
import TestSupport
import ZeroMQ

/// With CURVE a worker's identity is its key (issue 18, item 2): the first HELLO binds the worker id to the key of
/// its connection; another authorized key claiming that id, or a peer reusing the worker's routing id, gets nothing.
/// Real ZeroMQ over tcp 127.0.0.1 with CURVE keys and the coordinator's ZAP handler; the test plays the workers.
@Suite("Worker identity bound to its CURVE key")
struct WorkerIdentityTests {
    /// A coordinator with CURVE on tcp, and client keys for two authorized workers: the real one and a rogue.
    struct Farm {
        let rig: CoordinatorRig
        let real: CurveClientKeys
        let rogue: CurveClientKeys
    }

    func farm() throws -> Farm {
        let server = try Curve.generateKeyPair()
        let real = CurveClientKeys(serverKey: server.publicKey, pair: try Curve.generateKeyPair())
        let rogue = CurveClientKeys(serverKey: server.publicKey, pair: try Curve.generateKeyPair())
        let rig = try CoordinatorRig {
            $0.bind = "tcp://127.0.0.1:*"
            $0.curve = CurveServerSettings(secretKey: server.secretKey,
                                           authorizedKeys: [real.pair.publicKey, rogue.pair.publicKey])
        }
        return Farm(rig: rig, real: real, rogue: rogue)
    }

    /// A worker connection that says HELLO as `id`, holding `held`.
    func connect(_ rig: CoordinatorRig, as id: String, keys: CurveClientKeys, held: [AttemptID] = [],
                 routingID: [UInt8]? = nil) throws -> FakeWorker {
        let worker = try FakeWorker(rig: rig, id: WorkerID(id), curve: keys, routingID: routingID)
        worker.send(.hello(Hello(worker: worker.id, host: "test", pid: 1, version: "test", slots: 2, languages: ["eng"],
                                 engine: "none", held: held)))
        return worker
    }

    /// Pumps the loop, reading what `worker` receives, until `condition` holds. Generous: a CURVE handshake goes
    /// through the ZAP thread, and the machine is shared.
    func pump(_ rig: CoordinatorRig, _ worker: FakeWorker, until condition: () throws -> Bool) throws -> Bool {
        try rig.pump(turns: 10_000) { try worker.collect(); return try condition() }
    }

    func results(_ rig: CoordinatorRig) throws -> [String] {
        try rig.store.connection.prepare("SELECT worker_id || ':' || text FROM results ORDER BY page_id").rows { $0.text(0) }
    }

    func outcomes(_ rig: CoordinatorRig) throws -> [String] {
        try rig.store.connection.prepare("SELECT outcome FROM attempts ORDER BY page_id, number").rows { $0.text(0) }
    }

    @Test("the binding outlives the coordinator: after a restart on the same store another key still cannot take the id")
    func bindingSurvivesRestart() throws {
        let server = try Curve.generateKeyPair()
        let real = CurveClientKeys(serverKey: server.publicKey, pair: try Curve.generateKeyPair())
        let rogue = CurveClientKeys(serverKey: server.publicKey, pair: try Curve.generateKeyPair())
        func settings(_ configuration: inout CoordinatorConfiguration) {
            configuration.bind = "tcp://127.0.0.1:*"
            configuration.curve = CurveServerSettings(secretKey: server.secretKey,
                                                      authorizedKeys: [real.pair.publicKey, rogue.pair.publicKey])
        }
        let first = try CoordinatorRig(settings)
        let worker = try connect(first, as: "w1", keys: real)
        #expect(try pump(first, worker) { try first.store.workerKeys()[WorkerID("w1")] == real.pair.publicKey },
                "the binding is stored")

        // A coordinator started again on the same store: the rogue's claim is refused, the real key still rejoins.
        let second = try CoordinatorRig(folder: first.folder, settings)
        let claim = try connect(second, as: "w1", keys: rogue)
        #expect(try pump(second, claim) { second.counters.malformed["identity-refused"] == 1 })
        let again = try connect(second, as: "w1", keys: real)
        again.send(.credit(1))
        try second.addPages(1)
        #expect(try pump(second, again) { !again.jobs.isEmpty }, "the real worker is served")
        #expect(second.counters.malformed["identity-refused"] == 1)
    }

    @Test("another authorized key sending HELLO with a worker's id is refused: the worker keeps its leases, the rogue completes nothing, the pages finish")
    func anotherKeyClaimsTheID() throws {
        let farm = try farm()
        let rig = farm.rig
        let pages = try rig.addPages(2)
        let real = try connect(rig, as: "w1", keys: farm.real)
        real.send(.credit(2))
        #expect(try pump(rig, real) { real.jobs.count == 2 }, "the real worker got its jobs")
        let attempts = real.jobs.map(\.attempt)

        // The rogue claims w1's id and the leases it holds, then tries to finish and to fail them.
        let rogue = try connect(rig, as: "w1", keys: farm.rogue, held: attempts)
        #expect(try pump(rig, rogue) { rig.counters.malformed["identity-refused"] == 1 })
        #expect(try pump(rig, rogue) { !rogue.byes.isEmpty })
        #expect(rogue.byes.first?.reason.contains("belongs to another key") == true, "\(rogue.byes)")
        rogue.send(rogue.result(attempts[0], text: "FORGED"))
        rogue.send(.fail(FailMessage(attempt: attempts[1], failure: PageFailure(stage: "recognize", code: .decodeFailed,
                                                                                message: "forged failure"))))
        rogue.send(.credit(5))
        // Its connection is no worker's: each of those is answered with "send HELLO" and changes nothing.
        #expect(try pump(rig, rogue) { rogue.byes.count >= 4 }, "\(rogue.byes)")
        #expect(rogue.jobs.isEmpty)
        for page in pages { #expect(try rig.page(page).state == .leased, "w1's lease stands") }
        let leaseHolders = try rig.store.connection.prepare("SELECT lease_worker FROM pages ORDER BY id").rows { $0.text(0) }
        #expect(leaseHolders == ["w1", "w1"])
        #expect(try results(rig).isEmpty)

        // The real worker is still w1 on its own connection: its results complete both pages.
        real.send(real.result(attempts[0], text: "real 0"))
        real.send(real.result(attempts[1], text: "real 1"))
        #expect(try pump(rig, real) { try pages.allSatisfy { try rig.page($0).state == .done } })
        #expect(try results(rig) == ["w1:real 0", "w1:real 1"])
        #expect(try outcomes(rig) == ["done", "done"], "no lease was returned or lost")
        #expect(rig.counters.completed == 2)

        // A second claim from the same key is counted again (and logged only once).
        rogue.send(.hello(Hello(worker: WorkerID("w1"), host: "test", pid: 1, version: "test", slots: 1, languages: ["eng"],
                                engine: "none")))
        #expect(try pump(rig, rogue) { rig.counters.malformed["identity-refused"] == 2 })
    }

    @Test("the same key rejoins on a new connection as before: it keeps the leases it still holds and finishes them")
    func sameKeyRejoins() throws {
        let farm = try farm()
        let rig = farm.rig
        let pages = try rig.addPages(2)
        let first = try connect(rig, as: "w1", keys: farm.real)
        first.send(.credit(2))
        #expect(try pump(rig, first) { first.jobs.count == 2 })
        let attempts = first.jobs.map(\.attempt)
        first.socket.close()

        // A restarted worker: same id, same key, still holding the first page; the second goes back to the queue.
        let again = try connect(rig, as: "w1", keys: farm.real, held: [attempts[0]])
        #expect(try pump(rig, again) { try rig.page(pages[1]).state == .queued })
        #expect(try rig.page(pages[0]).state == .leased)
        #expect(rig.counters.malformed["identity-refused"] == nil)
        again.send(again.result(attempts[0], text: "kept"))
        again.send(.credit(1))
        #expect(try pump(rig, again) { again.jobs.count == 1 })
        again.send(again.result(again.jobs[0].attempt, text: "redone"))
        #expect(try pump(rig, again) { try pages.allSatisfy { try rig.page($0).state == .done } })
        #expect(try results(rig) == ["w1:kept", "w1:redone"])
        #expect(try outcomes(rig) == ["done", "returned", "done"])
    }

    @Test("a peer that takes over a worker's routing id with another key is dropped: it cannot complete the worker's page")
    func routingIDTakenOver() throws {
        let farm = try farm()
        let rig = farm.rig
        let pages = try rig.addPages(1)
        let route = Array("w1-route".utf8)
        let real = try connect(rig, as: "w1", keys: farm.real, routingID: route)
        real.send(.credit(1))
        #expect(try pump(rig, real) { real.jobs.count == 1 })
        let attempt = real.jobs[0].attempt
        real.socket.close()
        // The ROUTER frees a routing id when it handles the end of its connection (in the coordinator's own receive
        // calls); a newcomer with an id still in use is never heard. A few hundred turns let the end arrive.
        try rig.pump(turns: 500) { false }

        // Same routing id, another authorized key, no HELLO: to the ROUTER it is w1's route once w1's connection
        // is gone. It keeps sending until the coordinator has seen (and dropped) one of its results.
        let rogue = try FakeWorker(rig: rig, id: WorkerID("w1"), curve: farm.rogue, routingID: route)
        var sent = 0
        let dropped = try rig.pump(turns: 10_000) {
            if sent % 100 == 0 { rogue.send(rogue.result(attempt, text: "FORGED")) }
            sent += 1
            return rig.counters.malformed["wrong-key", default: 0] >= 1
        }
        #expect(dropped, "the takeover's result reached the coordinator and was dropped")
        try rig.pump(turns: 50) { false }
        #expect(try rig.page(pages[0]).state == .leased)
        #expect(try results(rig).isEmpty)
        #expect(rig.counters.completed == 0)
    }
}
