import Testing
import FarmCore
import Leptonica
import TestSupport
import Foundation

/// Issue 18 item 6: a large page under an address-space limit is read (as gray) or refused with the numbers, and an
/// allocation that fails is never reported as damaged data.
@Suite("page memory budget (end to end)")
struct MemoryBudgetTests {
    let folder = TemporaryDirectory("e2e-memory")
    /// 300 MB of address space: a worker's slot with room for an ordinary page, not for an 81 MP one.
    static let addressSpace = 300 << 20

    /// phototest enlarged to 9000x9000 (81 MP), as `depth` 8 gray or 32-bit RGBA, encoded as PNG (a few hundred KB).
    func page81MP(rgba: Bool) throws -> String {
        let gray = try Pix(contentsOfFile: Fixtures.phototest).grayscale().scaled(x: 9000.0 / 640, y: 9000.0 / 480)
        #expect(gray.width == 9000 && gray.height == 9000)
        let image = rgba ? try gray.rgb().withAlpha(try Pix(width: 9000, height: 9000, depth: 8)) : gray
        let bytes = try image.encoded(as: .png)
        #expect(bytes.count < 4_000_000, "\(bytes.count) bytes")
        return folder.write(rgba ? "rgba81.png" : "gray81.png", bytes)
    }

    func ocrUnderLimit(_ path: String, _ extra: [String] = []) throws -> ProcessOutput {
        try Run.process("/usr/bin/prlimit", ["--as=\(Self.addressSpace)", "--", Fixtures.binary, "ocr", "--jobs", "1", path] + extra,
                        environment: ["OMP_THREAD_LIMIT": "1"])
    }

    @Test("an 81 MP RGBA PNG under a 300 MB address-space limit is refused as image-too-large with its numbers")
    func rgbaPage() throws {
        let path = try page81MP(rgba: true)
        #expect(try Pix.header(of: Array(FileManager.default.contents(atPath: path)!)).samplesPerPixel == 4)
        let output = try ocrUnderLimit(path)
        #expect(output.status == ExitStatus.noInput.rawValue || output.status == ExitStatus.dataError.rawValue, "\(output.status)")
        #expect(!output.stderr.contains("damaged"), "\(output.stderr)")
        #expect(output.stderr.contains("image-too-large"), "\(output.stderr)")
        for number in ["9000x9000", "81.0 MP", "needs about", "MB", "budget of 403 MB"] {
            #expect(output.stderr.contains(number), "\(number) in \(output.stderr)")
        }
    }

    @Test("an 81 MP gray PNG within a generous budget but over the address-space limit fails as out-of-memory, not damaged")
    func grayPage() throws {
        let path = try page81MP(rgba: false)
        // The budget lets the page through, so the decoder's allocation is what fails.
        let output = try ocrUnderLimit(path, ["--page-memory", "2048"])
        #expect(!output.stderr.contains("damaged"), "\(output.stderr)")
        if output.status == 0 {
            #expect(output.text.contains("quick") || output.text.contains("brown"), "\(output.text.prefix(200))")
        } else {
            #expect(output.stderr.contains("out-of-memory"), "\(output.stderr)")
            #expect(output.stderr.contains("9000x9000") && output.stderr.contains("MB"), "\(output.stderr)")
        }
        // At the default budget the same page is refused before any pixel is decoded, with its numbers.
        let refused = try ocrUnderLimit(path)
        #expect(refused.stderr.contains("image-too-large") && refused.stderr.contains("budget of 403 MB"), "\(refused.stderr)")
    }
}
