import FarmCore
@testable import FarmIIIF
import FarmRuntime
import FarmStore
import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A store with one submitted (not read) PDF: a 4000 × 4000 pt page (278 million pixels at 300 dpi) and a
/// 100 × 200 pt page turned by /Rotate 90.
struct BigBoxStore {
    let folder = TemporaryDirectory("ocrfarm-render")
    let store: String
    let sources: [SourceRef]

    init() throws {
        let pdf = folder.file("big.pdf")
        try FileSystem.write(TestPDF.pages([(4000, 4000, 0), (100, 200, 90)]), to: pdf)
        store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, pdf])
        try #require(submit.status == 0, "submit: \(submit.stderr)")
        let opened = try Store(path: store, readOnly: true)
        let document = try #require(try opened.documents(after: nil, limit: 1).first)
        sources = try opened.pages(of: document.id, after: 0, limit: 10).map { try #require(try opened.source(of: $0.id)) }
        try #require(sources.count == 2)
    }
}

/// pdftoppm processes whose parent is this process, rendering a page at 5000 pixels a side (only this suite's big
/// page is made that size).
func pdftoppmChildren() -> [Int32] {
    let me = getpid()
    return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> Int32? in
        guard let pid = Int32(name), let stat = try? FileSystem.readText("/proc/\(name)/stat"),
              let close = stat.lastIndex(of: ")") else { return nil }
        let command = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard command == "pdftoppm", fields.count > 1, Int32(fields[1]) == me,
              let arguments = try? FileSystem.readText("/proc/\(name)/cmdline") else { return nil }
        return arguments.contains("-scale-to-x\u{0}5000\u{0}") ? pid : nil
    }
}

@Suite("Render limits (issue 37: the rendering bomb)", .serialized)
struct RenderLimitsTests {
    @Test("a PDF page's size comes from its box before pdftoppm runs: a 4000 × 4000 pt page is made to fit 25 MP, a turned page turned")
    func sizedFromTheBox() throws {
        let fixture = try BigBoxStore()
        let limits = RenderLimits()
        let big = fixture.sources[0], turned = fixture.sources[1]
        let bytes = try PageImages.checkedBytes(big)
        // 4000 pt at 300 dpi is 16,667 px a side; made to fit, 5,000.
        let size = try PageImages.renderSize(bytes, name: "big", page: 0, readSize: nil, maxPixels: limits.maxPixels)
        #expect(size.width == 5000 && size.height == 5000 && !size.turned, "\(size)")
        let turnedSize = try PageImages.renderSize(bytes, name: "turned", page: 1, readSize: nil, maxPixels: limits.maxPixels)
        #expect(turnedSize.width == 833 && turnedSize.height == 416 && turnedSize.turned, "100 × 200 pt turned 90°: \(turnedSize)")
        // A size it was read at is kept when it fits, and made to fit when it does not.
        let read = try PageImages.renderSize(bytes, name: "read", page: 0, readSize: (2480, 3508), maxPixels: limits.maxPixels)
        #expect(read.width == 2480 && read.height == 3508)
        let huge = try PageImages.renderSize(bytes, name: "read", page: 0, readSize: (20_000, 10_000), maxPixels: limits.maxPixels)
        #expect(huge.width * huge.height <= limits.maxPixels && abs(Double(huge.width) / Double(huge.height) - 2) < 0.01, "\(huge)")

        // The renders themselves: exactly that size, and the page's ink is there.
        let image = try PageImages.decoded(big, limits: limits)
        #expect(abs(image.width - 5000) <= 1 && abs(image.height - 5000) <= 1, "\(image.width) × \(image.height)")
        let small = try PageImages.decoded(turned, limits: limits)
        #expect(abs(small.width - 833) <= 1 && abs(small.height - 416) <= 1, "\(small.width) × \(small.height)")
    }

    @Test("a render past its time limit is killed and named (page and file), and no pdftoppm is left")
    func timeLimit() throws {
        let fixture = try BigBoxStore()
        var limits = RenderLimits()
        limits.seconds = 0.2
        let start = Date()
        let error = try #require(throws: PageImageError.self) { try PageImages.decoded(fixture.sources[0], limits: limits) }
        #expect(Date().timeIntervalSince(start) < 3, "the render was not stopped at its limit")
        #expect(error.status == 500)
        #expect(error.reason.contains("page 1 of \(fixture.folder.file("big.pdf"))"), "\(error.reason)")
        #expect(error.reason.contains("took longer than 0.2 s"), "\(error.reason)")
        #expect(pdftoppmChildren().isEmpty, "pdftoppm left running: \(pdftoppmChildren())")
    }

    @Test("requests for one page at once render it once")
    func oneRenderPerPage() throws {
        let fixture = try BigBoxStore()
        let images = PageImages()
        let seen = Mutex<[ObjectIdentifier]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            if let image = try? images.image(of: PageID(1), source: fixture.sources[1]) {
                seen.withLock { $0.append(ObjectIdentifier(image)) }
            }
        }
        let identities = seen.withLock { $0 }
        #expect(identities.count == 3)
        #expect(Set(identities).count == 1, "the page was rendered \(Set(identities).count) times")
    }
}
