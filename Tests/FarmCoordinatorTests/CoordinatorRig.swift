import FarmCoordinator
import Testing
import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore
import TestSupport
import ZeroMQ

/// A coordinator in this process on an `inproc://` endpoint, with a store in a temporary folder and a clock the
/// test drives. The test pumps the loop by hand (`turn`) and plays the workers with DEALER sockets.
final class CoordinatorRig {
    let folder: TemporaryDirectory
    let time = DrivenTime()
    let context: Context
    let store: Store
    let coordinator: Coordinator

    /// `folder`: another rig's, for a coordinator started again on the same store.
    init(busyTimeoutMilliseconds: Int32 = 10_000, folder: TemporaryDirectory? = nil,
         _ adjust: (inout CoordinatorConfiguration) -> Void = { _ in }) throws {
        self.folder = folder ?? TemporaryDirectory("coordinator-test")
        context = try Context()
        store = try Store(path: self.folder.file("farm.db"), busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        var configuration = CoordinatorConfiguration(bind: "inproc://coordinator-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
        adjust(&configuration)
        coordinator = try Coordinator(store: store, context: context, configuration: configuration, time: time)
    }

    /// Queues `count` one-page image documents whose files exist (the coordinator reads them to send a JOB).
    @discardableResult
    func addPages(_ count: Int) throws -> [PageID] {
        var pages: [NewPage] = []
        for index in 0..<count {
            let path = folder.file("page-\(index).png")
            try FileSystem.write(Array("page \(index)".utf8), to: path)
            pages.append(NewPage(source: RawPath(path), index: 0, kind: .image))
        }
        _ = try store.add([NewDocument(name: "doc", source: RawPath(folder.path), contentHash: String(UInt64.random(in: 0...UInt64.max), radix: 16),
                                       priority: 0, options: PageOptions(), pages: pages)])
        return try store.pages().map(\.id)
    }

    /// `curve`: connect as this CURVE client (the rig's coordinator must be on tcp with CURVE settings).
    func worker(_ name: String, slots: Int = 1, curve: CurveClientKeys? = nil, routingID: [UInt8]? = nil) throws -> FakeWorker {
        let worker = try FakeWorker(rig: self, id: WorkerID(name), curve: curve, routingID: routingID)
        worker.send(.hello(Hello(worker: worker.id, host: "test", pid: 1, version: "test", slots: slots, languages: ["eng"],
                                 engine: "none")))
        return worker
    }

    /// Turns the loop until `condition` holds (at most `turns` times); no clock moves here.
    @discardableResult
    func pump(turns: Int = 200, until condition: () throws -> Bool) throws -> Bool {
        for _ in 0..<turns {
            try coordinator.turn()
            if try condition() { return true }
            // Inproc delivery is near-instant but not synchronous: give the other pipe end a moment.
            _ = try? waitForNothing.receive(timeoutMilliseconds: 1)
        }
        return false
    }

    /// A socket nothing sends to: receiving from it is a short wait that is not a sleep of the test's logic.
    private lazy var waitForNothing: Socket = {
        let socket = try! Socket(context, type: .pull)
        try! socket.bind("inproc://idle-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
        return socket
    }()

    func page(_ id: PageID) throws -> PageRecord { try #require(try store.pages().first { $0.id == id }) }

    var counters: CoordinatorCounters { coordinator.snapshot }
}

/// A worker played by the test: a DEALER socket that sends what the test says and collects what arrives.
final class FakeWorker {
    let id: WorkerID
    let socket: Socket
    private unowned let rig: CoordinatorRig
    /// Everything received, in order (heartbeats included).
    private(set) var received: [FarmProtocol.Message] = []

    init(rig: CoordinatorRig, id: WorkerID, curve: CurveClientKeys? = nil, routingID: [UInt8]? = nil) throws {
        self.rig = rig
        self.id = id
        socket = try Socket(rig.context, type: .dealer)
        try socket.set(.linger, 0)
        if let curve { try socket.makeCurveClient(curve) }
        if let routingID { try socket.set(.routingID, routingID) }
        try socket.connect(rig.coordinator.endpoint)
    }

    func send(_ message: FarmProtocol.Message) {
        _ = try? socket.send(FrameCodec.encode(message))
    }

    /// Reads whatever has arrived without waiting.
    func collect() throws {
        while let frames = try socket.receive(timeoutMilliseconds: 0) {
            received.append(try FrameCodec.decode(frames))
        }
    }

    var jobs: [Job] { received.compactMap { if case .job(let job) = $0 { job } else { nil } } }
    var byes: [Bye] { received.compactMap { if case .bye(let bye) = $0 { bye } else { nil } } }

    /// Pumps the coordinator until `count` JOBs have arrived in all.
    @discardableResult
    func awaitJobs(_ count: Int) throws -> [Job] {
        _ = try rig.pump { try collect(); return jobs.count >= count }
        return jobs
    }

    func result(_ attempt: AttemptID, text: String = "text") -> FarmProtocol.Message {
        .result(ResultMessage(attempt: attempt, engine: "none", meanConfidence: 0, width: 1, height: 1,
                              timings: [StageTiming(stage: "decode", milliseconds: 1.25)], text: Array(text.utf8),
                              structure: Array("{}".utf8)))
    }
}
