import CZeroMQ

/// One ZeroMQ message: a list of frames sent and received as a unit. (Not called `Message`: that is the farm's
/// protocol message, `FarmProtocol.Message`, which modules importing both would have to spell in full.)
public typealias Frames = [[UInt8]]

/// A ZeroMQ socket. Owns one `void*` socket, closed with `zmq_close` in `deinit` (or by `close()`), and one
/// receive buffer (`zmq_msg_t`, at a stable heap address because small messages live inside it).
/// Not `Sendable`: a socket is used by the thread that made it.
public final class Socket {
    package private(set) var handle: UnsafeMutableRawPointer?
    private let context: Context
    private let buffer: UnsafeMutablePointer<zmq_msg_t>
    public let type: SocketType

    public init(_ context: Context, type: SocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else { throw ZMQError("zmq_socket") }
        self.handle = handle
        self.context = context
        self.type = type
        self.buffer = .allocate(capacity: 1)
        zmq_msg_init(buffer)
    }

    deinit {
        close()
        zmq_msg_close(buffer)
        buffer.deallocate()
    }

    /// Closes the socket; later calls fail with `ENOTSOCK`. Pending messages are kept for `linger` ms.
    public func close() {
        if let handle { zmq_close(handle) }
        handle = nil
    }

    private func live(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(operation(), code: ENOTSOCK) }
        return handle
    }

    // MARK: Endpoints

    public func bind(_ endpoint: String) throws(ZMQError) {
        guard zmq_bind(try live("bind \(endpoint)"), endpoint) == 0 else { throw ZMQError("bind \(endpoint)") }
    }

    public func connect(_ endpoint: String) throws(ZMQError) {
        guard zmq_connect(try live("connect \(endpoint)"), endpoint) == 0 else { throw ZMQError("connect \(endpoint)") }
    }

    public func unbind(_ endpoint: String) throws(ZMQError) {
        guard zmq_unbind(try live("unbind \(endpoint)"), endpoint) == 0 else { throw ZMQError("unbind \(endpoint)") }
    }

    public func disconnect(_ endpoint: String) throws(ZMQError) {
        guard zmq_disconnect(try live("disconnect \(endpoint)"), endpoint) == 0 else {
            throw ZMQError("disconnect \(endpoint)")
        }
    }

    /// The endpoint last bound or connected, e.g. `tcp://127.0.0.1:41234` after binding `tcp://127.0.0.1:*`.
    public var lastEndpoint: String {
        get throws(ZMQError) { try get(.lastEndpoint) }
    }

    // MARK: Options

    public func set(_ option: SocketOption<Int32>, _ value: Int32) throws(ZMQError) {
        var value = value
        try setRaw(option.code, &value, MemoryLayout<Int32>.size)
    }

    public func set(_ option: SocketOption<Int64>, _ value: Int64) throws(ZMQError) {
        var value = value
        try setRaw(option.code, &value, MemoryLayout<Int64>.size)
    }

    public func set(_ option: SocketOption<Bool>, _ value: Bool) throws(ZMQError) {
        var value: Int32 = value ? 1 : 0
        try setRaw(option.code, &value, MemoryLayout<Int32>.size)
    }

    public func set(_ option: SocketOption<String>, _ value: String) throws(ZMQError) {
        var bytes = Array(value.utf8)
        try setRaw(option.code, &bytes, bytes.count)
    }

    public func set(_ option: SocketOption<[UInt8]>, _ value: [UInt8]) throws(ZMQError) {
        var bytes = value
        try setRaw(option.code, &bytes, bytes.count)
    }

    private func setRaw(_ code: Int32, _ value: UnsafeRawPointer, _ size: Int) throws(ZMQError) {
        guard zmq_setsockopt(try live("setsockopt \(code)"), code, value, size) == 0 else {
            throw ZMQError("setsockopt \(code)")
        }
    }

    public func get(_ option: SocketOption<Int32>) throws(ZMQError) -> Int32 { try getInteger(option.code) }
    public func get(_ option: SocketOption<Int64>) throws(ZMQError) -> Int64 { try getInteger(option.code) }
    public func get(_ option: SocketOption<Bool>) throws(ZMQError) -> Bool { try getInteger(option.code) as Int32 != 0 }

    private func getInteger<T: FixedWidthInteger>(_ code: Int32) throws(ZMQError) -> T {
        var value: T = 0
        var size = MemoryLayout<T>.size
        guard zmq_getsockopt(try live("getsockopt"), code, &value, &size) == 0 else { throw ZMQError("getsockopt \(code)") }
        return value
    }

    public func get(_ option: SocketOption<String>) throws(ZMQError) -> String {
        var bytes = [UInt8](repeating: 0, count: 512)
        var size = bytes.count
        guard zmq_getsockopt(try live("getsockopt"), option.code, &bytes, &size) == 0 else {
            throw ZMQError("getsockopt \(option.code)")
        }
        // String options come back NUL-terminated.
        let end = bytes[..<size].firstIndex(of: 0) ?? size
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    public func get(_ option: SocketOption<[UInt8]>) throws(ZMQError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 256)
        var size = bytes.count
        guard zmq_getsockopt(try live("getsockopt"), option.code, &bytes, &size) == 0 else {
            throw ZMQError("getsockopt \(option.code)")
        }
        return Array(bytes[..<size])
    }

    // MARK: Sending

    /// Sends one frame; `more` says another frame of the same message follows.
    /// Returns false when `dontWait` is set and the message cannot be queued now.
    @discardableResult
    public func send(frame: [UInt8], more: Bool = false, dontWait: Bool = false) throws(ZMQError) -> Bool {
        let socket = try live("send")
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        while true {
            let rc = frame.withUnsafeBytes { zmq_send(socket, $0.baseAddress, $0.count, flags) }
            if rc >= 0 { return true }
            let error = ZMQError("send")
            if error.isInterrupted { continue }
            if error.isWouldBlock && dontWait { return false }
            throw error
        }
    }

    /// Sends a multipart message. Returns false only with `dontWait` when nothing could be queued.
    @discardableResult
    public func send(_ message: Frames, dontWait: Bool = false) throws(ZMQError) -> Bool {
        precondition(!message.isEmpty, "a message has at least one frame")
        for (index, frame) in message.enumerated() {
            // Once the first frame is queued, the rest of the message goes through atomically.
            let queued = try send(frame: frame, more: index < message.count - 1, dontWait: dontWait && index == 0)
            if !queued { return false }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one whole multipart message, waiting at most `timeoutMilliseconds` (nil: forever, 0: don't wait).
    /// Returns nil when the time passed with nothing to read, or when a signal interrupted the wait.
    public func receive(timeoutMilliseconds: Int? = nil) throws(ZMQError) -> Frames? {
        try receive(timeoutMilliseconds: timeoutMilliseconds, readingUserID: false)?.frames
    }

    /// Receives one whole multipart message like `receive(timeoutMilliseconds:)`, with the User-Id its connection
    /// was given by the context's ZAP handler (for a CURVE server: whatever that handler answered, e.g. the
    /// client's public key). The User-Id is nil on a connection without one (no ZAP handler, NULL mechanism).
    /// It belongs to the connection, so a peer cannot change it by what it sends, only by its handshake.
    public func receiveWithUserID(timeoutMilliseconds: Int? = nil) throws(ZMQError) -> (frames: Frames, userID: String?)? {
        try receive(timeoutMilliseconds: timeoutMilliseconds, readingUserID: true)
    }

    private func receive(timeoutMilliseconds: Int?, readingUserID: Bool) throws(ZMQError) -> (frames: Frames, userID: String?)? {
        let socket = try live("receive")
        // With no wait, a non-blocking receive answers the same question as a poll would, one call cheaper (the
        // coordinator and worker drain their sockets this way after every wake-up: a poll per message adds up).
        if let timeoutMilliseconds, timeoutMilliseconds != 0 {
            var item = zmq_pollitem_t(socket: socket, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0)
            let rc = zmq_poll(&item, 1, timeoutMilliseconds)
            if rc < 0 {
                let error = ZMQError("poll")
                if error.isInterrupted { return nil }
                throw error
            }
            if rc == 0 { return nil }
        }
        var message: Frames = []
        var userID: String?
        while true {
            let rc = zmq_msg_recv(buffer, socket, message.isEmpty && timeoutMilliseconds != nil ? ZMQ_DONTWAIT : 0)
            if rc < 0 {
                let error = ZMQError("receive")
                if message.isEmpty && (error.isWouldBlock || error.isInterrupted) { return nil }
                if error.isInterrupted { continue }
                throw error
            }
            // The metadata lives with the received frame, so it is read before the next receive reuses the buffer.
            // The first frame that has one answers (all frames of a message come over the same connection). The
            // string is the library's, valid while the frame is: it is copied at once.
            if readingUserID && userID == nil, let value = zmq_msg_gets(buffer, "User-Id") {
                userID = String(cString: value)
            }
            let size = zmq_msg_size(buffer)
            let frame: [UInt8] = size == 0 ? [] : Array(UnsafeRawBufferPointer(start: zmq_msg_data(buffer), count: size))
            message.append(frame)
            if zmq_msg_more(buffer) == 0 { return (message, userID) }
        }
    }

    // MARK: Pub/sub

    public func subscribe(_ prefix: [UInt8] = []) throws(ZMQError) { try set(.subscribe, prefix) }
}
