import CZeroMQ

/// A ZeroMQ context. Owns one `void*` context, terminated with `zmq_ctx_term` in `deinit`, which happens only
/// after every socket made from it has closed (each socket holds its context).
/// Thread-safety: libzmq contexts are thread-safe by design, so one context may be shared by all threads.
public final class Context: @unchecked Sendable {
    package let handle: UnsafeMutableRawPointer

    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError("zmq_ctx_new") }
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        self.handle = handle
    }

    /// Makes blocking calls on every socket of this context fail with `ETERM`, so their threads can close them.
    public func shutdown() { zmq_ctx_shutdown(handle) }

    deinit { zmq_ctx_term(handle) }

    /// libzmq's version as "major.minor.patch".
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Whether the library was built with a capability such as "curve" or "ipc".
    public static func has(_ capability: String) -> Bool { zmq_has(capability) != 0 }
}
