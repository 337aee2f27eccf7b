import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore

/// Message handling: each message from a peer becomes a change of the registry or a pending store write.
extension Coordinator {
    /// `key`: the CURVE public key of the connection the message came on (nil without CURVE).
    func handle(_ frames: [[UInt8]], key: String? = nil) {
        guard frames.count >= 2 else {
            countMalformed("no-routing-id", detail: "a message without sender")
            return
        }
        let route = frames[0]
        let message: FarmProtocol.Message
        do throws(ProtocolError) {
            message = try FrameCodec.decode(frames[1...])
            if case .job = message { throw ProtocolError.unknownCommand("JOB from a worker") }
            if case .pong = message { throw ProtocolError.unknownCommand("PONG from a peer") }
        } catch {
            countMalformed(error.kind, detail: error.description)
            return
        }
        if case .ping(let probe) = message {
            // A health probe: answered from the loop, so a hung loop fails it; the sender never becomes a worker.
            _ = try? socket.send([route] + FrameCodec.encode(.pong(Probe(nonce: probe.nonce, version: FarmVersion.string))))
            return
        }
        let now = time.monotonicMilliseconds
        if case .hello(let hello) = message {
            join(hello, route: route, key: key, now: now)
            return
        }
        guard let id = routes[route], let worker = workers[id] else {
            // A worker we do not know (we restarted, or it was declared lost): it must introduce itself again.
            _ = try? socket.send([route] + FrameCodec.encode(.bye(Bye(reason: "unknown worker; send HELLO"))))
            return
        }
        if configuration.curve != nil && keys[id] != key {
            // The route is the worker's, the key is not (a peer that took over a routing id the worker used): the
            // message is not the worker's, and it is dropped before it can touch the worker's state or leases.
            countMalformed("wrong-key", detail: "a message for worker \(id.rawValue) from key \(ZAPAuthenticator.shortForm(key)), "
                + "which is bound to key \(ZAPAuthenticator.shortForm(keys[id]))")
            return
        }
        worker.lastHeard = now
        worker.lastSeenWall = time.now
        switch message {
        case .credit(let n):
            worker.credit = min(worker.credit + n, 1_000_000)
            worker.creditRead(n)
        case .result(let result):
            guard let lease = take(result.attempt, from: worker) else { return refuse("RESULT", result.attempt, from: worker) }
            if let problem = ResultCheck.problem(in: result) {
                countMalformed("invalid-result", detail: "RESULT for page \(result.attempt.page.rawValue) from \(id.rawValue): \(problem)")
                let failure = PageFailure(stage: "result", code: .invalidResult,
                                          message: "worker \(id.rawValue) sent a result the farm does not keep: \(problem)",
                                          retryable: true)
                pending.append(.failure(result.attempt, worker: id, failure: failure, startedAt: lease.startedAt, outcome: .failed))
                return
            }
            let output = PageOutput(engine: result.engine, text: String(decoding: result.text, as: UTF8.self),
                                    meanConfidence: result.meanConfidence, width: result.width, height: result.height,
                                    structure: result.structure,
                                    timings: result.timings.rendered,
                                    artifacts: result.artifacts)
            pending.append(.result(result.attempt, worker: id, document: lease.document, output: output, startedAt: lease.startedAt))
        case .fail(let fail):
            guard let lease = take(fail.attempt, from: worker) else { return refuse("FAIL", fail.attempt, from: worker) }
            pending.append(.failure(fail.attempt, worker: id, failure: fail.failure, startedAt: lease.startedAt,
                                    outcome: .failed))
        case .heartbeat:
            break
        case .bye(let bye):
            leave(worker, reason: bye.reason, returned: Set(bye.returned))
        case .hello, .job, .ping, .pong:
            break
        }
    }

    /// A RESULT or FAIL for a lease another connection holds is dropped: any connected worker could otherwise
    /// complete any page, with any text (issue 18). Counted as malformed, logged sparingly.
    func refuse(_ command: String, _ attempt: AttemptID, from worker: WorkerState) {
        countMalformed("not-lease-holder", detail: "\(command) for page \(attempt.page.rawValue) attempt \(attempt.number) from "
            + "\(worker.id.rawValue), which does not hold that lease")
    }

    func countMalformed(_ kind: String, detail: String) {
        counters.malformed[kind, default: 0] += 1
        let total = counters.malformedTotal
        // Logged sparingly: a hostile peer must not flood the log.
        if total <= 10 || total % 1000 == 0 {
            Log.warning("dropped a malformed message", ["kind": kind, "error": detail, "total": String(total)])
        }
    }
}
