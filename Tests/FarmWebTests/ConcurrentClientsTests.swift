import Testing
import FarmStore
import FarmWeb
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("ocrfarm serve: many clients at once")
struct ConcurrentClientsTests {
    /// The answer on `fd` (the request sent as HTTP/1.0: the server closes the connection after it).
    func answer(_ fd: Int32) -> (status: Int, body: String) {
        let text = String(decoding: HTTP.receiveAll(fd), as: UTF8.self)
        let head = text.prefix { $0 != "\r" }
        return (Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0, text)
    }

    @Test("200 connections from one loopback address open at once are all answered (issue 21), none refused")
    func twoHundredClients() throws {
        let folder = TemporaryDirectory("concurrent-clients-test")
        let path = folder.file("farm.db")
        _ = try Store(path: path)
        let server = try WebServer(listen: "127.0.0.1:0", storePath: path)
        defer { server.stop() }
        // All connected before any asks: the server holds 200 connections from 127.0.0.1 at once.
        let sockets = try (0..<200).map { _ in try HTTP.connect(port: server.port) }
        defer { sockets.forEach { close($0) } }
        for (index, fd) in sockets.enumerated() {
            let path = ["/api/status", "/api/documents?limit=5", "/api/throughput"][index % 3]
            let sent = Array("GET \(path) HTTP/1.0\r\n\r\n".utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #expect(sent > 0, "request \(index) not sent: errno \(errno)")
        }
        let answers = sockets.map(answer)
        let failed = answers.enumerated().filter { $0.element.status != 200 }
        #expect(failed.isEmpty, "\(failed.count) of 200 not answered 200; first: \(failed.first.map { "\($0.offset): \($0.element.body.prefix(200))" } ?? "")")
    }
}
