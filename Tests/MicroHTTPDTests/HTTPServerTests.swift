import Testing
import MicroHTTPD
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on 127.0.0.1 with a port the system chose.
func listeningSocket() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(bound == 0 && listen(fd, 64) == 0, "bind/listen: errno \(errno)")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

@Suite("libmicrohttpd server")
struct HTTPServerTests {
    @Test("answers GET with the handler's response; malformed requests get libmicrohttpd's 400")
    func answers() throws {
        let (fd, port) = try listeningSocket()
        let server = try HTTPServer(listeningSocket: fd) { request in
            .text(request.path == "/hello" ? 200 : 404, "\(request.method) \(request.path)\n", headers: [("X-Test", "yes")])
        }
        defer { server.stop() }
        let hello = try HTTP.request(port: port, "GET /hello?x=1 HTTP/1.0\r\n\r\n")
        #expect(hello.status == 200)
        #expect(hello.body == "GET /hello\n", "the path comes without its query")
        #expect(hello.head.contains("X-Test: yes"))
        #expect(try HTTP.request(port: port, "GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 404)
        #expect(try HTTP.request(port: port, "hello there\r\n\r\n").status == 400)
        let head = try HTTP.request(port: port, "HEAD /hello HTTP/1.0\r\n\r\n")
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test("30 idle connections do not delay the next request")
    func idleConnections() throws {
        let (fd, port) = try listeningSocket()
        var limits = HTTPServer.Limits()
        limits.timeoutSeconds = 30   // longer than the test: the idle ones stay open throughout
        let server = try HTTPServer(listeningSocket: fd, limits: limits) { _ in .text(200, "ok\n") }
        defer { server.stop() }
        let idle = try (0..<30).map { _ in try HTTP.connect(port: port) }
        defer { idle.forEach { close($0) } }
        // One of them sends half a request head and stops.
        _ = Array("GET /slow HTTP/1.1\r\nHost:".utf8).withUnsafeBytes { send(idle[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var times: [Double] = []
        for _ in 0..<5 {
            let start = Date()
            #expect(try HTTP.request(port: port, "GET / HTTP/1.0\r\n\r\n").body == "ok\n")
            times.append(Date().timeIntervalSince(start))
        }
        #expect(times.max()! < 1, "\(times)")
    }

    @Test("an idle connection is closed after the timeout")
    func timeout() throws {
        let (fd, port) = try listeningSocket()
        var limits = HTTPServer.Limits()
        limits.timeoutSeconds = 1
        let server = try HTTPServer(listeningSocket: fd, limits: limits) { _ in .text(200, "ok\n") }
        defer { server.stop() }
        let idle = try HTTP.connect(port: port)
        defer { close(idle) }
        let start = Date()
        var byte: UInt8 = 0
        let count = recv(idle, &byte, 1, 0)   // the client's receive timeout is 10 s
        #expect(count == 0, "the server closes the connection")
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test("stop closes the listening socket: the port can be bound again")
    func stopFreesThePort() throws {
        let (fd, port) = try listeningSocket()
        let server = try HTTPServer(listeningSocket: fd) { _ in .text(200, "ok\n") }
        #expect(try HTTP.request(port: port, "GET / HTTP/1.0\r\n\r\n").status == 200)
        server.stop()
        server.stop()   // a second stop does nothing
        #expect(throws: HTTPClientError.self) { try HTTP.request(port: port, "GET / HTTP/1.0\r\n\r\n") }
    }
}
