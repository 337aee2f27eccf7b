import Testing
import FarmCore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One GET of /api/status from the loopback address `source`, with `forwarded` as X-Forwarded-For: the status.
func status(port: Int, from source: String, forwarded: String?) throws -> Int {
    let fd = try HTTP.connect(port: port, from: source)
    defer { close(fd) }
    let head = "GET /api/status HTTP/1.0\r\nHost: 127.0.0.1\r\n" + (forwarded.map { "X-Forwarded-For: \($0)\r\n" } ?? "") + "\r\n"
    _ = Array(head.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    let answer = String(decoding: HTTP.receiveAll(fd), as: UTF8.self)
    return Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
}

@Suite("X-Forwarded-For (issue 37)")
struct TrustedProxyTests {
    @Test("X-Forwarded-For is ignored unless its peer is a --trusted-proxy; through one, the forwarded client decides")
    func forwardedFor() throws {
        let folder = TemporaryDirectory("trusted-proxy")
        let store = folder.file("farm.db")
        let page = folder.write("page.png", TestImages.png(width: 16, height: 16))
        let submit = try Run.ocrfarm(["submit", "--store", store, page])
        try #require(submit.status == 0, "\(submit.stderr)")
        // A documentation address (TEST-NET-1), only ever written in a header: nothing connects to it.
        let remote = "192.0.2.7"

        let plain = try Served(store: store, log: folder.file("plain.log"))
        #expect(try status(port: plain.port, from: "127.0.0.1", forwarded: nil) == 200)
        #expect(try status(port: plain.port, from: "127.0.0.1", forwarded: remote) == 200, "the header is not trusted unasked")

        let proxied = try Served(store: store, ["--trusted-proxy", "127.0.0.1"], log: folder.file("proxied.log"))
        // Through the proxy on this host, a client elsewhere needs a token, as if it came straight.
        #expect(try status(port: proxied.port, from: "127.0.0.1", forwarded: remote) == 401)
        #expect(try status(port: proxied.port, from: "127.0.0.1", forwarded: "127.0.0.1") == 200)
        // What the client put first proves nothing: the proxy's own entry (the last) counts.
        #expect(try status(port: proxied.port, from: "127.0.0.1", forwarded: "127.0.0.1, \(remote)") == 401)
        #expect(try status(port: proxied.port, from: "127.0.0.1", forwarded: nil) == 401, "through the proxy, no header: not local")
        // Another peer's header is still ignored.
        #expect(try status(port: proxied.port, from: "127.0.0.3", forwarded: remote) == 200)

        let refused = try Run.ocrfarm(["serve", "--store", store, "--listen", "127.0.0.1:0", "--trusted-proxy", "proxy.example"])
        #expect(refused.status == 64 && refused.stderr.contains("--trusted-proxy proxy.example"), "\(refused.stderr)")
    }
}
