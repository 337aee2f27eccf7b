import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 that forwards every connection to `127.0.0.1:target` and records every byte it carries
/// in both directions, so a test can search what crossed the wire without capturing packets.
/// Owns one listening socket and a thread per connection; `stop()` (or `deinit`) ends them.
public final class TCPRelay: @unchecked Sendable {
    // Thread-safety: `captured` and `stopped` are guarded by `lock`; the descriptors are only read after `init`.
    public let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var captured: [UInt8] = []
    private var downstream = 0
    private var stopped = false

    public init(to target: Int) {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listen(fd, 16)
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Every byte relayed so far, both directions interleaved.
    public var bytes: [UInt8] { lock.withLock { captured } }

    /// How many bytes went from the target to the clients (a coordinator's JOBs to its workers), framing included.
    public var bytesFromTarget: Int { lock.withLock { downstream } }

    /// Whether `text` appears anywhere in the relayed bytes.
    public func carried(_ text: String) -> Bool {
        let needle = Array(text.utf8), haystack = bytes
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    public func stop() { lock.withLock { stopped = true } }

    private var isStopped: Bool { lock.withLock { stopped } }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            var item = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&item, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let rc = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if rc != 0 {
                close(client)
                close(server)
                continue
            }
            Thread.detachNewThread { [self] in pump(client, server) }
        }
    }

    /// Copies bytes both ways until either side closes or the relay stops.
    private func pump(_ a: Int32, _ b: Int32) {
        defer {
            close(a)
            close(b)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !isStopped {
            var items = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&items, 2, 100) > 0 else { continue }
            for (index, item) in items.enumerated() where item.revents != 0 {
                let from = index == 0 ? a : b, to = index == 0 ? b : a
                let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                if count <= 0 { return }
                lock.withLock {
                    captured.append(contentsOf: buffer[..<count])
                    if index == 1 { downstream += count }
                }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + offset, count - offset) }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    deinit { stop() }
}
