import Testing
import FarmCore
import FarmRuntime
@testable import FarmWeb
import MicroHTTPD
import Foundation
import Glibc

/// The webhook's sender against a receiver that refuses one document: the others are not held up behind it.
@Suite("the document-done webhook: retries")
struct WebhookRetryTests {
    /// A loopback receiver that answers 500 to every body containing "stuck" and 200 to the rest, noting when; a
    /// body containing "slow" is answered 2 s late.
    final class Receiver: @unchecked Sendable {
        let lock = NSLock()
        var deliveries: [(name: String, status: Int, at: Double)] = []
        var server: HTTPServer?
        var port = 0
        let started = Date()

        init() throws {
            let (fd, port) = try WebhookTests.Receiver.listening()
            self.port = port
            server = try HTTPServer(listeningSocket: fd) { [unowned self] request in
                let body = String(decoding: request.body, as: UTF8.self)
                let status = body.contains("stuck") ? 500 : 200
                self.lock.lock()
                self.deliveries.append((body, status, Date().timeIntervalSince(self.started)))
                self.lock.unlock()
                if body.contains("slow") { usleep(2_000_000) }
                return .text(status, "ok\n")
            }
        }

        var received: [(name: String, status: Int, at: Double)] {
            lock.lock()
            defer { lock.unlock() }
            return deliveries
        }
    }

    @Test("a document the receiver refuses waits for its own retries; the documents after it are delivered at once")
    func noHeadOfLineBlocking() throws {
        let receiver = try Receiver()
        defer { receiver.server?.stop() }
        var retry = Webhook.Retry()
        retry.attempts = 3
        retry.firstDelayMilliseconds = 1500
        let webhook = try Webhook(url: "http://127.0.0.1:\(receiver.port)/hook", secret: Array("k".utf8), retry: retry)
        webhook.startSending()
        webhook.enqueue(Array("{\"name\":\"stuck\"}".utf8))
        webhook.enqueue(Array("{\"name\":\"fresh-1\"}".utf8))
        webhook.enqueue(Array("{\"name\":\"fresh-2\"}".utf8))
        // The stuck document's retries are due at about 1.5 s and 4.5 s; the fresh ones go out before the first.
        let delivered = { receiver.received.filter { $0.status == 200 }.map(\.name) }
        var waited = 0
        while delivered().count < 2 && waited < 200 { usleep(50_000); waited += 1 }
        let got = receiver.received
        #expect(delivered() == ["{\"name\":\"fresh-1\"}", "{\"name\":\"fresh-2\"}"], "\(got)")
        #expect(got.filter { $0.name.contains("stuck") }.count == 1, "delivered before the stuck one's retry: \(got)")
        // The stuck one is tried 3 times in all, then given up.
        waited = 0
        while receiver.received.filter({ $0.name.contains("stuck") }).count < 3 && waited < 200 { usleep(50_000); waited += 1 }
        usleep(300_000)
        webhook.stop()
        let stuck = receiver.received.filter { $0.name.contains("stuck") }
        #expect(stuck.count == 3, "\(receiver.received)")
        if stuck.count == 3 {
            #expect(stuck[1].at - stuck[0].at >= 1.4, "backoff: \(stuck)")
            #expect(stuck[2].at - stuck[1].at >= 2.9, "backoff doubles: \(stuck)")
        }
    }

    @Test("on stop, each body still queued gets one attempt: delivered or refused, never retried, never dropped untried")
    func stopTriesTheQueueOnce() throws {
        let receiver = try Receiver()
        defer { receiver.server?.stop() }
        var retry = Webhook.Retry()
        retry.attempts = 3
        retry.firstDelayMilliseconds = 50
        let webhook = try Webhook(url: "http://127.0.0.1:\(receiver.port)/hook", secret: Array("k".utf8), retry: retry)
        webhook.startSending()
        webhook.enqueue(Array("{\"name\":\"slow\"}".utf8))
        var waited = 0
        while receiver.received.isEmpty && waited < 200 { usleep(10_000); waited += 1 }
        // The sender is waiting for the slow answer: these two are still queued when the stop comes.
        webhook.enqueue(Array("{\"name\":\"stuck\"}".utf8))
        webhook.enqueue(Array("{\"name\":\"late\"}".utf8))
        webhook.stop()
        let got = receiver.received.map(\.name)
        #expect(got == ["{\"name\":\"slow\"}", "{\"name\":\"stuck\"}", "{\"name\":\"late\"}"], "\(got)")
    }
}
