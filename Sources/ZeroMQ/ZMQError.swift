import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A failed ZeroMQ call: the operation, and the errno it left.
public struct ZMQError: Error, CustomStringConvertible, Sendable, Equatable {
    public let operation: String
    public let code: Int32

    public init(_ operation: String, code: Int32 = zmq_errno()) {
        self.operation = operation
        self.code = code
    }

    /// The library's description of `code`.
    public var message: String { String(cString: zmq_strerror(code)) }
    /// A non-blocking call found nothing to do, or a timeout passed.
    public var isWouldBlock: Bool { code == EAGAIN }
    /// A signal interrupted the call; retry or check for shutdown.
    public var isInterrupted: Bool { code == EINTR }
    /// The context was terminated; the socket must be closed.
    public var isTerminated: Bool { code == ETERM }
    /// A ROUTER with `routerMandatory` could not route to the peer (it is gone).
    public var isHostUnreachable: Bool { code == EHOSTUNREACH }

    public var description: String { "\(operation): \(message) (errno \(code))" }
}
