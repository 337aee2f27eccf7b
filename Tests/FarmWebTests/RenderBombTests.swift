import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Resident memory of a process and of its children, from /proc, in bytes.
enum Resident {
    /// VmRSS (now) or VmHWM (the peak) of `pid`; 0 when it is gone.
    static func of(_ pid: Int32, field: String = "VmRSS") -> Int {
        guard let status = try? FileSystem.readText("/proc/\(pid)/status") else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return 0
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> Int32? in
            guard let child = Int32(name), let stat = try? FileSystem.readText("/proc/\(name)/stat"),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }
    }
}

/// One GET on a fresh connection, waiting up to `seconds` for the whole answer: the status and body.
func slowGet(port: Int, _ path: String, seconds: Int) throws -> (status: Int, head: String, body: String) {
    let fd = try HTTP.connect(port: port)
    defer { close(fd) }
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8).withUnsafeBytes {
        send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
    let text = String(decoding: HTTP.receiveAll(fd), as: UTF8.self)
    let parts = text.components(separatedBy: "\r\n\r\n")
    return (Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
}

@Suite("Render bomb drill (issue 37)")
struct RenderBombTests {
    /// Issue 37's first break: four IIIF info.json requests for pages of 4000 × 4000 pt (278 million pixels each at
    /// 300 dpi) held 4.39 GB for 66 s and every server thread; /api/status did not answer in 60 s. Now each page is
    /// made to fit the render limit before pdftoppm runs, two render at a time on threads of their own, and the
    /// status API answers throughout. Scripts/drill/render-bomb runs the same against the release binary.
    @Test("four parallel renders of 4000 × 4000 pt pages: /api/status answers in < 1 s throughout, peak RSS ≤ 1 GB")
    func fourBigPages() throws {
        let folder = TemporaryDirectory("render-bomb")
        let pdf = folder.file("bomb.pdf")
        try FileSystem.write(TestPDF.pages(Array(repeating: (4000, 4000, 0), count: 4)), to: pdf)
        let store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, pdf])
        try #require(submit.status == 0, "submit: \(submit.stderr)")
        let opened = try Store(path: store, readOnly: true)
        let document = try #require(try opened.documents(after: nil, limit: 1).first)
        let pages = try opened.pages(of: document.id, after: 0, limit: 10).map(\.id.rawValue)
        try #require(pages.count == 4)

        let served = try Served(store: store, log: folder.file("serve.log"))
        let server = served.process.pid
        let done = Atomic<Bool>(false)
        // Peak memory of the server and its pdftoppm children together, sampled every 20 ms.
        let peak = Mutex<(total: Int, children: Int)>((0, 0))
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                let children = Resident.children(of: server).map { Resident.of($0) }.reduce(0, +)
                let total = Resident.of(server) + children
                peak.withLock { $0 = (max($0.total, total), max($0.children, children)) }
                usleep(20_000)
            }
        }
        sampler.start()
        // The dashboard's poll, as fast as it answers.
        let latencies = Mutex<[Double]>([])
        let statusFailures = Mutex<[String]>([])
        let poller = Thread {
            while !done.load(ordering: .relaxed) {
                let start = Date()
                do {
                    let answer = try slowGet(port: served.port, "/api/status", seconds: 30)
                    if answer.status != 200 { statusFailures.withLock { $0.append("\(answer.status)") } }
                } catch {
                    statusFailures.withLock { $0.append("\(error)") }
                }
                latencies.withLock { $0.append(Date().timeIntervalSince(start)) }
                usleep(50_000)
            }
        }
        poller.start()

        let started = Date()
        let answers = Mutex<[Int: (status: Int, head: String, body: String)]>([:])
        DispatchQueue.concurrentPerform(iterations: pages.count) { index in
            let answer = (try? slowGet(port: served.port, "/iiif/image/\(pages[index])/info.json", seconds: 120)) ?? (0, "", "")
            answers.withLock { $0[index] = answer }
        }
        let elapsed = Date().timeIntervalSince(started)
        usleep(200_000)
        done.store(true, ordering: .relaxed)
        usleep(100_000)
        let serverPeak = Resident.of(server, field: "VmHWM")

        for (index, answer) in answers.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            #expect(answer.status == 200, "page \(pages[index]): \(answer.status) \(answer.body)")
            let info = try JSON.parse(Array(answer.body.utf8))
            let width = info["width"]?.intValue ?? 0, height = info["height"]?.intValue ?? 0
            #expect(abs(width - 5000) <= 1 && abs(height - 5000) <= 1, "made to fit 25 MP: \(width) × \(height)")
        }
        let times = latencies.withLock { $0 }
        let (total, children) = peak.withLock { $0 }
        print("render bomb: 4 info.json in \(String(format: "%.1f", elapsed)) s; /api/status \(times.count) answers, "
              + "slowest \(String(format: "%.3f", times.max() ?? 0)) s; peak RSS server \(serverPeak >> 20) MB (VmHWM), "
              + "server + pdftoppm sampled \(total >> 20) MB (children \(children >> 20) MB)")
        #expect(statusFailures.withLock { $0 }.isEmpty, "\(statusFailures.withLock { $0 })")
        #expect(times.count >= Int(elapsed / 1.0), "the status poll did not run throughout: \(times.count) in \(elapsed) s")
        #expect((times.max() ?? 99) < 1, "slowest /api/status: \(times.max() ?? 99) s")
        // Under Scripts/leakcheck the server is built with AddressSanitizer, whose shadow memory and quarantine of
        // freed blocks add some hundreds of MB (server peak 814 MB there against 590 MB in the ordinary debug build): the
        // bound there is 2 GB, still well under the 4.39 GB the unbounded renderer took.
        let limit = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil ? 1 << 30 : 2 << 30
        #expect(serverPeak + children <= limit, "server peak \(serverPeak >> 20) MB + pdftoppm \(children >> 20) MB")
        #expect(total <= limit, "sampled \(total >> 20) MB")
    }
}
