import Foundation
#if canImport(Glibc)
import Glibc
#endif

public struct HTTPClientError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A bare HTTP/1.x client over a TCP socket on 127.0.0.1, so tests control every byte of a request.
public enum HTTP {
    public struct Response: Sendable {
        public let status: Int
        public let head: String
        public let body: String
    }

    /// Everything the peer sends on `fd` until it closes the connection (or the receive timeout passes).
    public static func receiveAll(_ fd: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data += buffer[..<count]
        }
        return data
    }

    /// A TCP connection to 127.0.0.1:`port`, from the loopback address `source` (any of 127.0.0.0/8) when given,
    /// with a receive timeout of `wait` seconds (10 unless a call is known to take long: a large page rendered).
    public static func connect(port: Int, from source: String? = nil, wait: Int = 10) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: wait, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw HTTPClientError(message: "bind to \(source): errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw HTTPClientError(message: "connect to 127.0.0.1:\(port)\(source.map { " from " + $0 } ?? ""): errno \(errno)")
        }
        return fd
    }

    public static func request(port: Int, _ text: String) throws -> Response {
        let fd = try connect(port: port)
        defer { close(fd) }
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let response = String(decoding: receiveAll(fd), as: UTF8.self)
        let parts = response.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Response(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
