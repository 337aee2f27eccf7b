import Testing
import FarmCore
@testable import FarmPipeline

/// CTC decoding and word boxes on synthetic time-step matrices.
@Suite("Neural recognizer decoding")
struct NeuralDecodingTests {
    /// A decoder over a small dictionary: index 1 "a", 2 "b", 3 "c", 4 "1", 5 "中", 6 "文", 7 the space.
    static let decoder = CTCDecoder(dictionary: "a\nb\nc\n1\n中\n文")

    /// A `steps` × classes matrix where step i gives `best[i]` probability 0.9 (or `sure[i]`) and the rest shared out,
    /// `second[i]` the runner-up when given.
    static func matrix(_ best: [Int], sure: [Int: Float] = [:], second: [Int: Int] = [:]) -> [Float] {
        let classes = decoder.classCount
        var values = [Float](repeating: 0.01, count: best.count * classes)
        for (step, index) in best.enumerated() {
            values[step * classes + index] = sure[step] ?? 0.9
            if let runnerUp = second[step] { values[step * classes + runnerUp] = 0.05 }
        }
        return values
    }

    static func decode(_ values: [Float], steps: Int) -> DecodedLine {
        values.withUnsafeBufferPointer { decoder.decode($0, steps: steps) }
    }

    @Test("the dictionary's symbols are split at line feeds only, and a combining mark stays a symbol")
    func dictionary() {
        let decoder = CTCDecoder(dictionary: "a\n\u{301}\nb")
        #expect(decoder.symbols == ["a", "\u{301}", "b", " "])
        #expect(decoder.classCount == 5)
        #expect(Self.decoder.classCount == 8)
    }

    @Test("a dictionary file with CR LF line ends (the tiny recognizer's) gives the symbols the metadata would")
    func dictionaryFile() {
        let file = "!\r\n\"\r\n\u{301}\r\na\r\n"
        let symbols = CTCDecoder(dictionary: NeuralRecognizer.dictionary(file)).symbols
        #expect(symbols == ["!", "\"", "\u{301}", "a", " "])
        #expect(NeuralRecognizer.dictionary("a\nb") == "a\nb")
        #expect(NeuralRecognizer.dictionary("a\r\nb\r\n") == "a\nb")
    }

    @Test("repeats merge, a blank between repeats keeps both, blanks vanish")
    func repeatsAndBlanks() {
        // a a _ a b b _ _ c c  → "aabc"
        let line = Self.decode(Self.matrix([1, 1, 0, 1, 2, 2, 0, 0, 3, 3]), steps: 10)
        #expect(line.text == "aabc")
        #expect(line.characters.map(\.step) == [0, 3, 4, 8])
        #expect(abs(line.confidence - 0.9) < 1e-6)
        // Nothing but blanks: an empty line with confidence 0.
        let empty = Self.decode(Self.matrix([0, 0, 0]), steps: 3)
        #expect(empty.text.isEmpty && empty.confidence == 0)
        #expect(empty.words(stepWidth: 8, cropWidth: 24).isEmpty)
    }

    @Test("the line's confidence is the mean of its characters' probabilities")
    func confidence() {
        let line = Self.decode(Self.matrix([1, 0, 2], sure: [0: 0.6, 2: 1.0]), steps: 3)
        #expect(abs(line.confidence - 0.8) < 1e-6)
    }

    @Test("word boxes: words split at spaces and script changes, centred on their steps, overlaps shared")
    func wordBoxes() {
        // Steps:  0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
        //         a _ b _ c _ ␣ _ _ 1 _  1  ␣  中 文 _
        let line = Self.decode(Self.matrix([1, 0, 2, 0, 3, 0, 7, 0, 0, 4, 0, 4, 7, 5, 6, 0]), steps: 16)
        #expect(line.text == "abc 11 中文")
        let words = line.words(stepWidth: 10, cropWidth: 160)
        #expect(words.map(\.text) == ["abc", "11", "中文"])
        // Pitches: "abc" (4 − 0) × 10 / 2 = 20, "11" (11 − 9) × 10 = 20, "中文" 10: mean 50/3.
        let pitch = 50.0 / 3
        #expect(abs(words[0].start - max(0, 5 - pitch / 2)) < 1e-9)
        #expect(abs(words[0].end - (45 + pitch / 2)) < 1e-9)
        #expect(abs(words[1].start - (95 - pitch / 2)) < 1e-9)
        // "11" ends at 115 + pitch/2 ≈ 123.3 and "中文" starts at 135 − pitch/2 ≈ 126.7: apart, untouched.
        #expect(abs(words[2].end - min(160, 145 + pitch / 2)) < 1e-9)
        // A script change without a space splits too; overlapping neighbours meet in the middle.
        let mixed = Self.decode(Self.matrix([1, 2, 5, 6]), steps: 4).words(stepWidth: 10, cropWidth: 40)
        #expect(mixed.map(\.text) == ["ab", "中文"])
        #expect(mixed[0].end == mixed[1].start)
        #expect(mixed[0].end > 15 && mixed[0].end < 25)
        #expect(mixed.allSatisfy { $0.start >= 0 && $0.end <= 40 && $0.start < $0.end })
    }

    @Test("a word's confidence is the chance that all its characters are right: the product of their probabilities, its candidates' too")
    func wordConfidence() {
        // a b c ␣ 1, "b" at 0.5 with "c" the runner-up at 0.05, the others at 0.9.
        let line = Self.decode(Self.matrix([1, 2, 3, 7, 4], sure: [1: 0.5], second: [1: 3]), steps: 5)
        let words = line.words(stepWidth: 10, cropWidth: 50)
        #expect(words.map(\.text) == ["abc", "1"])
        #expect(abs(words[0].confidence - 0.9 * 0.5 * 0.9) < 1e-6)
        #expect(abs(words[1].confidence - 0.9) < 1e-6)
        // The line's score stays the mean (the reference pipeline's, which the engine's own choices use).
        #expect(abs(line.confidence - (0.9 * 3 + 0.5 + 0.9) / 5) < 1e-6)
        let candidates = line.candidates(of: words[0].range, count: 2)
        #expect(candidates.map(\.text) == ["abc", "acc"])
        #expect(abs(candidates[0].confidence - 100 * 0.9 * 0.5 * 0.9) < 1e-4)
        #expect(abs(candidates[1].confidence - 100 * 0.9 * 0.05 * 0.9) < 1e-4)
    }

    @Test("candidates: the reading first, then the least sure character's runner-up; a blank runner-up drops it")
    func candidates() {
        let line = Self.decode(Self.matrix([1, 2, 3], sure: [1: 0.5], second: [1: 3]), steps: 3)
        let candidates = line.candidates(of: 0..<3, count: 3)
        #expect(candidates.first?.text == "abc")
        #expect(candidates.map(\.text).contains("acc"))
        #expect(candidates.count <= 3)
        #expect(zip(candidates, candidates.dropFirst()).allSatisfy { $0.confidence >= $1.confidence })
        #expect(line.candidates(of: 0..<3, count: 0).isEmpty)
        // A space as the runner-up drops the character: no candidate holds a space.
        let spaced = Self.decode(Self.matrix([1, 2, 3], sure: [1: 0.5], second: [1: 7]), steps: 3)
        let texts = spaced.candidates(of: 0..<3, count: 3).map(\.text)
        #expect(texts.prefix(2) == ["abc", "ac"] && !texts.contains { $0.contains(" ") })
    }
}
