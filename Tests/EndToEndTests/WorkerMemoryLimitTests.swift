import Testing
import FarmCore
import FarmStore
import FarmRuntime
import Leptonica
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37 item 4: a worker under a memory limit fits its page budget to it, and a page that runs out of memory
/// anyway (a library's failed allocation, the kernel's OOM killer) fails as `out-of-memory` in the process that read
/// it; the worker and its other page go on. On main the 49 MP page aborted the whole worker (SIGABRT, no log line).
@Suite("worker memory limits (end to end)", .serialized)
struct WorkerMemoryLimitTests {
    /// 300 MB of address space, as in the issue's `ulimit -v 300000`.
    static let addressSpace = 300_000 * 1024

    /// phototest enlarged to 7000x7000 8-bit gray (49 MP), PNG: within the default page budget of 384 MiB
    /// (245 MB estimated), more than a 300 MB address space leaves.
    func bigPage(in folder: String) throws -> String {
        let gray = try Pix(contentsOfFile: Fixtures.phototest).grayscale().scaled(x: 7000.0 / 640, y: 7000.0 / 480)
        #expect(gray.width == 7000 && gray.height == 7000)
        let path = folder + "/a-big.png"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(try gray.encoded(as: .png))))
        return path
    }

    /// A farm with the big page and phototest as two documents, a coordinator that gives each page one try, and
    /// a worker with two slots started by `prefix` (e.g. prlimit) with `extra` options.
    func farm(_ prefix: [String], _ extra: [String]) throws -> (FarmHarness, BackgroundProcess) {
        let farm = FarmHarness()
        let pages = farm.folder.file("pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        _ = try bigPage(in: pages)
        try FileManager.default.copyItem(atPath: Fixtures.phototest, toPath: pages + "/b-small.tif")
        #expect(try farm.submit([pages]).status == 0)
        let port = FarmHarness.freePort()
        // The default heartbeat: two page processes busy on a loaded machine must not make the worker look lost.
        _ = try farm.startCoordinator(port: port, ["--heartbeat", "1000", "--max-attempts", "1"])
        let worker = try BackgroundProcess(prefix.first!, Array(prefix.dropFirst()) + [
            Fixtures.binary, "worker", "--connect", "tcp://127.0.0.1:\(port)", "--heartbeat", "1000", "--slots", "2"] + extra,
            logPath: farm.folder.file("worker.log"))
        return (farm, worker)
    }

    func finished(_ farm: FarmHarness, seconds: Double) throws -> [PageRecord] {
        var pages: [PageRecord] = []
        _ = try FarmHarness.wait(seconds: seconds) {
            pages = try Store(path: farm.storePath, readOnly: true).pages()
            return pages.count == 2 && pages.allSatisfy { $0.state == .done || $0.state == .failed }
        }
        return pages
    }

    func page(_ pages: [PageRecord], _ suffix: String) throws -> PageRecord {
        try #require(pages.first { $0.source.description.hasSuffix(suffix) })
    }

    @Test("under a 300 MB address space the page budget is fitted to it: the 49 MP page is refused before decoding, naming the limit; the worker and its other page go on")
    func budgetFittedToTheLimit() throws {
        let (farm, worker) = try farm(["/usr/bin/prlimit", "--as=\(Self.addressSpace)", "--"], [])
        defer { worker.terminate(); farm.stopAll() }
        let pages = try finished(farm, seconds: 120)
        let big = try page(pages, "a-big.png"), small = try page(pages, "b-small.tif")
        #expect(big.state == .failed && big.failureCode == "image-too-large", "\(big) \(worker.log)")
        let message = big.failureMessage ?? ""
        for part in ["7000x7000", "49.0 MP", "needs about 245 MB", "set by the memory limits: RLIMIT_AS 308 MB"] {
            #expect(message.contains(part), "\(part) in \(message)")
        }
        #expect(small.state == .done && small.tries == 1, "\(small) \(farm.logs) \(worker.log)")
        #expect(worker.isRunning, "\(worker.log)")
        #expect(worker.log.contains("page memory budget fitted to the memory limits"), "\(worker.log)")
    }

    @Test("under a 300 MB address space with --page-memory 2048, the 49 MP page runs out of memory: out-of-memory on that page, logged; the worker and its other page go on")
    func allocationFailure() throws {
        let (farm, worker) = try farm(["/usr/bin/prlimit", "--as=\(Self.addressSpace)", "--"], ["--page-memory", "2048"])
        defer { worker.terminate(); farm.stopAll() }
        #expect(FarmHarness.wait(seconds: 60) { Self.children(of: worker.pid).count == 2 }, "\(worker.log)")
        let processes = Set(Self.children(of: worker.pid))
        let pages = try finished(farm, seconds: 180)
        let big = try page(pages, "a-big.png"), small = try page(pages, "b-small.tif")
        #expect(big.state == .failed && big.failureCode == "out-of-memory", "\(big) \(worker.log)")
        #expect(big.failureMessage?.contains("out of memory") == true, "\(big)")
        #expect(small.state == .done && small.tries == 1, "\(small) \(worker.log)")
        #expect(worker.isRunning, "\(worker.log)")
        #expect(worker.log.contains("msg=\"page failed\"") && worker.log.contains("code=out-of-memory"), "\(worker.log)")
        #expect(!farm.logs.contains("worker-lost"), "\(farm.logs)")
        // The process that ran out of memory was replaced (a fresh heap for the next page); the other one kept.
        #expect(FarmHarness.wait(seconds: 30) {
            let now = Set(Self.children(of: worker.pid))
            return now.count == 2 && now.intersection(processes).count == 1
        }, "before \(processes), now \(Self.children(of: worker.pid))")
    }

    @Test("a page process killed in its page (as the OOM killer does at a cgroup limit) fails that page as out-of-memory; the worker reads the next page in a new one")
    func killedPageProcess() throws {
        let (farm, worker) = try farm(["/usr/bin/env"], [])
        defer { worker.terminate(); farm.stopAll() }
        // The big page goes first (submission order); once it is leased, a page process is inside it.
        #expect(try FarmHarness.wait(seconds: 60) {
            try Store(path: farm.storePath, readOnly: true).pages().contains { $0.state == .leased && $0.source.description.hasSuffix("a-big.png") }
        }, "\(farm.logs) \(worker.log)")
        usleep(300_000)
        let children = Self.children(of: worker.pid)
        #expect(children.count == 2, "page processes: \(children)")
        for child in children { kill(child, SIGKILL) }
        let pages = try finished(farm, seconds: 120)
        let big = try page(pages, "a-big.png")
        #expect(big.state == .failed && big.failureCode == "out-of-memory", "\(big) \(worker.log)")
        #expect(big.failureMessage?.contains("SIGKILL") == true, "\(big)")
        // The small page was in the other process, killed too, or read already; either way it is read in the end
        // by a page process started after the kill, and the worker is the same process.
        #expect(worker.isRunning, "\(worker.log)")
        let more = farm.folder.file("more")
        try FileManager.default.createDirectory(atPath: more, withIntermediateDirectories: true)
        // Another page than b-small (submit skips a file whose content was submitted already).
        try FileManager.default.copyItem(atPath: Fixtures.path("tesseract-testdata/eurotext.tif"), toPath: more + "/c-after.tif")
        #expect(try farm.submit([more]).status == 0)
        #expect(try FarmHarness.wait(seconds: 120) {
            try Store(path: farm.storePath, readOnly: true).pages().contains { $0.state == .done && $0.source.description.hasSuffix("c-after.tif") }
        }, "\(farm.logs) \(worker.log)")
        #expect(FarmHarness.wait(seconds: 30) { Self.children(of: worker.pid).count == 2 }, "\(worker.log)")
        // Page processes killed while idle: the next page is not blamed for it, a new process reads it.
        for child in Self.children(of: worker.pid) { kill(child, SIGKILL) }
        usleep(200_000)
        let last = farm.folder.file("last")
        try FileManager.default.createDirectory(atPath: last, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path("tesseract-testdata/phototest-rotated-180.png"), toPath: last + "/d-idle.png")
        #expect(try farm.submit([last]).status == 0)
        #expect(try FarmHarness.wait(seconds: 120) {
            try Store(path: farm.storePath, readOnly: true).pages().contains { $0.state == .done && $0.source.description.hasSuffix("d-idle.png") }
        }, "\(farm.logs) \(worker.log)")
        #expect(worker.isRunning, "\(worker.log)")
    }

    /// The processes whose parent is `pid`, from /proc.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? FileSystem.readText("/proc/\(pid)/task/\(task)/children")) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
