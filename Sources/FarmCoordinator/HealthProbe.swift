import FarmCore
import FarmProtocol
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Asks a coordinator whether its poll loop answers: one PING from a fresh DEALER socket, one PONG back.
///
/// The probe never says HELLO, so the coordinator keeps no state for it: it is not a worker, gets no credit or
/// jobs and does not show in `status`. Owns its socket for the length of `check`; use it on one thread.
public struct HealthProbe {
    /// Largest message the probe accepts; a PONG is a few dozen bytes.
    public static let maxMessageBytes: Int64 = 64 * 1024

    /// What a coordinator said, and how long it took.
    public struct Answer: Sendable, Equatable {
        public var version: String
        public var milliseconds: Double
    }

    /// Why no answer came.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// True when the endpoint itself could not be used (bad syntax, unknown host): a usage error.
        public let badEndpoint: Bool
        public let message: String
        public var description: String { message }
    }

    public let endpoint: String
    public let timeoutMilliseconds: Int
    /// CURVE keys for a coordinator that runs with CURVE (the probe's key must be authorized like a worker's).
    public var curve: CurveClientKeys?

    public init(endpoint: String, timeoutMilliseconds: Int) {
        self.endpoint = endpoint
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Sends one PING and waits for its PONG until the timeout runs out.
    public func check(context: Context) throws(Failure) -> Answer {
        let start = Clock.monotonicNanoseconds
        let deadline = Clock.monotonicMilliseconds + Int64(timeoutMilliseconds)
        let nonce = Int.random(in: 1...Int(Int32.max))
        let socket: Socket
        do throws(ZMQError) {
            socket = try Socket(context, type: .dealer)
            if let curve { try socket.makeCurveClient(curve) }
            try socket.set(.linger, 0)
            try socket.set(.maxMessageSize, Self.maxMessageBytes)
            try socket.set(.sendTimeout, Int32(clamping: timeoutMilliseconds))
        } catch {
            throw Failure(badEndpoint: false, message: "cannot make a socket: \(error.message)")
        }
        defer { socket.close() }
        do throws(ZMQError) {
            try socket.connect(endpoint)
        } catch {
            throw Failure(badEndpoint: true, message: "cannot use \(endpoint): \(error.message)")
        }
        do throws(ZMQError) {
            guard try socket.send(FrameCodec.encode(.ping(Probe(nonce: nonce)))) else {
                throw ZMQError("send", code: EAGAIN)
            }
            while true {
                let left = deadline - Clock.monotonicMilliseconds
                if left <= 0 { break }
                guard let frames = try socket.receive(timeoutMilliseconds: Int(left)) else { continue }
                // Anything but our PONG (an old coordinator's BYE, a stray frame) is ignored until the deadline.
                if case .pong(let probe)? = try? FrameCodec.decode(frames), probe.nonce == nonce {
                    return Answer(version: probe.version, milliseconds: Clock.milliseconds(since: start))
                }
            }
        } catch where !error.isWouldBlock {
            throw Failure(badEndpoint: false, message: "\(endpoint): \(error.message)")
        } catch {}
        throw Failure(badEndpoint: false, message: "no answer from the coordinator at \(endpoint) within "
            + "\(Format.fixed(Double(timeoutMilliseconds) / 1000, 1)) s (not running, unreachable, or its loop is stuck)")
    }
}
