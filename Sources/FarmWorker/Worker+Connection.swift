import FarmCore
import FarmProtocol
import FarmRuntime
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// The network side: the DEALER connection to the coordinator, reconnecting with a backoff, credit, and passing
/// the slots' outcomes on.
extension Worker {
    func connect() {
        dealer?.close()
        generation += 1
        do {
            let socket = try Socket(context, type: .dealer)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            try socket.set(.linger, 0)
            try socket.set(.maxMessageSize, Wire.maxMessageBytes)
            // A DEALER with no peer blocks on send; a coordinator that refused our CURVE handshake leaves none, so
            // a send gives up after a heartbeat (outcomes wait in `unsent`) and liveness reconnects as usual.
            try socket.set(.sendTimeout, Int32(clamping: configuration.heartbeatMilliseconds))
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.connect(configuration.connect)
            dealer = socket
        } catch {
            Log.error("cannot connect", ["endpoint": configuration.connect, "error": "\(error)"])
            dealer = nil
        }
        lastHeard = time.monotonicMilliseconds
        // Jobs that were waiting for a slot belong to the old connection: the coordinator takes them back.
        tracker.dropQueued()
        let held = tracker.held()
        send(.hello(Hello(worker: configuration.id, host: HostInfo.hostname, pid: HostInfo.pid, version: FarmVersion.string,
                          slots: configuration.slots, languages: configuration.languages,
                          engine: configuration.engineName, held: held)))
        outstandingCredit = 0
        topUpCredit()
        let waiting = unsent
        unsent = []
        for frames in waiting { send(frames: frames, keep: true) }
    }

    func reconnect() {
        dealer?.close()
        dealer = nil
        // The backoff grows to 32 s; slept in one piece it would hold SIGTERM/SIGINT that long (Clock.sleep resumes
        // after EINTR), so it is slept in short steps that look at the shutdown flag.
        var remaining = backoff
        while remaining > 0 && Shutdown.requested == nil && parentAlive() {
            let step = min(remaining, 50)
            time.sleep(milliseconds: step)
            remaining -= step
        }
        // Stopping with no page in hand: no new connection is wanted. Its BYE would wait in the socket for a
        // coordinator that is not there and hold the exit for the 2 s linger.
        if (Shutdown.requested != nil || !parentAlive()) && tracker.count == 0 { return }
        backoff = min(backoff * 2, configuration.reconnectMaximumMilliseconds)
        connect()
    }

    /// Encodes and sends a message of the worker's own (HELLO, CREDIT, HEARTBEAT, BYE).
    @discardableResult
    func send(_ message: FarmProtocol.Message) -> Bool {
        // A BYE must reach the coordinator, so it waits for the next connection; credit and heartbeats are
        // recomputed on connecting, so stale ones are dropped.
        let keep: Bool
        switch message {
        case .result, .fail, .bye: keep = true
        default: keep = false
        }
        return send(frames: FrameCodec.encode(message), keep: keep)
    }

    /// Sends frames already encoded for the wire. `keep`: an outcome (or BYE) that waits in `unsent` for the next
    /// connection when this one cannot take it.
    @discardableResult
    func send(frames: [[UInt8]], keep: Bool) -> Bool {
        guard let dealer else {
            if keep { unsent.append(frames) }
            return false
        }
        do {
            try dealer.send(frames)
            lastSent = time.monotonicMilliseconds
            return true
        } catch {
            if keep { unsent.append(frames) }
            return false
        }
    }

    func drainCoordinator() throws {
        guard let dealer else { return }
        while let frames = try dealer.receive(timeoutMilliseconds: 0) {
            lastHeard = time.monotonicMilliseconds
            backoff = configuration.reconnectMinimumMilliseconds
            let message: FarmProtocol.Message
            do throws(ProtocolError) {
                message = try FrameCodec.decode(frames)
            } catch {
                Log.warning("dropped a malformed message from the coordinator", ["kind": error.kind, "error": error.description])
                continue
            }
            switch message {
            case .job(let job):
                outstandingCredit = max(0, outstandingCredit - 1)
                lastJobAt = time.monotonicMilliseconds
                tracker.accept(job.attempt)
                jobs.push(SlotJob(job: job, generation: generation))
            case .bye(let bye):
                Log.info("coordinator said goodbye; reconnecting", ["endpoint": configuration.connect, "reason": bye.reason])
                // A coordinator that restarted (or forgot us) asks for a new HELLO; one that is stopping will be
                // back: either way we introduce ourselves again.
                reconnect()
                return
            case .heartbeat, .hello, .credit, .result, .fail, .ping, .pong:
                break
            }
        }
    }

    func drainOutcomes() throws {
        while let frames = try outcomes.receive(timeoutMilliseconds: 0) {
            forward(frames)
        }
        if Shutdown.requested == nil { topUpCredit() }
    }

    /// Passes a slot's outcome on to the coordinator as the slot encoded it; the attempt beside it tells the
    /// tracker the job is no longer held.
    func forward(_ frames: [[UInt8]]) {
        guard let (attempt, wire) = SlotOutcome.split(frames) else { return }
        tracker.finish(attempt)
        send(frames: wire, keep: true)
        rate.record(time.monotonicMilliseconds)
    }

    /// Asks for as many jobs as keep the slots busy: the slots plus a prefetch that covers about 50 ms of work at
    /// the current pace (at least `prefetch`), so fast pages never wait on the network and slow ones are not hoarded.
    func topUpCredit() {
        guard dealer != nil else { return }
        let pace = rate.pagesPerSecond(now: time.monotonicMilliseconds)
        let prefetch = min(2000, max(configuration.prefetch, Int(pace * 0.05)))
        let wanted = configuration.slots - tracker.slotsLoading + prefetch - tracker.count - outstandingCredit
        // Small top-ups are batched so a busy worker sends one CREDIT per handful of results, not one each.
        guard wanted > 0, wanted >= min(8, configuration.slots + prefetch) || tracker.count + outstandingCredit == 0 else { return }
        if send(.credit(wanted)) { outstandingCredit += wanted }
    }

    func parentAlive() -> Bool {
        guard let parent = configuration.parentPID else { return true }
        return getppid() == parent
    }
}
