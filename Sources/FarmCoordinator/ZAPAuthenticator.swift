import FarmCore
import Synchronization
import FarmRuntime
import ZeroMQ

/// The ZAP handler of a coordinator's context: decides which CURVE clients may finish their handshake.
///
/// Owns one thread with one REP socket bound at `inproc://zeromq.zap.01` (the address libzmq asks for every
/// handshake of a CURVE server in the same context). It answers "200" for a client public key in `authorized`
/// and "400" otherwise, logging each refused key once. The socket is created, bound and closed on that thread;
/// `stop()` (or `deinit`) ends it and waits for it.
public final class ZAPAuthenticator: Sendable {
    /// The ZAP domain the coordinator's socket announces.
    public static let domain = "ocrfarm"
    static let endpoint = "inproc://zeromq.zap.01"

    private final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    private let stopping: Flag
    private let thread: NativeThread

    /// Binds the handler before returning, so no handshake can happen without it.
    public init(context: Context, authorized: Set<String>) throws(ZMQError) {
        let started = BlockingQueue<ZMQError?>()
        let stopping = Flag()
        self.stopping = stopping
        thread = NativeThread.start(name: "zap") {
            let socket: Socket
            do throws(ZMQError) {
                socket = try Socket(context, type: .reply)
                try socket.set(.linger, 0)
                try socket.bind(Self.endpoint)
            } catch {
                _ = started.push(error)
                return
            }
            _ = started.push(nil)
            Self.serve(socket, authorized: authorized, until: stopping)
        }
        if let failure = started.pop() ?? nil {
            thread.join()
            throw failure
        }
    }

    private static func serve(_ socket: Socket, authorized: Set<String>, until stopping: Flag) {
        var refused: Set<String> = []
        while !stopping.raised.load(ordering: .relaxed) {
            let request: Frames
            do {
                guard let message = try socket.receive(timeoutMilliseconds: 200) else { continue }
                request = message
            } catch {
                if !error.isTerminated { Log.error("ZAP handler stopped", ["error": "\(error)"]) }
                return
            }
            let reply = answer(request, authorized: authorized, refused: &refused)
            do { try socket.send(reply) } catch {
                Log.error("ZAP handler cannot answer", ["error": "\(error)"])
                return
            }
        }
    }

    /// The reply to one ZAP request (RFC 27): version, request id, status code, status text, user id, metadata.
    static func answer(_ request: Frames, authorized: Set<String>, refused: inout Set<String>) -> Frames {
        guard request.count >= 6, request[0] == Array("1.0".utf8) else {
            Log.warning("malformed ZAP request", ["frames": String(request.count)])
            return [Array("1.0".utf8), request.count > 1 ? request[1] : [], Array("500".utf8), Array("malformed".utf8), [], []]
        }
        let id = request[1]
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard mechanism == "CURVE", request.count >= 7, request[6].count == 32, let key = Curve.z85Encode(request[6]) else {
            Log.warning("refused a client without a CURVE key", ["mechanism": mechanism, "address": address])
            return [Array("1.0".utf8), id, Array("400".utf8), Array("CURVE required".utf8), [], []]
        }
        if authorized.contains(key) {
            return [Array("1.0".utf8), id, Array("200".utf8), Array("OK".utf8), Array(key.utf8), []]
        }
        if refused.insert(key).inserted {
            Log.warning("refused an unknown worker key", ["key": key, "address": address])
        }
        return [Array("1.0".utf8), id, Array("400".utf8), Array("unknown key".utf8), [], []]
    }

    /// The first 8 characters of a Z85 key: enough to tell keys apart in a log line, without the whole key.
    static func shortForm(_ key: String?) -> String {
        key.map { String($0.prefix(8)) } ?? "none"
    }

    /// Ends the handler thread and waits for it; later handshakes fail.
    public func stop() {
        stopping.raised.store(true, ordering: .relaxed)
        thread.join()
    }

    deinit { stop() }
}

/// A coordinator's CURVE settings: its secret key and the public keys of the workers it lets in (Z85 text).
public struct CurveServerSettings: Sendable, Equatable {
    public var secretKey: String
    public var authorizedKeys: Set<String>

    public init(secretKey: String, authorizedKeys: Set<String>) {
        self.secretKey = secretKey
        self.authorizedKeys = authorizedKeys
    }
}
