import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// When the page as decoded is read whole again: only on evidence that the first reading lost something.
extension SecondReadingTests {
    @Test("a clean page weak by its file paths, confirmed by the other binarization, is not read whole again")
    func confirmedPageNotReadWhole() throws {
        let twice = try read("reread/paths-clean.png", secondReading: true)
        let finding = try #require(twice.findings["second_reading"])
        // Weak, and the stages changed its pixels (so sameness does not spare it the whole reading).
        #expect((finding["weak_share"]?.doubleValue ?? 0) >= ReadingStrength.weakPageShare, "\(finding)")
        #expect((finding["ink_changed"]?.doubleValue ?? 0) > TesseractRecognizer.sameInk, "\(finding)")
        #expect(finding["same_image"] == nil, "\(finding)")
        // The other binarization read its weak lines; the page as decoded was not read.
        #expect(finding["variants"]?["other_binarization"] != nil, "\(finding)")
        #expect(finding["variants"]?["uncorrected"] == nil, "\(finding)")
        #expect(finding["nothing_lost"]?.arrayValue?.compactMap(\.stringValue) == ["uncorrected"], "\(finding)")
        #expect((finding["lost_ink"]?.doubleValue ?? 1) < TesseractRecognizer.lostInkShare, "\(finding)")
        let truth = try String(contentsOfFile: Fixtures.path("reread/paths-clean.gt.txt"), encoding: .utf8)
        #expect(TextMetrics.characterErrorRate(reference: truth, hypothesis: twice.text) < 0.005)
    }

    @Test("a receipt whose weak lines read differently under the other threshold is still read whole again")
    func unconfirmedReceiptReadWhole() throws {
        let twice = try read("reread/sroie-495-rules.jpg", secondReading: true)
        let finding = try #require(twice.findings["second_reading"])
        // Few lines still weak after the other binarization, yet rows the stages cut short (measured: case-folded
        // CER 10.3% read whole again, 18.4% when the still-weak share and lost ink alone gated it).
        #expect((finding["still_weak_share"]?.doubleValue ?? 1) < ReadingStrength.weakPageShare, "\(finding)")
        #expect(finding["nothing_lost"] == nil, "\(finding)")
        #expect((finding["variants"]?["uncorrected"]?["regions_replaced"]?.intValue ?? 0) > 0, "\(finding)")
    }

    @Test("lost ink: letters outside every line of a reading count, letters inside do not, specks and rules neither")
    func lostInkCounts() throws {
        let page = try Pix(encoded: Fixtures.read("reread/paths-bilevel.png"))
        let once = try read("reread/paths-bilevel.png", secondReading: false)
        // The stages left this page as it is (scale not applied), so its reading's boxes are on the file's pixels.
        #expect(once.width == page.width && once.height == page.height)
        let lines = once.lines.filter { !$0.words.isEmpty }.map(\.box)
        #expect(lines.count >= 10)
        let all = try #require(LostInk(page, toPage: .identity, lines: lines, width: page.width, height: page.height))
        #expect(all.marks > 500, "\(all.marks) marks")
        #expect(all.share < TesseractRecognizer.lostInkShare, "\(all.share) of the marks outside the lines")
        // Every other line lost: about half the letters lie outside the reading.
        let half = lines.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let lost = try #require(LostInk(page, toPage: .identity, lines: half, width: page.width, height: page.height))
        #expect(lost.marks == all.marks)
        #expect(lost.share > 0.25, "\(lost.share) of the marks outside every other line")
        // No lines: nothing to size letters by.
        #expect(LostInk(page, toPage: .identity, lines: [], width: page.width, height: page.height) == nil)
    }

    @Test("nothing lost: most weak lines confirmed, few still weak and no lost ink; otherwise read whole")
    func nothingLostRule() throws {
        let page = try Pix(encoded: Fixtures.read("reread/paths-bilevel.png"))
        let once = try read("reread/paths-bilevel.png", secondReading: false)
        let lines = once.lines.filter { !$0.words.isEmpty }.map(\.box)
        let covered = try #require(LostInk(page, toPage: .identity, lines: lines, width: page.width, height: page.height))
        let uncovered = try #require(LostInk(page, toPage: .identity, lines: Array(lines.prefix(2)), width: page.width,
                                             height: page.height))
        let confirmed = LineRereading(read: 13, replaced: 0, same: 8)
        let halfConfirmed = LineRereading(read: 4, replaced: 1, same: 2)
        #expect(TesseractRecognizer.nothingLost(covered, stillWeak: 0.1, otherBinarization: confirmed))
        #expect(!TesseractRecognizer.nothingLost(covered, stillWeak: 0.1, otherBinarization: halfConfirmed))
        #expect(!TesseractRecognizer.nothingLost(covered, stillWeak: ReadingStrength.weakPageShare, otherBinarization: confirmed))
        #expect(!TesseractRecognizer.nothingLost(uncovered, stillWeak: 0.1, otherBinarization: confirmed))
        #expect(!TesseractRecognizer.nothingLost(covered, stillWeak: 0.1, otherBinarization: nil))
    }
}
