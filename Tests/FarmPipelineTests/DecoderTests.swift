import Testing
import FarmCore
import FarmPipeline
import Leptonica
import TestSupport

@Suite("Decode stage")
struct DecoderTests {
    @Test("bad input fails with a specific code and a reason", arguments: [
        ("empty", [UInt8](), FailureCode.decodeFailed, "empty"),
        ("text", Array("just some words\n".utf8), .decodeFailed, "looks like text"),
        ("random", BadInput.randomBytes(4096), .decodeFailed, "unknown format"),
        ("bomb", BadInput.pngBomb(), .imageTooLarge, "50000x50000"),
    ])
    func badInput(name: String, bytes: [UInt8], code: FailureCode, reason: String) {
        do {
            _ = try Decoder.decode(bytes)
            Issue.record("\(name) should fail")
        } catch {
            #expect(error.code == code)
            #expect(error.stage == "decode")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    @Test("truncated PNG and TIFF data fail as decode-failed")
    func truncated() throws {
        let page = try Pix(contentsOfFile: Fixtures.phototest).grayscale()
        for format in [ImageFormat.png, .tiff(.zip)] {
            let bytes = try page.encoded(as: format)
            do {
                _ = try Decoder.decode(Array(bytes.prefix(bytes.count / 3)))
                Issue.record("\(format) truncated should fail")
            } catch {
                #expect(error.code == .decodeFailed)
            }
        }
    }

    @Test("a JPEG cut short gives the rows before the cut, the rest white, and a truncated finding",
          arguments: [("gray", false), ("color", true), ("color read as gray", true)])
    func truncatedJPEG(name: String, color: Bool) throws {
        // A color photo (SmartDoc) and a gray page; "read as gray": over the page budget, luminance only.
        let whole = color ? try Fixtures.read("smartdoc15/background01_letter001_frame_0098.jpeg")
            : try Pix(contentsOfFile: Fixtures.phototest).grayscale().encoded(as: .jpeg)
        let cut = Array(whole.prefix(whole.count / 2))
        let asGray = name == "color read as gray"
        let limits = asGray ? DecodeLimits(pageMemory: 20 << 20) : DecodeLimits()
        let full = try Decoder.decode(whole, limits: limits, keepColor: !asGray)
        let page = try Decoder.decode(cut, limits: limits, keepColor: !asGray)   // threw decode-failed before
        #expect(page.image.width == full.image.width && page.image.height == full.image.height)
        let rows = try #require(page.rowsRead)
        #expect(rows > full.image.height / 5 && rows < full.image.height, "\(rows) of \(full.image.height)")
        let truncated = try #require(page.findings["truncated"])
        #expect(truncated["rows_read"]?.intValue == rows)
        #expect(truncated["rows"]?.intValue == full.image.height)
        // Below the cut, white; above it, the file's own pixels (the last decoded rows may differ a little: libjpeg
        // smooths chroma with the row below).
        let shown = try page.image.grayPixels(), expected = try full.image.grayPixels()
        let width = shown.width
        #expect(shown.data[(rows * width)...].allSatisfy { $0 == 255 })
        let above = (rows - 16) * width
        var different = 0
        for i in 0..<above where abs(Int(shown.data[i]) - Int(expected.data[i])) > 2 { different += 1 }
        #expect(different == 0, "\(different) of \(above) pixels above the cut differ from the whole file's")
        #expect(!shown.data[..<above].allSatisfy { $0 == 255 })
        // A whole file has no such finding.
        #expect(full.rowsRead == nil && full.findings["truncated"] == nil)
    }

    @Test("a JPEG cut before any row decodes fails as decode-failed, saying so")
    func truncatedJPEGNothingDecodes() throws {
        let whole = try Fixtures.read("smartdoc15/background01_letter001_frame_0098.jpeg")
        // Just past the start of the scan (FF DA): the header reads, no row of pixels does.
        let scan = try #require((0..<(whole.count - 1)).first { whole[$0] == 0xFF && whole[$0 + 1] == 0xDA })
        do {
            let page = try Decoder.decode(Array(whole.prefix(scan + 40)))
            Issue.record("decoded \(page.rowsRead.map(String.init) ?? "all") rows")
        } catch {
            #expect(error.code == .decodeFailed)
            #expect(error.message.contains("no row decodes"), "\(error.message)")
        }
    }

    @Test("a GIF declaring 20000×20000 is refused as too large before it is decoded")
    func gifBomb() throws {
        // Leptonica's header of a GIF is the whole decoded image; this one's data is cut short, so it used to fail
        // as decode-failed after giflib had taken the memory, and a complete one would have been decoded.
        let bytes = try Fixtures.read("fuzz/decode/gif-declares-20000x20000.gif")
        do {
            _ = try Decoder.decode(bytes)
            Issue.record("over the limit")
        } catch {
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("20000x20000"), "\(error.message)")
        }
    }

    @Test("a GIF whose second image is 3000×3000 is refused: giflib holds every image's pixels at once")
    func gifSecondImage() throws {
        let bytes = try Fixtures.read("fuzz/decode/gif-second-image-3000x3000.gif")
        // Under a larger limit giflib reads it, and fails: the second image's data is that of a 128×96 one.
        do {
            _ = try Decoder.decode(bytes, limits: DecodeLimits(maxPixels: 10_000_000))
            Issue.record("the second image is damaged")
        } catch {
            #expect(error.code == .decodeFailed)
        }
        do {
            _ = try Decoder.decode(bytes, limits: DecodeLimits(maxPixels: 4_000_000))
            Issue.record("over the limit")
        } catch {
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("2 images"), "\(error.message)")
        }
    }

    @Test("the pixel limit is configurable")
    func limit() throws {
        let bytes = try Fixtures.read("tesseract-testdata/phototest.tif")
        #expect(try Decoder.decode(bytes).image.width == 640)
        do {
            _ = try Decoder.decode(bytes, limits: DecodeLimits(maxPixels: 640 * 480 - 1))
            Issue.record("over the limit")
        } catch {
            #expect(error.code == .imageTooLarge)
        }
    }

    @Test("palette, alpha and 16-bit images come out as 8 or 32 bpp without colormap or alpha")
    func normalizes() throws {
        let gray = try Pix(contentsOfFile: Fixtures.phototest).grayscale()
        let sixteen = try Pix(width: 64, height: 32, depth: 16)
        let deep = try Decoder.decode(try sixteen.encoded(as: .tiff(.zip)))
        #expect(deep.image.depth == 8)
        let gif = try Decoder.decode(try gray.encoded(as: .gif))
        #expect(!gif.image.hasColormap)
        #expect(gif.format == .gif)
        let page = try Decoder.decode(try gray.rgb().encoded(as: .png))
        #expect(page.image.depth == 32)
        #expect(page.image.samplesPerPixel == 3)
    }

    @Test("declared resolution is kept when credible")
    func resolution() throws {
        let gray = try Pix(contentsOfFile: Fixtures.phototest).grayscale()
        gray.setResolution(x: 300, y: 300)
        #expect(try Decoder.decode(try gray.encoded(as: .png)).declaredResolution == 300)
        gray.setResolution(x: 1, y: 1)
        #expect(try Decoder.decode(try gray.encoded(as: .png)).declaredResolution == 0)
    }

    /// phototest (640x480) in color, enlarged by `factor` and encoded as `format`.
    static func colorPage(_ format: ImageFormat, factor: Double = 3) throws -> [UInt8] {
        try Pix(contentsOfFile: Fixtures.phototest).grayscale().scaled(by: factor).rgb().encoded(as: format)
    }

    @Test("a page over the memory budget whose color must be kept is refused as image-too-large with the numbers")
    func overBudgetColor() throws {
        let bytes = try Self.colorPage(.png)
        let estimate = PageMemoryEstimate(header: try Pix.header(of: bytes))
        let budget = estimate.asDecoded - 1
        do {
            _ = try Decoder.decode(bytes, limits: DecodeLimits(pageMemory: budget), keepColor: true)
            Issue.record("a page over the budget was decoded")
        } catch {
            #expect(error.code == .imageTooLarge)
            #expect(!error.retryable)
            #expect(error.message.contains("1920x1440"), "\(error.message)")
            #expect(error.message.contains("needs about \((estimate.asDecoded + 999_999) / 1_000_000) MB"), "\(error.message)")
            #expect(error.message.contains("budget of \((budget + 999_999) / 1_000_000) MB"), "\(error.message)")
        }
        // Within the budget nothing changes: the page keeps its color.
        let kept = try Decoder.decode(bytes, limits: DecodeLimits(pageMemory: estimate.asDecoded), keepColor: true)
        #expect(kept.image.depth == 32)
    }

    @Test("a PNG or JPEG over the budget is read as gray when its color need not be kept", arguments: [
        ImageFormat.png, .jpeg,
    ])
    func overBudgetGray(format: ImageFormat) throws {
        let bytes = try Self.colorPage(format)
        let estimate = PageMemoryEstimate(header: try Pix.header(of: bytes))
        #expect(estimate.asGray < estimate.asDecoded)
        let limits = DecodeLimits(pageMemory: estimate.asGray)
        let page = try Decoder.decode(bytes, limits: limits, keepColor: false)
        #expect(page.image.depth == 8)
        #expect(page.image.width == 1920 && page.image.height == 1440)
        #expect(page.format == format)
        #expect(page.memoryBudget == estimate.asGray)
        // The same picture as the color decoding's luminance.
        let reference = try Decoder.decode(bytes).image.luminance()
        var differing = 0
        for y in stride(from: 0, to: 1440, by: 37) {
            for x in stride(from: 0, to: 1920, by: 41) where abs(Int(page.image.pixel(x: x, y: y)) - Int(reference.pixel(x: x, y: y))) > 8 {
                differing += 1
            }
        }
        #expect(differing == 0)
        // Below even the gray estimate the page is refused, and the message gives both estimates.
        do {
            _ = try Decoder.decode(bytes, limits: DecodeLimits(pageMemory: estimate.asGray - 1), keepColor: false)
            Issue.record("a page over both estimates was decoded")
        } catch {
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("read as gray"), "\(error.message)")
        }
    }

    @Test("the estimate covers an 81 MP RGBA PNG's decoding: libpng's rows and Leptonica's 32-bit image")
    func estimateOfLargeRGBA() {
        let header = ImageHeader(format: .png, width: 9000, height: 9000, bitsPerSample: 8, samplesPerPixel: 4,
                                 hasColormap: false)
        let estimate = PageMemoryEstimate(header: header)
        #expect(estimate.asDecoded >= 2 * 4 * 81_000_000)
        #expect(estimate.asGray >= 2 * 4 * 81_000_000)
        #expect(estimate.asDecoded > DecodeLimits.defaultPageMemory)
        // A 600 ppi A4 gray scan stays well within the default budget.
        let scan = ImageHeader(format: .png, width: 4960, height: 7016, bitsPerSample: 8, samplesPerPixel: 1, hasColormap: false)
        #expect(PageMemoryEstimate(header: scan).asDecoded < DecodeLimits.defaultPageMemory)
    }

    @Test("scale enlarges small print only as far as the page's memory budget allows")
    func scaleWithinBudget() throws {
        let small = try Pix(contentsOfFile: Fixtures.phototest).grayscale().scaled(by: 0.5)
        small.setResolution(x: 100, y: 100)
        let pipeline = PagePipeline(options: PipelineOptions(segment: false, orient: false, deskew: false, dewarp: false,
                                                             scale: true, enhance: false))
        func scaled(budget: Int?) throws -> (image: Pix, findings: JSON?) {
            var page = DecodedPage(image: small, format: .png, declaredResolution: 100)
            page.memoryBudget = budget
            let (image, context) = try pipeline.run(page)
            return (image, context.findingsJSON["scale"])
        }
        let free = try scaled(budget: nil)
        let wanted = try #require(free.findings?["factor"]?.doubleValue)
        try #require(wanted > 1.5, "phototest at half size should be enlarged, factor \(wanted)")
        #expect(free.findings?["limited_by_memory_from"] == nil)
        // Room for an enlargement of 1.3: the source beside 3 × 1 + 2 bytes per enlarged pixel.
        let pixels = small.width * small.height
        let limited = try scaled(budget: pixels + Int(1.3 * 1.3 * 5 * Double(pixels)))
        let factor = try #require(limited.findings?["factor"]?.doubleValue)
        #expect(abs(factor - 1.3) < 0.01, "factor \(factor)")
        #expect(limited.findings?["limited_by_memory_from"]?.doubleValue == wanted)
        #expect(limited.image.width <= Int((Double(small.width) * 1.31).rounded()))
    }
}
