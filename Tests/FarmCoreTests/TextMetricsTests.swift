import Testing
import FarmCore
import TestSupport

@Suite("Character error rate")
struct TextMetricsTests {
    @Test("whitespace is normalized and edits are counted against the reference length")
    func basics() {
        #expect(TextMetrics.characterErrorRate(reference: "hello world", hypothesis: "hello   world\n") == 0)
        #expect(TextMetrics.characterErrorRate(reference: "abcd", hypothesis: "abxd") == 0.25)
        #expect(TextMetrics.characterErrorRate(reference: "abcd", hypothesis: "") == 1)
        #expect(TextMetrics.characterErrorRate(reference: "", hypothesis: "") == 0)
        #expect(TextMetrics.editDistance(Array("kitten"), Array("sitting")) == 3)
    }

    @Test("spaces next to Han characters are ignored, as score.py does")
    func cjkSpaces() {
        #expect(TextMetrics.normalized("道 可 道 , 非 常 道") == "道可道, 非常道".replacingOccurrences(of: ", ", with: ","))
        #expect(TextMetrics.characterErrorRate(reference: "道可道非常道", hypothesis: "道 可 道 非 常 道") == 0)
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
