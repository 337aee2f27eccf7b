import Testing
import FarmCore
import TestSupport

@Suite("Image formats (end to end)")
struct FormatTests {
    static let truth = "This is a lot of 12 point text to test the\nocr code and see if it works on all types\nof file format."

    @Test("every decoder path reads the same text", arguments: [
        "cmyk.jpg", "alpha.png", "palette.png", "gray16.png", "gray16.tif", "g4.tif", "page.webp", "page.jp2", "page.pnm",
    ])
    func format(file: String) throws {
        let output = try Run.ocrfarm(["ocr", Fixtures.path("formats/" + file)])
        #expect(output.status == 0, "\(output.stderr)")
        let cer = TextMetrics.characterErrorRate(reference: Self.truth, hypothesis: output.text)
        #expect(cer < 0.03, "\(file): \(output.text)")
    }
}
