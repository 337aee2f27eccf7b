import Testing
import MicroHTTPD
import TestSupport
import Foundation

@Suite("libmicrohttpd requests: query, head fields, peer, bounded bodies")
struct HTTPRequestTests {
    /// A server that echoes what the handler was given, one field a line.
    func echo(limit: Int = 64) throws -> (HTTPServer, Int) {
        let (fd, port) = try listeningSocket()
        var limits = HTTPServer.Limits()
        limits.maxBodyBytes = limit
        let server = try HTTPServer(listeningSocket: fd, limits: limits) { request in
            .text(200, "method=\(request.method)\npath=\(request.path)\nq=\(request.query["q"] ?? "-")\n"
                  + "n=\(request.query["n"] ?? "-")\nauth=\(request.header("AUTHORIZATION") ?? "-")\n"
                  + "loopback=\(request.peerIsLoopback) peer=\(request.peerAddress)\nbody=\(String(decoding: request.body, as: UTF8.self))\n")
        }
        return (server, port)
    }

    @Test("GET arguments are decoded, head fields found in any case, the peer is loopback")
    func queryHeadersPeer() throws {
        let (server, port) = try echo()
        defer { server.stop() }
        let answer = try HTTP.request(port: port, "GET /api/search?q=caf%C3%A9+au&n=2 HTTP/1.1\r\nHost: x\r\nauthorization: Bearer abc\r\nConnection: close\r\n\r\n")
        #expect(answer.status == 200)
        #expect(answer.body.contains("path=/api/search\n"))
        #expect(answer.body.contains("q=café au\n"), "\(answer.body)")
        #expect(answer.body.contains("n=2\n"))
        #expect(answer.body.contains("auth=Bearer abc\n"))
        #expect(answer.body.contains("loopback=true peer=127.0.0.1\n"))
        #expect(HTTPRequest(method: "GET", path: "/", peerAddress: "10.0.0.1").peerIsLoopback == false)
        #expect(HTTPRequest(method: "GET", path: "/", peerAddress: "::1").peerIsLoopback)
    }

    @Test("a POST body reaches the handler whole, sent in pieces or chunked")
    func postBody() throws {
        let (server, port) = try echo()
        defer { server.stop() }
        let plain = try HTTP.request(port: port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world")
        #expect(plain.status == 200 && plain.body.contains("body=hello world\n"), "\(plain.body)")
        let chunked = try HTTP.request(port: port, "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                       + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        #expect(chunked.status == 200 && chunked.body.contains("body=hello world\n"), "\(chunked.body)")
        let get = try HTTP.request(port: port, "GET /x HTTP/1.0\r\n\r\n")
        #expect(get.body.contains("body=\n"))
    }

    @Test("a body past the bound gets 413, declared or chunked, and the server goes on")
    func bodyBound() throws {
        let (server, port) = try echo(limit: 64)
        defer { server.stop() }
        let big = String(repeating: "a", count: 65)
        let declared = try HTTP.request(port: port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\nConnection: close\r\n\r\n" + big)
        #expect(declared.status == 413)
        let pieces = (0..<20).map { _ in "5\r\nabcde\r\n" }.joined()
        let chunked = try HTTP.request(port: port, "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                       + pieces + "0\r\n\r\n")
        #expect(chunked.status == 413)
        let exact = String(repeating: "b", count: 64)
        let fits = try HTTP.request(port: port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\nConnection: close\r\n\r\n" + exact)
        #expect(fits.status == 200 && fits.body.contains("body=\(exact)\n"))
    }

    @Test("bodies held at once share a budget: past it 503, and a finished body gives its share back")
    func bodyBudget() throws {
        let (fd, port) = try listeningSocket()
        var limits = HTTPServer.Limits()
        limits.maxBodyBytes = 64
        limits.maxBodyBytesInFlight = 64
        let server = try HTTPServer(listeningSocket: fd, limits: limits) { request in .text(200, "got \(request.body.count)\n") }
        defer { server.stop() }
        // A holds 40 bytes of its 60 and waits.
        let held = try HTTP.connect(port: port)
        defer { close(held) }
        let head = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\nConnection: close\r\n\r\n" + String(repeating: "a", count: 40)
        _ = Array(head.utf8).withUnsafeBytes { send(held, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        usleep(300_000)
        let other = try HTTP.request(port: port, "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\nConnection: close\r\n\r\n"
                                     + String(repeating: "b", count: 60))
        #expect(other.status == 503, "\(other.head)")
        _ = Array(String(repeating: "a", count: 20).utf8).withUnsafeBytes { send(held, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #expect(String(decoding: HTTP.receiveAll(held), as: UTF8.self).contains("got 60"))
        usleep(100_000)
        let after = try HTTP.request(port: port, "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\nConnection: close\r\n\r\n"
                                     + String(repeating: "c", count: 60))
        #expect(after.status == 200 && after.body == "got 60\n", "the budget came back: \(after.head)")
    }
}
