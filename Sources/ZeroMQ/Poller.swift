import CZeroMQ

/// What to wait for on a socket.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

/// Waits on several sockets at once (`zmq_poll`). Holds its sockets; used on their thread.
public final class Poller {
    private var items: [zmq_pollitem_t] = []
    private var sockets: [Socket] = []

    public init() {}

    /// Adds a socket; returns its index for `ready(_:)`.
    @discardableResult
    public func add(_ socket: Socket, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: events.rawValue, revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Puts `socket` in the place of the socket at `index` (after a reconnect made a new one).
    public func replace(at index: Int, with socket: Socket) {
        sockets[index] = socket
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for any socket to be ready; returns how many are.
    /// A signal ends the wait early with 0.
    @discardableResult
    public func poll(timeoutMilliseconds: Int) throws(ZMQError) -> Int {
        for index in items.indices {
            items[index].revents = 0
            items[index].socket = sockets[index].handle
            // A closed socket is skipped (a null socket with a negative descriptor is ignored by poll).
            items[index].fd = sockets[index].handle == nil ? -1 : 0
        }
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32($0.count), timeoutMilliseconds) }
        if rc < 0 {
            let error = ZMQError("poll")
            if error.isInterrupted { return 0 }
            throw error
        }
        return Int(rc)
    }

    /// The events that were ready on socket `index` after the last `poll`.
    public func ready(_ index: Int) -> PollEvents { PollEvents(rawValue: items[index].revents) }

    public func isReadable(_ index: Int) -> Bool { ready(index).contains(.readable) }
}
