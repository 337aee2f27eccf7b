import FarmCore
import FarmProtocol
import FarmRuntime
import FarmWorker
import Synchronization
import Testing
import TestSupport
import ZeroMQ

/// A worker in this process (engine none: an empty result at once) on its own thread, connected over
/// `inproc://` to a ROUTER the test plays the coordinator with; its clock is driven by the test.
final class WorkerRig: @unchecked Sendable {
    // Thread-safety: the worker's thread touches only `worker` (and the Sendable `stop` and `time`); the test's
    // thread uses the router.
    let time = DrivenTime()
    let context: Context
    let router: Socket
    let worker: Worker
    private final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        let status = Mutex<String?>(nil)
    }
    private let shared = Shared()
    private var thread: NativeThread?

    init(slots: Int = 2, prefetch: Int = 1, maxStuckSlots: Int? = nil, beforePage: (@Sendable (Job) -> Void)? = nil) throws {
        context = try Context()
        router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        let endpoint = "inproc://coordinator-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        try router.bind(endpoint)
        let configuration = WorkerConfiguration(connect: endpoint, slots: slots, prefetch: prefetch, engine: .none,
                                                languages: [], graceSeconds: 5, id: WorkerID("w-test"),
                                                beforePage: beforePage, maxStuckSlots: maxStuckSlots)
        worker = try Worker(configuration: configuration, context: context, time: time)
    }

    func start() {
        let worker = UncheckedWorker(worker)
        let shared = self.shared
        thread = NativeThread.start(name: "worker-test") {
            do {
                let exit = try worker.worker.run(shouldStop: { shared.stop.load(ordering: .relaxed) })
                shared.status.withLock { $0 = "exited \(exit.rawValue)" }
            } catch {
                shared.status.withLock { $0 = "threw \(error)" }
            }
        }
    }

    /// Stops the worker and waits for its thread (it says BYE first).
    func finish() -> String? {
        shared.stop.store(true, ordering: .relaxed)
        thread?.join()
        thread = nil
        return shared.status.withLock { $0 }
    }

    /// The next message from the worker (with its routing id), skipping heartbeats unless asked for; nil after
    /// `seconds` of real time (a timeout on the socket, not a sleep).
    func next(heartbeats: Bool = false, seconds: Double = 5) throws -> (route: [UInt8], message: FarmProtocol.Message)? {
        let deadline = Clock.monotonicMilliseconds + Int64(seconds * 1000)
        while Clock.monotonicMilliseconds < deadline {
            guard let frames = try router.receive(timeoutMilliseconds: 50) else { continue }
            let message = try FrameCodec.decode(frames[1...])
            if case .heartbeat = message, !heartbeats { continue }
            return (frames[0], message)
        }
        return nil
    }

    func send(_ message: FarmProtocol.Message, to route: [UInt8]) throws {
        _ = try router.send([route] + FrameCodec.encode(message))
    }

    func job(_ page: Int64, attempt: Int = 1, timeoutMilliseconds: Int? = nil) -> FarmProtocol.Message {
        .job(Job(attempt: AttemptID(page: PageID(page), number: attempt), source: "page-\(page).png", kind: .image, index: 0,
                 options: PageOptions(timeoutMilliseconds: timeoutMilliseconds),
                 bytes: Array("not decoded with engine none".utf8)))
    }

    deinit { _ = finish() }
}

/// Lets the worker (not Sendable: one thread runs it) move to its thread.
private struct UncheckedWorker: @unchecked Sendable {
    // Thread-safety: after `start`, only the worker's thread uses it.
    let worker: Worker
    init(_ worker: Worker) { self.worker = worker }
}

@Suite("Worker in process, driven clock")
struct WorkerTests {
    @Test("HELLO, then credit for the slots plus prefetch; each job's RESULT comes back as the slot encoded it")
    func creditAndResults() throws {
        let rig = try WorkerRig(slots: 2, prefetch: 1)
        rig.start()
        let (route, hello) = try #require(try rig.next())
        guard case .hello(let h) = hello else { Issue.record("expected HELLO, got \(hello)"); return }
        #expect(h.worker == WorkerID("w-test") && h.slots == 2 && h.engine == "none" && h.held.isEmpty)
        let credit = try #require(try rig.next()?.message)
        #expect(credit == .credit(3), "2 slots + 1 prefetch")

        for page in 1...3 { try rig.send(rig.job(Int64(page)), to: route) }
        var results: [ResultMessage] = []
        var credits: [Int] = []
        while results.count < 3 || credits.reduce(0, +) < 3, let (_, message) = try rig.next() {
            switch message {
            case .result(let result): results.append(result)
            case .credit(let n): credits.append(n)
            default: Issue.record("unexpected \(message)")
            }
        }
        #expect(Set(results.map(\.attempt.page.rawValue)) == [1, 2, 3])
        #expect(results.allSatisfy { $0.engine == "none" && $0.text.isEmpty && $0.timings.objectValue != nil })
        #expect(credits.reduce(0, +) == 3, "the credit used is given again once the pages are done")
        #expect(rig.finish() == "exited 0")
    }

    @Test("heartbeats when idle; a silent coordinator means a reconnect and a new HELLO naming the pages still held")
    func heartbeatAndReconnect() throws {
        let gate = Gate()
        let rig = try WorkerRig(slots: 1, prefetch: 0, beforePage: { _ in gate.wait() })
        rig.start()
        let (route, _) = try #require(try rig.next())
        #expect(try rig.next()?.message == .credit(1))
        try rig.send(rig.job(7), to: route)
        gate.awaitArrival()

        rig.time.advance(milliseconds: 1000)
        #expect(try rig.next(heartbeats: true)?.message == .heartbeat)
        // 3 heartbeats without a word from the coordinator: the worker reconnects (its backoff is driven too).
        rig.time.advance(milliseconds: 2100)
        let again = try #require(try rig.next())
        guard case .hello(let hello) = again.message else { Issue.record("expected HELLO, got \(again.message)"); return }
        #expect(again.route != route, "a new connection")
        #expect(hello.held == [AttemptID(page: PageID(7), number: 1)], "the page in the slot is kept on reconnect")
        gate.open()
        // The page finished in the slot is reported on the new connection.
        var result: ResultMessage?
        while result == nil, let (_, message) = try rig.next() {
            if case .result(let r) = message { result = r }
        }
        #expect(result?.attempt == AttemptID(page: PageID(7), number: 1))
        #expect(rig.finish() == "exited 0")
    }

    @Test("stopping: the page in the slot is finished and reported, unstarted jobs are handed back in the BYE")
    func stopReturnsUnstarted() throws {
        let gate = Gate()
        let rig = try WorkerRig(slots: 1, prefetch: 2, beforePage: { _ in gate.wait() })
        rig.start()
        let (route, _) = try #require(try rig.next())
        #expect(try rig.next()?.message == .credit(3))
        for page in 1...3 { try rig.send(rig.job(Int64(page)), to: route) }
        gate.awaitArrival()
        let stopped = Background { rig.finish() }
        // Nothing can come before the page in the slot is done; meanwhile the worker has left its loop (it
        // polls every 100 ms) and dropped the jobs no slot had started.
        #expect(try rig.next(seconds: 0.5) == nil)
        gate.open()
        var bye: Bye?
        var results: [AttemptID] = []
        while bye == nil, let (_, message) = try rig.next() {
            if case .bye(let b) = message { bye = b }
            if case .result(let r) = message { results.append(r.attempt) }
        }
        #expect(stopped.value == "exited 0")
        #expect(results == [AttemptID(page: PageID(1), number: 1)], "the started page is finished and reported")
        #expect(Set(try #require(bye).returned) == [AttemptID(page: PageID(2), number: 1), AttemptID(page: PageID(3), number: 1)])
    }

    /// Messages from the worker for `seconds`, heartbeats left out.
    func drain(_ rig: WorkerRig, seconds: Double) throws -> [FarmProtocol.Message] {
        var messages: [FarmProtocol.Message] = []
        let deadline = Clock.monotonicMilliseconds + Int64(seconds * 1000)
        while Clock.monotonicMilliseconds < deadline, let (_, message) = try rig.next(seconds: 0.1) { messages.append(message) }
        return messages
    }

    @Test("a page past its time limit in a stage that cannot be stopped: FAIL timeout at once, a new slot reads the next page, the late outcome is dropped")
    func stuckSlotReplaced() throws {
        let gate = Gate()
        let rig = try WorkerRig(slots: 1, prefetch: 0, beforePage: { job in if job.source == "page-1.png" { gate.wait() } })
        defer { gate.open() }
        try withExtendedLifetime(rig) {
            rig.start()
            let (route, _) = try #require(try rig.next())
            #expect(try rig.next()?.message == .credit(1))
            try rig.send(rig.job(1, timeoutMilliseconds: 1000), to: route)
            gate.awaitArrival()
            // The limit and the watchdog's margin (300 ms) not yet past: the slot keeps the page.
            rig.time.advance(milliseconds: 1200)
            #expect(try drain(rig, seconds: 0.4).isEmpty)
            rig.time.advance(milliseconds: 200)
            let fail = try #require(try rig.next())
            guard case .fail(let failure) = fail.message else { Issue.record("expected FAIL, got \(fail.message)"); return }
            #expect(failure.attempt == AttemptID(page: PageID(1), number: 1))
            #expect(failure.failure.code == .timeout && failure.failure.retryable)
            #expect(failure.failure.message.contains("1000 ms"), "\(failure.failure.message)")
            // The stuck page no longer counts against the slots: credit for the replacement, which reads the next page.
            #expect(try rig.next()?.message == .credit(1))
            try rig.send(rig.job(2), to: route)
            let next = try #require(try rig.next())
            guard case .result(let result) = next.message else { Issue.record("expected RESULT, got \(next.message)"); return }
            #expect(result.attempt == AttemptID(page: PageID(2), number: 1))
            // The given-up slot finishes its page at last: nothing of it reaches the coordinator.
            gate.open()
            let late = try drain(rig, seconds: 0.5)
            #expect(!late.contains { if case .result(let r) = $0 { r.attempt.page == PageID(1) } else { false } }, "\(late)")
            #expect(rig.finish() == "exited 0")
        }
    }

    @Test("more stuck slots than --max-stuck: the worker hands back its queued jobs in a BYE and exits with 75")
    func tooManyStuckSlots() throws {
        let gate = Gate()
        let rig = try WorkerRig(slots: 1, prefetch: 1, maxStuckSlots: 1, beforePage: { job in
            if job.source != "page-3.png" { gate.wait() }
        })
        defer { gate.open() }
        try withExtendedLifetime(rig) {
            rig.start()
            let (route, _) = try #require(try rig.next())
            #expect(try rig.next()?.message == .credit(2))
            try rig.send(rig.job(1, timeoutMilliseconds: 500), to: route)
            try rig.send(rig.job(2, timeoutMilliseconds: 500), to: route)
            gate.awaitArrival()
            rig.time.advance(milliseconds: 900)
            // Page 1 fails; the new slot takes page 2, which sticks too.
            var messages = try drain(rig, seconds: 0.5)
            gate.awaitArrival()
            try rig.send(rig.job(3), to: route)
            // Let the worker take job 3 into its queue before page 2's deadline passes.
            messages += try drain(rig, seconds: 0.3)
            rig.time.advance(milliseconds: 900)
            var bye: Bye?
            let deadline = Clock.monotonicMilliseconds + 5000
            while bye == nil, Clock.monotonicMilliseconds < deadline, let (_, message) = try rig.next() {
                messages.append(message)
                if case .bye(let b) = message { bye = b }
            }
            let failed = messages.compactMap { if case .fail(let f) = $0 { f.attempt.page.rawValue } else { nil } }
            #expect(failed == [1, 2], "\(messages)")
            #expect(try #require(bye).returned == [AttemptID(page: PageID(3), number: 1)], "the unstarted job is handed back")
            #expect(rig.finish() == "exited 75")
            gate.open()
        }
    }
}

/// Holds slots inside their pages until the test opens it (blocking queues: no sleeping or spinning).
final class Gate: Sendable {
    private let arrivals = BlockingQueue<Bool>()
    private let opened = BlockingQueue<Bool>()

    func wait() {
        arrivals.push(true)
        _ = opened.pop()
    }

    /// Returns once a slot is waiting at the gate.
    func awaitArrival() { _ = arrivals.pop() }

    /// Lets every slot through, now and later.
    func open() { opened.close() }
}

/// Runs `body` on its own thread; `value` waits for it.
final class Background<T: Sendable>: @unchecked Sendable {
    // Thread-safety: `result` is written by the thread before it ends and read only after `join`.
    private var result: T?
    private var native: NativeThread!

    init(_ body: @escaping @Sendable () -> T) {
        let box = self
        native = NativeThread.start(name: "test") { box.result = body() }
    }

    var value: T {
        native.join()
        return result!
    }
}
